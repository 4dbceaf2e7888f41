// Command production-demo runs the production stack on one machine, on
// loopback only, so that a newcomer can watch real money movement: anvil
// (a local EVM chain standing for Ethereum) with the test USDC deployed,
// the MoMo fake, and one production node configured against both, its hot
// wallet funded with USDC and ether.
//
//	production-demo start -dir data/production-demo -payments bin/payments -momofake bin/momofake
//	production-demo send-usdc -dir data/production-demo -to 0x… -amount 25
//	production-demo usdc-balance -dir data/production-demo -of 0x…
//	production-demo stop -dir data/production-demo
//
// start writes <dir>/env, shell lines a client sources: PAYMENTS_URL,
// PAYMENTS_KEY (an sk_live_ key with every scope), CHAIN (the API's name of
// the chain anvil stands for), USDC_CODE (the method code of USDC on it),
// CHAIN_RPC_URL, USDC_TOKEN, CONFIRMATIONS and MOMO_URL. Every process it
// starts runs in its own session with its pid in <dir>/*.pid and its
// output in <dir>/*.log; stop ends them (SIGTERM, then SIGKILL after 15 s)
// and waits until each has exited. The data stays for the next start.
// send-usdc sends test USDC from anvil's first default account, which
// holds a million of it; usdc-balance reads an address's USDC on the chain.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"payments/ledger"
	"payments/rails/evm/devchain"
	"payments/rails/momo"
)

// What the demo configures.
const (
	chainName     = "ethereum"      // the reference's chain the local one stands for
	usdcCode      = "usdc_ethereum" // its USDC method
	confirmations = 3
	blockTime     = time.Second // anvil mines a block a second, so confirmations accrue
	hotUSDC       = 100_000     // whole USDC in the hot wallet
	hotEther      = 100
	momoCurrency  = "GHS"
)

// commands are the demo's subcommands, by name.
var commands = map[string]func(args []string) error{
	"start":        start,
	"stop":         stop,
	"send-usdc":    sendUSDC,
	"usdc-balance": usdcBalance,
}

func main() {
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		usage()
	}
	if err := commands[os.Args[1]](os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "production-demo:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: production-demo start|stop|send-usdc|usdc-balance [flags]")
	os.Exit(2)
}

// processes are the demo's, in the order stop ends them.
var processes = []string{"payments", "momofake", "anvil"}

