// Package evm is the provider adapter for ERC-20 stablecoins (USDC, USDT)
// on EVM chains. Ethereum, Base, Polygon and BSC are configurations of one
// adapter (chain id, node URL, token addresses and decimals, confirmations,
// gas policy: see Settings); Factory builds one for a provider instance of
// kind "evm". An Adapter implements provider.Payouter, provider.Restorer,
// provider.DepositProvisioner, provider.DepositFeed and provider.Balancer.
//
// # Payouts
//
// PreparePayout signs an ERC-20 transfer from the hot wallet: gas from
// eth_estimateGas plus a margin, the tip from eth_feeHistory (or the node's
// suggestion), the fee cap twice the next base fee plus the tip, held to a
// configured ceiling; no price is hard-coded. Prepared.Key is the
// transaction hash, Payload the signed bytes (after a replacement, every
// transaction of the payout: see payload.go). The caller commits it, then
// SubmitPayout broadcasts exactly those bytes; "already known" and a nonce
// already used by this very transfer are success. PayoutStatus is
// processing until a receipt has the configured confirmations, then
// completed when the receipt succeeded and holds the token's Transfer log
// (so a token whose transfer returns nothing works), or failed with the
// revert's reason. A transaction at the head of the hot wallet's queue and
// unmined for StuckAfter comes back with an Outcome.Replacement: the same
// nonce, both fee fields raised by at least bumpPercent (nodes require
// 10 %). Only one transaction of a nonce can be mined; whichever of a
// payout's is mined is reported.
//
// # Nonces
//
// The rule (nonce.go): a new payout takes the lowest nonce at or above the
// node's pending count that no transaction of ours holds. Transactions hold
// their nonce once this process signed or was shown them (Submit, Status,
// Restore). The caller calls Restore with every committed, unfinished
// Prepared when it starts leading, before its first PreparePayout, because
// a committed but unsent transaction is invisible to the node. Failure
// modes, each safe for money: a leader that skips Restore may give a
// committed, unsent transaction's nonce to a new payout; whichever of the
// two is mined first wins and the other fails ("nonce used by another
// transaction") once that block is confirmed: its money never moved. A
// nonce handed out by a PreparePayout whose result was never committed is
// a gap: later transactions wait behind it until the hold lapses
// (nonces.holdTimeout, 2 minutes) and the next PreparePayout fills it. The
// hot wallet must be used by this instance alone: a transaction sent from
// it by anything else takes a nonce and fails a payout the same way.
// PayoutStatus must be given the latest committed Prepared, which holds
// every transaction of the payout; given an older one, it finds a later
// replacement only through this process's memory.
//
// # Deposits
//
// ProvisionDeposit derives index i's address from the deposit xpub alone
// (xpub/0/i for an account-level xpub, m/44'/60'/0'; xpub/i one level
// lower): the service holds no key that can move deposits. PollDeposits
// scans Transfer logs of the configured tokens to watched addresses (the
// indexes issued so far plus a lookahead) in bounded block ranges and
// reports each with Identity "<chain>:<tx hash>:<log index>", its
// confirmations and Required. Its cursor (JSON, committed by the caller)
// keeps the next block, the hashes of the latest confirmations +
// reorgDepthMax blocks and the reported, unconfirmed deposits; a
// reorganisation is noticed by those hashes, after a restart too, the scan
// rewinds to the last common block, and a deposit the rescan up to the
// head does not find again is reported Dropped. Deeper reorganisations stop
// the feed with an error. A dropped transfer that a later block includes
// again carries the same identity: the caller decides what a second
// sighting of a failed identity means.
//
// Sweeper (sweep.go) moves deposit addresses' tokens to the hot wallet. It
// is built apart from the service, from the deposit xprv and a gas wallet
// key that Factory refuses: it funds each address with exactly the gas its
// transfers may cost from the gas wallet, then signs with the address's
// derived key.
//
// # Concurrency
//
// Adapter and Sweeper are safe for concurrent use. Polls are serialized,
// and so are sweeps. Nonces are handed out under a mutex; the node is not
// asked while it is held.
//
// # Never
//
// Never log or return a private key, an xprv or the node URL (it may hold
// an API key: give it as the rpcUrl secret). Never convert money through
// floating point: amounts that do not convert exactly to the token's
// decimals are refused; deposits round down (dust below the currency's
// precision is not credited). Never re-sign a committed payout at another
// nonce: only same-nonce replacements, so at most one transfer is mined.
// Never report completed before the configured confirmations, nor believe a
// node before its chain id matched the configuration.
//
// Tron and Solana are not EVM chains and have no local node installable
// here: their methods (usdt_tron, usdc_solana, …) are unavailable in
// production until an adapter of their own is configured for them.
package evm
