# The payments service. `make` lists the targets.

GO       ?= go
BIN      := bin
DATA_DIR ?= ./data
HTTP_ADDR ?= 127.0.0.1:8080
RAFT_ADDR ?= 127.0.0.1:7000
SOAK_DURATION ?= 3m
SOAK_SERVER_ARGS ?=
SEED ?= 1
SIM_DURATION ?= 2m
SIM_FAULTS ?= 8s
# make cluster: node i (1..3) serves HTTP on CLUSTER_HTTP_BASE+i, Raft on
# CLUSTER_RAFT_BASE+i and metrics on CLUSTER_METRICS_BASE+i, all on loopback.
CLUSTER_HTTP_BASE    ?= 8080
CLUSTER_RAFT_BASE    ?= 7000
CLUSTER_METRICS_BASE ?= 9100
CLUSTER_KEY          ?= sk_test_localclusterkey000000001
CLUSTER_ARGS         ?=
# govulncheck, pinned; VULNDB=file:///path/to/vulndb checks against a local
# copy of the vulnerability database (the public one is vuln.go.dev).
GOVULNCHECK ?= golang.org/x/vuln/cmd/govulncheck@v1.9.0
VULNDB ?=

CHROMIUM ?= $(or $(PAYMENTS_CHROMIUM),/usr/bin/chromium)

.DEFAULT_GOAL := help
.PHONY: help build run cluster cluster-stop test test-short vet vulncheck chromium evm-tools evm-contracts production-demo production-demo-stop fuzz paybench bench soak noise bench-micro sim sim-long clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build the service binary into bin/payments
	$(GO) build -o $(BIN)/payments ./cmd/payments

run: build ## start the sandbox stack as a single node, data under ./data
	$(BIN)/payments serve --stack sandbox --data-dir $(DATA_DIR) --http-addr $(HTTP_ADDR) --raft-addr $(RAFT_ADDR)

cluster: build ## start three nodes on loopback in the background: data, logs and pid files under ./data/n1..n3
	@peers=""; for i in 1 2 3; do \
		peers="$$peers$${peers:+,}n$$i=127.0.0.1:$$(($(CLUSTER_RAFT_BASE)+i))@127.0.0.1:$$(($(CLUSTER_HTTP_BASE)+i))"; \
	done; \
	for i in 1 2 3; do \
		dir=$(DATA_DIR)/n$$i; mkdir -p $$dir; \
		if [ -f $$dir/payments.pid ] && kill -0 $$(cat $$dir/payments.pid) 2>/dev/null; then \
			echo "n$$i is already running (pid $$(cat $$dir/payments.pid))"; continue; \
		fi; \
		nohup $(BIN)/payments serve --stack sandbox --node-id n$$i --data-dir $$dir --peers "$$peers" \
			--http-addr 127.0.0.1:$$(($(CLUSTER_HTTP_BASE)+i)) --raft-addr 127.0.0.1:$$(($(CLUSTER_RAFT_BASE)+i)) \
			--metrics-addr 127.0.0.1:$$(($(CLUSTER_METRICS_BASE)+i)) --bootstrap-key $(CLUSTER_KEY) $(CLUSTER_ARGS) \
			$$([ -d $$dir/wal ] || echo --bootstrap) \
			>>$$dir/stdout.log 2>>$$dir/payments.log </dev/null & echo $$! >$$dir/payments.pid; \
	done; \
	for i in 1 2 3; do \
		for t in $$(seq 100); do \
			curl -sf -o /dev/null http://127.0.0.1:$$(($(CLUSTER_HTTP_BASE)+i))/readyz && break; \
			if ! kill -0 $$(cat $(DATA_DIR)/n$$i/payments.pid) 2>/dev/null; then \
				echo "n$$i exited; its log:"; tail -n 20 $(DATA_DIR)/n$$i/payments.log; exit 1; \
			fi; \
			sleep 0.2; \
		done; \
		curl -sf -o /dev/null http://127.0.0.1:$$(($(CLUSTER_HTTP_BASE)+i))/readyz || { echo "n$$i is not ready after 20s: see $(DATA_DIR)/n$$i/payments.log"; exit 1; }; \
	done; \
	echo "three nodes are up (any of them takes any request; followers forward writes to the leader):"; \
	for i in 1 2 3; do \
		echo "  n$$i  API http://127.0.0.1:$$(($(CLUSTER_HTTP_BASE)+i))  metrics http://127.0.0.1:$$(($(CLUSTER_METRICS_BASE)+i))/metrics  log $(DATA_DIR)/n$$i/payments.log"; \
	done; \
	echo "API key: $(CLUSTER_KEY)"; \
	echo "try:     curl -s http://127.0.0.1:$$(($(CLUSTER_HTTP_BASE)+1))/readyz"; \
	echo "stop:    make cluster-stop"