func start(args []string) error {
	fs := flag.NewFlagSet("start", flag.ExitOnError)
	dir := fs.String("dir", "data/production-demo", "the demo's folder: data, logs, pid files, env")
	payments := fs.String("payments", "bin/payments", "the payments binary")
	momofake := fs.String("momofake", "bin/momofake", "the MoMo fake's binary")
	fs.Parse(args)
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	for _, name := range processes {
		if pid, ok := readPid(*dir, name); ok && alive(pid) {
			return fmt.Errorf("%s is already running (pid %d): make production-demo-stop first", name, pid)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	started := false
	defer func() {
		if !started {
			stopAll(*dir) // leave nothing behind a failed start
		}
	}()

	// The chain and the node's ledger go together: anvil keeps its state
	// in <dir>/anvil-state.json across a stop, so a restarted demo finds
	// the same chain its ledger recorded. Either one alone starts afresh.
	nodeDir := filepath.Join(*dir, "node")
	statePath := filepath.Join(*dir, "anvil-state.json")
	prev := readEnv(filepath.Join(*dir, "env"))
	resumed := exists(nodeDir) && exists(statePath) && prev["USDC_TOKEN"] != "" && prev["PAYMENTS_KEY"] != ""
	if !resumed {
		if exists(nodeDir) || exists(statePath) {
			fmt.Printf("starting afresh: %s had a node or a chain without the other\n", *dir)
		}
		for _, p := range []string{nodeDir, statePath, filepath.Join(*dir, "env")} {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
	}

	// The chain, its USDC and the funded hot wallet.
	hotKey := devchain.DevKey(1)
	hot := crypto.PubkeyToAddress(hotKey.PublicKey)
	chain, err := devchain.StartDetached(ctx, filepath.Join(*dir, "anvil.log"), 0,
		"--block-time", strconv.Itoa(int(blockTime/time.Second)), "--state", statePath)
	if err != nil {
		return err
	}
	if err := writePid(*dir, "anvil", chain.Pid); err != nil {
		return err
	}
	var usdc common.Address
	if resumed {
		usdc = common.HexToAddress(prev["USDC_TOKEN"])
	} else if usdc, err = chain.Setup(ctx, 1_000_000, hotUSDC, hotEther, hot); err != nil {
		return err
	}

	// The MoMo fake, calling back with POST as MTN's production does.
	momoEnv := filepath.Join(*dir, "momo.env")
	os.Remove(momoEnv)
	if _, err := spawn(*dir, "momofake", *momofake, "-listen", "127.0.0.1:0", "-environment", "mtnghana",
		"-currency", momoCurrency, "-callback-method", "POST", "-env-out", momoEnv); err != nil {
		return err
	}
	mo, err := waitEnv(ctx, momoEnv, "MOMO_URL")
	if err != nil {
		return err
	}

	// The node's addresses, chosen at the first start and kept: the
	// providers' callbacks go to its API, and Raft's configuration names
	// its Raft address.
	httpAddr, raftAddr, err := nodeAddrs(*dir)
	if err != nil {
		return err
	}
	nodeURL := "http://" + httpAddr
	providers, err := writeProviders(*dir, chain.URL, usdc, mo, nodeURL)
	if err != nil {
		return err
	}
	// The bootstrap key commits on a fresh data directory only: a resumed
	// node keeps the key the first start wrote down.
	key := "sk_live_demo" + randomHex(16)
	if resumed {
		key = prev["PAYMENTS_KEY"]
	}
	if _, err := spawn(*dir, "payments", *payments, "serve", "--stack", "production",
		"--data-dir", nodeDir, "--http-addr", httpAddr, "--raft-addr", raftAddr,
		"--providers", providers, "--bootstrap-key", key, "--deposit-poll-interval", "1s"); err != nil {
		return err
	}
	if err := waitReady(ctx, nodeURL); err != nil {
		return fmt.Errorf("%w; see %s", err, filepath.Join(*dir, "payments.log"))
	}
	env := fmt.Sprintf("PAYMENTS_URL=%s\nPAYMENTS_KEY=%s\nCHAIN=%s\nUSDC_CODE=%s\nCHAIN_RPC_URL=%s\nUSDC_TOKEN=%s\nCONFIRMATIONS=%d\nMOMO_URL=%s\n",
		nodeURL, key, chainName, usdcCode, chain.URL, usdc.Hex(), confirmations, mo["MOMO_URL"])
	if err := os.WriteFile(filepath.Join(*dir, "env"), []byte(env), 0o600); err != nil {
		return err
	}
	started = true
	fmt.Printf("the production demo is up (stop it with make production-demo-stop); source %s:\n%s",
		filepath.Join(*dir, "env"), env)
	return nil
}

// writeProviders writes the node's providers file: an evm instance on the
// local chain (payouts from the hot wallet, deposits to addresses derived
// from the demo's deposit tree) and an mtn_momo instance on the fake, each
// secret in a file of its own.
func writeProviders(dir, rpcURL string, usdc common.Address, mo map[string]string, nodeURL string) (string, error) {
	secrets := filepath.Join(dir, "secrets")
	if err := os.MkdirAll(secrets, 0o700); err != nil {
		return "", err
	}
	secret := func(name, value string) (map[string]string, error) {
		p := filepath.Join(secrets, name)
		return map[string]string{"file": p}, os.WriteFile(p, []byte(value+"\n"), 0o600)
	}
	var errs []error
	must := func(m map[string]string, err error) map[string]string {
		errs = append(errs, err)
		return m
	}
	momoSecrets := map[string]any{}
	for name, env := range map[string]string{
		momo.SecretCollectionAPIUser: "MOMO_COLLECTION_API_USER", momo.SecretCollectionAPIKey: "MOMO_COLLECTION_API_KEY",
		momo.SecretCollectionSubscriptionKey: "MOMO_COLLECTION_SUBSCRIPTION_KEY",
		momo.SecretDisbursementAPIUser:       "MOMO_DISBURSEMENT_API_USER", momo.SecretDisbursementAPIKey: "MOMO_DISBURSEMENT_API_KEY",
		momo.SecretDisbursementSubscriptionKey: "MOMO_DISBURSEMENT_SUBSCRIPTION_KEY",
	} {
		momoSecrets[name] = must(secret("momo-"+strings.ToLower(strings.ReplaceAll(env, "_", "-")), mo[env]))
	}
	evmLocal, err := devchain.Instance{RPCURL: rpcURL, USDC: usdc, Confirmations: confirmations,
		BlockTime: blockTime, StuckAfter: time.Minute}.Provider(secrets)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	file := map[string]any{"providers": []map[string]any{
		evmLocal,
		{
			"name": "momo_gh", "kind": momo.Kind,
			"methods": []map[string]any{{"code": "gh_mtn", "directions": []string{"payouts", "collections"}}},
			"settings": map[string]any{"baseUrl": mo["MOMO_URL"], "targetEnvironment": mo["MOMO_TARGET_ENVIRONMENT"],
				"currency": momoCurrency, "callbackBaseUrl": nodeURL},
			"secrets": momoSecrets,
		},
	}}
	b, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "providers.json")
	return p, os.WriteFile(p, b, 0o600)
}

// demoFlags returns the flags of the subcommand name, with -dir, the
// folder of the demo it acts on.
func demoFlags(name string) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	return fs, fs.String("dir", "data/production-demo", "the demo's folder")
}

func stop(args []string) error {
	fs, dir := demoFlags("stop")
	fs.Parse(args)
	return stopAll(*dir)
}

// stopAll ends every process the demo started, the node first (it drains),
// and waits until each has exited.
func stopAll(dir string) error {
	var errs []error
	for _, name := range processes {
		pid, ok := readPid(dir, name)
		if !ok {
			continue
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGTERM)
			deadline := time.Now().Add(15 * time.Second)
			for alive(pid) && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if alive(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				for i := 0; alive(pid) && i < 100; i++ {
					time.Sleep(50 * time.Millisecond)
				}
			}
			if alive(pid) {
				errs = append(errs, fmt.Errorf("%s (pid %d) did not exit", name, pid))
				continue
			}
			fmt.Printf("stopped %s (pid %d)\n", name, pid)
		}
		os.Remove(pidFile(dir, name))
	}
	return errors.Join(errs...)
}

