package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"payments/rails/evm/devchain"
)

// The README's walkthrough, run: the demo starts, a USDC transfer to an
// address the API issued is credited once after the confirmations, a USDC
// payout through the API moves the token on the chain, a MoMo collection
// and payout complete through the fake's callbacks, and stop leaves
// nothing running.
func TestProductionDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	devchain.SkipWithoutAnvil(t)
	bin := t.TempDir()
	build := func(name, pkg string) string {
		out := filepath.Join(bin, name)
		cmd := exec.Command(runtime.GOROOT()+"/bin/go", "build", "-o", out, pkg)
		cmd.Dir = "../.."
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
		return out
	}
	demo := build("production-demo", "./cmd/production-demo")
	payments := build("payments", "./cmd/payments")
	momofake := build("momofake", "./rails/momo/momofake/cmd/momofake")
	dir := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		b, err := exec.Command(demo, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("production-demo %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	run("start", "-dir", dir, "-payments", payments, "-momofake", momofake)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			exec.Command(demo, "stop", "-dir", dir).Run()
		}
	})
	env := readEnv(filepath.Join(dir, "env"))
	for _, k := range []string{"PAYMENTS_URL", "PAYMENTS_KEY", "CHAIN", "USDC_CODE", "CHAIN_RPC_URL", "USDC_TOKEN", "CONFIRMATIONS", "MOMO_URL"} {
		if env[k] == "" {
			t.Fatalf("the env file has no %s: %v", k, env)
		}
	}
	if !strings.HasPrefix(env["PAYMENTS_KEY"], "sk_live_") {
		t.Fatalf("PAYMENTS_KEY %q is not a live key", env["PAYMENTS_KEY"])
	}
	api := func(method, path string, body any, want int) map[string]any {
		t.Helper()
		var rd *bytes.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, _ := http.NewRequest(method, env["PAYMENTS_URL"]+path, rd)
		req.Header.Set("Authorization", "Bearer "+env["PAYMENTS_KEY"])
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d %v, want %d", method, path, resp.StatusCode, out, want)
		}
		return out
	}
	field := func(m map[string]any, path ...string) string {
		var v any = m
		for _, p := range path {
			o, _ := v.(map[string]any)
			v = o[p]
		}
		s, _ := v.(string)
		return s
	}
	waitFor := func(what string, timeout time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(timeout)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s", what, timeout)
			}
			<-tick.C
		}
	}
	balance := func(currency string) string {
		for _, a := range api("GET", "/v1/accounts", nil, 200)["data"].([]any) {
			if a := a.(map[string]any); a["currency"] == currency {
				return a["availableBalance"].(string)
			}
		}
		return ""
	}

	// A deposit: pending once seen, credited once after the confirmations.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	chain, err := devchain.Attach(ctx, env["CHAIN_RPC_URL"])
	if err != nil {
		t.Fatal(err)
	}
	confirmations, err := strconv.ParseUint(env["CONFIRMATIONS"], 10, 64)
	if err != nil || confirmations < 2 {
		t.Fatalf("CONFIRMATIONS=%q: the demo must wait for blocks", env["CONFIRMATIONS"])
	}
	addr := field(api("POST", "/v1/crypto-addresses", map[string]any{"currency": "USDC", "chain": env["CHAIN"]}, 201), "address", "address")
	out := run("send-usdc", "-dir", dir, "-to", addr, "-amount", "250")
	hash := sentHash.FindStringSubmatch(out)
	if !strings.Contains(out, "sent 250.000000 USDC") || hash == nil {
		t.Fatalf("send-usdc: %s", out)
	}
	receipt, err := chain.Wait(ctx, common.HexToHash(hash[1]))
	if err != nil {
		t.Fatal(err)
	}
	mined := receipt.BlockNumber.Uint64()
	sawPending := false
	waitFor("the deposit credited", 60*time.Second, func() bool {
		cols := api("GET", "/v1/collections", nil, 200)["data"].([]any)
		credited := balance("USDC") == "250.000000"
		head, err := chain.Head(ctx) // read after the balance: it was at least this deep when credited
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case len(cols) > 1:
			t.Fatalf("one transfer, %d collections: %v", len(cols), cols)
		case len(cols) == 1 && cols[0].(map[string]any)["status"] == "pending":
			sawPending = true
		case credited && head+1 < mined+confirmations:
			t.Fatalf("credited with the transfer %d blocks deep, before its %d confirmations", head+1-mined, confirmations)
		}
		return credited
	})
	if !sawPending {
		t.Error("the deposit was never seen pending before it was credited")
	}
	// Credited once: blocks later, one completed collection, one credit.
	if err := chain.Mine(ctx, 3); err != nil {
		t.Fatal(err)
	}
	waitFor("the feed past the new blocks", 30*time.Second, func() bool {
		cols := api("GET", "/v1/collections", nil, 200)["data"].([]any)
		return len(cols) == 1 && cols[0].(map[string]any)["status"] == "completed"
	})
	if got := balance("USDC"); got != "250.000000" {
		t.Fatalf("USDC balance %s after one deposit of 250", got)
	}

	// A payout: an ERC-20 transfer on the chain, completed once confirmed.
	to := "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
	before := run("usdc-balance", "-dir", dir, "-of", to)
	id := field(api("POST", "/v1/payouts", map[string]any{
		"to":                map[string]any{"code": env["USDC_CODE"], "currency": "USDC", "address": to, "amount": "100"},
		"externalReference": "demo-usdc-1"}, 201), "payout", "id")
	waitFor("the USDC payout completed", 60*time.Second, func() bool {
		return field(api("GET", "/v1/payouts/"+id, nil, 200), "payout", "status") == "completed"
	})
	after := run("usdc-balance", "-dir", dir, "-of", to)
	if usdcAmount(t, after)-usdcAmount(t, before) != 100_000_000 {
		t.Fatalf("the recipient's USDC went from %s to %s, want 100 more", strings.TrimSpace(before), strings.TrimSpace(after))
	}

	// MoMo: a collection and a payout, each completed through the fake's
	// callbacks.
	col := field(api("POST", "/v1/collections", map[string]any{
		"from": map[string]any{"accountNumber": "233241234567", "code": "gh_mtn", "amount": "500.00", "currency": "GHS"},
		"to":   map[string]any{"currency": "GHS"}, "externalReference": "demo-col-1"}, 201), "collection", "id")
	waitFor("the MoMo collection completed", 30*time.Second, func() bool {
		return field(api("GET", "/v1/collections/"+col, nil, 200), "collection", "status") == "completed"
	})
	pay := field(api("POST", "/v1/payouts", map[string]any{
		"to":                map[string]any{"code": "gh_mtn", "currency": "GHS", "accountNumber": "233241234567", "amount": "100.00"},
		"externalReference": "demo-momo-1"}, 201), "payout", "id")
	waitFor("the MoMo payout completed", 30*time.Second, func() bool {
		return field(api("GET", "/v1/payouts/"+pay, nil, 200), "payout", "status") == "completed"
	})

	// Stop: every process gone, its pid file removed.
	pids := map[string]int{}
	for _, name := range processes {
		pid, ok := readPid(dir, name)
		if !ok {
			t.Fatalf("no pid file for %s", name)
		}
		pids[name] = pid
	}
	run("stop", "-dir", dir)
	stopped = true
	for name, pid := range pids {
		if alive(pid) {
			t.Errorf("%s (pid %d) still runs after stop", name, pid)
		}
		if _, err := os.Stat(pidFile(dir, name)); err == nil {
			t.Errorf("%s's pid file is still there", name)
		}
	}
}

// sentHash finds the transaction hash in send-usdc's output.
var sentHash = regexp.MustCompile(`in transaction (0x[0-9a-fA-F]{64})`)

// usdcAmount reads usdc-balance's "<amount> USDC" (six decimal places,
// as ledger.FormatMinor writes them) in minor units.
func usdcAmount(t *testing.T, out string) int64 {
	t.Helper()
	f := strings.Fields(out)
	if len(f) != 2 || f[1] != "USDC" {
		t.Fatalf("usdc-balance: %q", out)
	}
	whole, frac, ok := strings.Cut(f[0], ".")
	if !ok || len(frac) != 6 {
		t.Fatalf("usdc-balance: %q", out)
	}
	m, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		t.Fatalf("usdc-balance: %q: %v", out, err)
	}
	return m
}
