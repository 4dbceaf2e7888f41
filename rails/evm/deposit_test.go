package evm_test

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"payments/rails/evm"
	"payments/rails/provider"
)

// feed polls a deposit feed, keeping its cursor as the caller commits it.
type feed struct {
	a      provider.DepositFeed
	cursor []byte
}

func (f *feed) poll(t *testing.T, ctx context.Context) []provider.Deposit {
	t.Helper()
	ds, next, err := f.a.PollDeposits(ctx, f.cursor)
	if err != nil {
		t.Fatalf("PollDeposits: %v", err)
	}
	f.cursor = next
	return ds
}

func provision(t *testing.T, ctx context.Context, a provider.DepositProvisioner, index uint32) common.Address {
	t.Helper()
	d, err := a.ProvisionDeposit(ctx, provider.DepositRequest{Owner: "cad_test", Index: index, Method: "usdc_ethereum", Currency: "USDC"})
	if err != nil {
		t.Fatal(err)
	}
	return common.HexToAddress(d.Address)
}

func (tc *testChain) deposit(t *testing.T, ctx context.Context, token, to common.Address, units int64) *types.Transaction {
	t.Helper()
	tx, err := tc.TransferToken(ctx, tc.customer, token, to, big.NewInt(units))
	if err != nil {
		t.Fatal(err)
	}
	tc.waitMined(t, ctx, tx.Hash().Hex())
	return tx
}

// A deposit to a derived address is reported when first seen, with its
// confirmations and Required, and once more when confirmed; transfers to
// other addresses are not. Both ways of filtering logs (by the node, by the
// feed) see the same.
func TestDepositConfirmedAfterRequired(t *testing.T) {
	for _, mode := range []struct {
		name        string
		topicFilter int
	}{{"node filters", 1000}, {"feed filters", -1}} {
		t.Run(mode.name, func(t *testing.T) {
			ctx := testCtx(t)
			tc := startChain(t, ctx)
			a := tc.adapter(t, map[string]any{"deposits": map[string]any{"startBlock": 1, "rangeBlocks": 4, "topicFilterMax": mode.topicFilter}})
			f := &feed{a: a}
			to := provision(t, ctx, a, 0)
			if again := provision(t, ctx, tc.adapter(t, nil), 0); again != to {
				t.Fatalf("index 0 gave %s, then %s", to, again)
			}
			usdt := tc.deposit(t, ctx, tc.usdt, provision(t, ctx, a, 1), 3_000_000)
			tc.deposit(t, ctx, tc.usdc, alice, 1_000_000)     // not ours
			tx := tc.deposit(t, ctx, tc.usdc, to, 25_500_000) // 25.5 USDC
			ds := f.poll(t, ctx)
			if len(ds) != 2 {
				t.Fatalf("first poll: %+v", ds)
			}
			// Three blocks deep at first sight: reported confirmed, once.
			if ds[0].Currency != "USDT" || ds[0].Method != "usdt_ethereum" || ds[0].Identity != "ethereum:"+usdt.Hash().Hex()+":0" || !ds[0].Confirmed() || ds[0].Confirmations != 3 {
				t.Fatalf("USDT deposit %+v", ds[0])
			}
			d := ds[1]
			want := "ethereum:" + tx.Hash().Hex() + ":0"
			if d.Identity != want || d.Currency != "USDC" || d.Method != "usdc_ethereum" || d.AmountMinor != 25_500_000 ||
				d.To != to.Hex() || d.From != addr(tc.customer).Hex() || d.Required != 3 || d.Confirmations != 1 || d.Confirmed() || d.Dropped {
				t.Fatalf("deposit %+v, want identity %s, 1 of 3 confirmations", d, want)
			}
			if ds := f.poll(t, ctx); len(ds) != 0 {
				t.Fatalf("nothing new, yet %+v", ds)
			}
			tc.mine(t, ctx, 1)
			if ds := f.poll(t, ctx); len(ds) != 0 {
				t.Fatalf("two confirmations of three, yet %+v", ds)
			}
			tc.mine(t, ctx, 1)
			ds = f.poll(t, ctx)
			if len(ds) != 1 || ds[0].Identity != want || !ds[0].Confirmed() || ds[0].Confirmations != 3 {
				t.Fatalf("after two blocks: %+v", ds)
			}
			tc.mine(t, ctx, 10) // more than a range: bounded scans catch up
			if ds := f.poll(t, ctx); len(ds) != 0 {
				t.Fatalf("reported twice: %+v", ds)
			}
		})
	}
}

// beforeReorg starts a chain with a deposit address, to, provisioned on
// adapter a, whose feed f has read the chain so far, and a snapshot to
// revert to for a reorganisation.
func beforeReorg(t *testing.T) (context.Context, *testChain, *evm.Adapter, *feed, common.Address, string) {
	ctx := testCtx(t)
	tc := startChain(t, ctx)
	a := tc.adapter(t, nil)
	f := &feed{a: a}
	to := provision(t, ctx, a, 0)
	f.poll(t, ctx)
	snap, err := tc.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, tc, a, f, to, snap
}

