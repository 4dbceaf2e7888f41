#!/usr/bin/env bash
# Installs the local chain's tools from npm, at pinned versions, into
# $PAYMENTS_EVM_TOOLS (default ${XDG_CACHE_HOME:-~/.cache}/payments/evm-tools):
# Foundry's anvil (the Linux x64 build), solc (solcjs) and OpenZeppelin's
# contracts. The rails/evm tests and the devchain command find them there.
# Idempotent: a second run with the same versions does nothing.
set -euo pipefail
dir="${PAYMENTS_EVM_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/payments/evm-tools}"
pkgs="@foundry-rs/anvil-linux-amd64@1.7.1 solc@0.8.37 @openzeppelin/contracts@5.7.0"
stamp="$dir/.installed"
anvil="$dir/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pkgs" ] && [ -x "$anvil" ]; then
	exit 0
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
	echo "evm-tools: anvil from npm is installed for Linux x86-64 only; put anvil on PATH or set PAYMENTS_ANVIL" >&2
	exit 1
fi
command -v npm >/dev/null || { echo "evm-tools: npm is needed (Debian: apt-get install npm)" >&2; exit 1; }
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
npm install --prefix "$dir" --no-audit --no-fund --save-exact --loglevel=error $pkgs
"$anvil" --version | head -n 1
echo "$pkgs" >"$stamp"