// onDemoChain attaches to the chain of the demo running in dir, as its env
// file names it, and calls f with it, the USDC token's address and the env,
// all within a minute.
func onDemoChain(dir string, f func(ctx context.Context, chain *devchain.Chain, usdc common.Address, env map[string]string) error) error {
	env := readEnv(filepath.Join(dir, "env"))
	if env["CHAIN_RPC_URL"] == "" || env["USDC_TOKEN"] == "" {
		return errors.New("the demo is not running: make production-demo")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	chain, err := devchain.Attach(ctx, env["CHAIN_RPC_URL"])
	if err != nil {
		return err
	}
	return f(ctx, chain, common.HexToAddress(env["USDC_TOKEN"]), env)
}

// address reads the value of the address flag name.
func address(name, v string) (common.Address, error) {
	if !common.IsHexAddress(v) {
		return common.Address{}, fmt.Errorf("-%s %q is not an address", name, v)
	}
	return common.HexToAddress(v), nil
}

func sendUSDC(args []string) error {
	fs, dir := demoFlags("send-usdc")
	toFlag := fs.String("to", "", "the address to send to")
	amount := fs.String("amount", "", "whole or decimal USDC, e.g. 25 or 12.5")
	fs.Parse(args)
	to, err := address("to", *toFlag)
	if err != nil {
		return err
	}
	usdcCurrency, _ := ledger.LookupCurrency("USDC")
	minor, err := ledger.ParseAmount(*amount, usdcCurrency)
	if err != nil || minor <= 0 {
		return fmt.Errorf("-amount %q is not a positive amount of USDC (6 decimal places at most)", *amount)
	}
	return onDemoChain(*dir, func(ctx context.Context, chain *devchain.Chain, usdc common.Address, env map[string]string) error {
		tx, err := chain.TransferToken(ctx, devchain.DevKey(0), usdc, to, big.NewInt(int64(minor)))
		if err != nil {
			return err
		}
		fmt.Printf("sent %s USDC to %s in transaction %s; it is credited after %s confirmations\n",
			ledger.FormatMinor(minor, usdcCurrency), *toFlag, tx.Hash().Hex(), env["CONFIRMATIONS"])
		return nil
	})
}

func usdcBalance(args []string) error {
	fs, dir := demoFlags("usdc-balance")
	ofFlag := fs.String("of", "", "the address")
	fs.Parse(args)
	of, err := address("of", *ofFlag)
	if err != nil {
		return err
	}
	return onDemoChain(*dir, func(ctx context.Context, chain *devchain.Chain, usdcToken common.Address, _ map[string]string) error {
		b, err := chain.TokenBalance(ctx, usdcToken, of)
		if err != nil {
			return err
		}
		usdc, _ := ledger.LookupCurrency("USDC")
		fmt.Printf("%s USDC\n", ledger.FormatMinor(ledger.Minor(b.Int64()), usdc))
		return nil
	})
}

// spawn starts a process in its own session (it outlives this command),
// its output in <dir>/<name>.log, its pid in <dir>/<name>.pid.
func spawn(dir, name, bin string, args ...string) (int, error) {
	logf, err := os.OpenFile(filepath.Join(dir, name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", name, err)
	}
	pid := cmd.Process.Pid
	go cmd.Wait() // reap it if it exits while this command still runs
	return pid, writePid(dir, name, pid)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func pidFile(dir, name string) string { return filepath.Join(dir, name+".pid") }

func writePid(dir, name string, pid int) error {
	return os.WriteFile(pidFile(dir, name), []byte(strconv.Itoa(pid)+"\n"), 0o644)
}

func readPid(dir, name string) (int, bool) {
	b, err := os.ReadFile(pidFile(dir, name))
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil && pid > 0
}

// alive reports whether pid is a running process (not a zombie).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

// waitEnv waits until the shell-lines file at path names want, and
// returns its lines.
func waitEnv(ctx context.Context, path, want string) (map[string]string, error) {
	for {
		if env := readEnv(path); env[want] != "" {
			return env, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%s never named %s", path, want)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func readEnv(path string) map[string]string {
	env := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return env
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	return env
}

func waitReady(ctx context.Context, base string) error {
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return errors.New("the payments node did not become ready")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// nodeAddrs returns the node's API and Raft addresses from <dir>/node.addrs,
// choosing free loopback ports the first time.
func nodeAddrs(dir string) (httpAddr, raftAddr string, err error) {
	p := filepath.Join(dir, "node.addrs")
	if env := readEnv(p); env["HTTP_ADDR"] != "" && env["RAFT_ADDR"] != "" {
		return env["HTTP_ADDR"], env["RAFT_ADDR"], nil
	}
	if httpAddr, err = freeLoopbackAddr(); err != nil {
		return "", "", err
	}
	if raftAddr, err = freeLoopbackAddr(); err != nil {
		return "", "", err
	}
	return httpAddr, raftAddr, os.WriteFile(p, []byte("HTTP_ADDR="+httpAddr+"\nRAFT_ADDR="+raftAddr+"\n"), 0o644)
}

func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