cluster-stop: ## stop the nodes make cluster started (SIGTERM: each drains), keeping their data
	@for i in 1 2 3; do \
		pidfile=$(DATA_DIR)/n$$i/payments.pid; \
		[ -f $$pidfile ] || continue; \
		pid=$$(cat $$pidfile); \
		if kill -TERM $$pid 2>/dev/null; then \
			for t in $$(seq 150); do kill -0 $$pid 2>/dev/null || break; sleep 0.2; done; \
			if kill -0 $$pid 2>/dev/null; then echo "n$$i (pid $$pid) still running after 30s; kill it by hand"; continue; fi; \
			echo "stopped n$$i (pid $$pid)"; \
		fi; \
		rm -f $$pidfile; \
	done

vet: ## go vet and gofmt
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1)

vulncheck: ## known vulnerabilities in the code the build uses (govulncheck; VULNDB=file:///… for a local database)
	$(GO) run $(GOVULNCHECK) $(if $(VULNDB),-db $(VULNDB)) ./...

test: vet chromium ## run every test, with the race detector (the browser tests need Chromium)
	$(GO) test -race -timeout 9m ./...

test-short: ## unit tests only (skips end-to-end tests), no race detector
	$(GO) test -short ./...

chromium: ## install Debian's chromium for the browser tests when it is missing (as root, with apt-get)
	@if [ ! -x "$(CHROMIUM)" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing chromium for the browser tests"; \
			DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
		else \
			echo "the browser tests need Chromium at $(CHROMIUM): install Debian's chromium package as root" \
				"(apt-get install chromium), or point PAYMENTS_CHROMIUM at another build"; \
			exit 1; \
		fi; \
	fi

evm-tools: ## install anvil, solc and OpenZeppelin's contracts from npm for the local-chain tests of rails/evm (idempotent; folder: PAYMENTS_EVM_TOOLS, default ~/.cache/payments/evm-tools)
	bash rails/evm/devchain/tools.sh

DEMO_DIR ?= data/production-demo

production-demo: build evm-tools ## start anvil with test USDC, the MoMo fake and a production node against both, in the background on loopback; writes $(DEMO_DIR)/env
	$(GO) build -o $(BIN)/momofake ./rails/momo/momofake/cmd/momofake
	$(GO) build -o $(BIN)/production-demo ./cmd/production-demo
	$(BIN)/production-demo start -dir $(DEMO_DIR) -payments $(BIN)/payments -momofake $(BIN)/momofake

production-demo-stop: ## stop what make production-demo started (its data stays under $(DEMO_DIR))
	$(GO) build -o $(BIN)/production-demo ./cmd/production-demo
	$(BIN)/production-demo stop -dir $(DEMO_DIR)

evm-contracts: evm-tools ## recompile the test tokens in rails/evm/devchain/contracts with the pinned solc; commit the result
	$(GO) test ./rails/evm/devchain -run TestContractsCurrent -update -count=1

fuzz: ## run each fuzz test for 30s
	$(GO) test ./ledger -run XXX -fuzz FuzzParseAmount -fuzztime 30s
	$(GO) test ./ledger -run XXX -fuzz FuzzDecodeBatch -fuzztime 30s
	$(GO) test ./http -run XXX -fuzz FuzzDecodePayoutBody -fuzztime 30s
	$(GO) test ./actors -run XXX -fuzz FuzzWebhookURLPolicy -fuzztime 30s
	$(GO) test ./wal -run XXX -fuzz FuzzDecodeLogRecord -fuzztime 30s -fuzzminimizetime 0x
	$(GO) test ./rails -run XXX -fuzz FuzzValidateAddress -fuzztime 30s
	$(GO) test ./rails -run XXX -fuzz FuzzBase58 -fuzztime 30s
	$(GO) test ./rails/evm -run XXX -fuzz FuzzDecodeCursor -fuzztime 30s
	$(GO) test ./ledger -run XXX -fuzz FuzzDepositCommands -fuzztime 30s
	$(GO) test ./http -run XXX -fuzz FuzzParseUpload -fuzztime 30s
	$(GO) test ./http -run XXX -fuzz FuzzTransactionID -fuzztime 30s
	$(GO) test ./http -run XXX -fuzz FuzzDecodeRequestRecord -fuzztime 30s
	$(GO) test ./http/redact -run XXX -fuzz FuzzRedactBody -fuzztime 30s
	$(GO) test ./http/redact -run XXX -fuzz FuzzRedactFastAgrees -fuzztime 30s
	$(GO) test ./http/dashauth -run XXX -fuzz FuzzVerifyPassword -fuzztime 30s
	$(GO) test ./wal/requestlog -run XXX -fuzz FuzzDecodeEntry -fuzztime 30s

paybench: build ## build the load generator into bin/paybench (and the service, and the bare server it compares with)
	$(GO) build -o $(BIN)/paybench ./bench/cmd/paybench
	$(GO) build -o $(BIN)/barepay ./bench/cmd/barepay

bench: paybench ## load a fresh single node with the workloads (uniform, hot_account, replay), then the bare server (bench/cmd/barepay) with the same; prints each as a share of the bare server
	$(BIN)/paybench -spawn $(BIN)/payments -baseline $(BIN)/barepay $(BENCH_ARGS)

soak: paybench ## uniform for SOAK_DURATION (3m) in 5s windows with the server RSS, snapshots every 20s, plus SOAK_SERVER_ARGS; JSON to bench/results/soak.json
	@mkdir -p bench/results
	$(BIN)/paybench -spawn $(BIN)/payments -workload uniform -duration $(SOAK_DURATION) -requests 1000000000 -window 5s \
		-server-args "--snapshot-interval 20s $(SOAK_SERVER_ARGS)" -json bench/results/soak.json

noise: paybench ## the noisy neighbour: uniform alone, then beside 16 goroutines exporting another organization's history; compare the p99s
	$(BIN)/paybench -spawn $(BIN)/payments -workload uniform -duration 20s
	$(BIN)/paybench -spawn $(BIN)/payments -workload uniform -duration 20s -noise-exports 16

bench-micro: ## Go benchmarks of the ledger, the WAL and the HTTP path
	$(GO) test -run XXX -bench . -benchmem ./ledger ./wal ./http

sim: ## replay one seed of the cluster simulation (SEED=n), logging each fault
	$(GO) test ./bench/sim -run 'TestSim$$' -count=1 -v -sim.seed $(SEED) -sim.v

sim-long: ## run simulation seeds for SIM_DURATION (2m), SIM_FAULTS (8s) of faults each; reports seeds run and faults by kind
	$(GO) test ./bench/sim -run 'TestSimLong$$' -count=1 -v -timeout 0 -sim.long $(SIM_DURATION) -sim.faults $(SIM_FAULTS)

clean: ## remove build output (not ./data)
	rm -rf $(BIN)