// A reorganisation that removes an unconfirmed deposit makes the feed
// report it Dropped, once; the rest of the feed goes on.
func TestDepositDroppedByReorg(t *testing.T) {
	ctx, tc, a, f, to, snap := beforeReorg(t)
	tx := tc.deposit(t, ctx, tc.usdc, to, 9_000_000)
	ds := f.poll(t, ctx)
	if len(ds) != 1 || ds[0].Confirmed() {
		t.Fatalf("before the reorganisation: %+v", ds)
	}
	id := ds[0].Identity
	if err := tc.Revert(ctx, snap); err != nil {
		t.Fatal(err)
	}
	// A head below the cursor's blocks, agreeing with the rest, reads as a
	// node that is behind: the poll waits and drops nothing.
	if ds, _, err := a.PollDeposits(ctx, f.cursor); !errors.Is(err, provider.ErrUnavailable) || len(ds) != 0 {
		t.Fatalf("a shorter chain: %+v, %v", ds, err)
	}
	tc.mine(t, ctx, 3) // a longer chain without the deposit
	ds = f.poll(t, ctx)
	if len(ds) != 1 || ds[0].Identity != id || !ds[0].Dropped || ds[0].Confirmed() {
		t.Fatalf("after the reorganisation: %+v", ds)
	}
	if _, err := tc.Eth.TransactionReceipt(ctx, tx.Hash()); err == nil {
		t.Fatal("the deposit is still on the chain")
	}
	if ds := f.poll(t, ctx); len(ds) != 0 {
		t.Fatalf("reported again: %+v", ds)
	}
	// A new deposit after it is reported as usual.
	tc.deposit(t, ctx, tc.usdc, to, 1_000_000)
	if ds := f.poll(t, ctx); len(ds) != 1 || ds[0].Dropped || ds[0].AmountMinor != 1_000_000 {
		t.Fatalf("a deposit after the reorganisation: %+v", ds)
	}
}

// A deposit the reorganisation moved to another block (the same signed
// transaction mined again) keeps its identity: it is neither dropped nor
// reported twice, and confirms once.
func TestDepositSurvivesReorg(t *testing.T) {
	ctx, tc, _, f, to, snap := beforeReorg(t)
	tx := tc.deposit(t, ctx, tc.usdc, to, 4_000_000)
	r1, _ := tc.Eth.TransactionReceipt(ctx, tx.Hash())
	ds := f.poll(t, ctx)
	if len(ds) != 1 {
		t.Fatalf("first sight: %+v", ds)
	}
	if err := tc.Revert(ctx, snap); err != nil {
		t.Fatal(err)
	}
	tc.mine(t, ctx, 2)
	if err := tc.Eth.SendTransaction(ctx, tx); err != nil {
		t.Fatal(err)
	}
	tc.waitMined(t, ctx, tx.Hash().Hex())
	r2, _ := tc.Eth.TransactionReceipt(ctx, tx.Hash())
	if r2.BlockHash == r1.BlockHash {
		t.Fatal("the transaction was mined in the same block again")
	}
	if ds := f.poll(t, ctx); len(ds) != 0 {
		t.Fatalf("after the reorganisation: %+v", ds)
	}
	tc.mine(t, ctx, 2)
	ds = f.poll(t, ctx)
	if len(ds) != 1 || ds[0].Identity != "ethereum:"+tx.Hash().Hex()+":0" || !ds[0].Confirmed() || ds[0].Dropped {
		t.Fatalf("confirmation: %+v", ds)
	}
}

// A new adapter resumed from the committed cursor (a restart, a new
// leader) reports nothing twice as new: a deposit reported unconfirmed
// before is reported once more, confirmed. It watches the addresses the
// cursor says were issued, though it never provisioned them itself.
func TestDepositFeedResumesFromCursor(t *testing.T) {
	ctx := testCtx(t)
	tc := startChain(t, ctx)
	small := map[string]any{"deposits": map[string]any{"startBlock": 1, "rangeBlocks": 4, "lookahead": 2}}
	a := tc.adapter(t, small)
	f := &feed{a: a}
	early := provision(t, ctx, a, 0)
	late := provision(t, ctx, a, 7) // beyond the lookahead of an adapter that knows nothing
	tc.deposit(t, ctx, tc.usdc, early, 1_000_000)
	tc.mine(t, ctx, 3)
	pending := tc.deposit(t, ctx, tc.usdc, early, 2_000_000)
	ds := f.poll(t, ctx)
	if len(ds) != 2 || !ds[0].Confirmed() || ds[1].Confirmed() {
		t.Fatalf("before the restart: %+v", ds)
	}
	// The restart: a fresh adapter, the committed cursor.
	b := tc.adapter(t, small)
	g := &feed{a: b, cursor: f.cursor}
	if ds := g.poll(t, ctx); len(ds) != 0 {
		t.Fatalf("after the restart, with nothing new: %+v", ds)
	}
	third := tc.deposit(t, ctx, tc.usdc, late, 3_000_000)
	tc.mine(t, ctx, 2)
	ds = g.poll(t, ctx)
	seen := map[string]provider.Deposit{}
	for _, d := range ds {
		seen[d.Identity] = d
	}
	if len(ds) != 2 || !seen["ethereum:"+pending.Hash().Hex()+":0"].Confirmed() || !seen["ethereum:"+third.Hash().Hex()+":0"].Confirmed() {
		t.Fatalf("after the restart: %+v", ds)
	}
	if ds := g.poll(t, ctx); len(ds) != 0 {
		t.Fatalf("reported twice: %+v", ds)
	}
	// A cursor that is not this feed's is an error, not a fresh start.
	if _, _, err := b.PollDeposits(ctx, []byte(`{"v":9}`)); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("a foreign cursor: %v", err)
	}
	// The index bound is enforced.
	if _, err := b.ProvisionDeposit(ctx, provider.DepositRequest{Index: evm.HardenedOffset}); !isRejected(err) {
		t.Fatalf("a hardened index: %v", err)
	}
}

func isRejected(err error) bool {
	return err != nil && strings.Contains(err.Error(), provider.ErrRejected.Error())
}
