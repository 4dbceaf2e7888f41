package raft

import (
	"bytes"
	"crypto/sha256"
	"io"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	hraft "github.com/hashicorp/raft"

	"payments/ledger"
	"payments/wal"
)

// A node catching up by snapshot (new or wiped) is waited on by requests
// that must not answer from the empty state it is replacing: a key it
// does not know yet is refused only once it sees every entry committed
// before the request (WaitApplied). So when the restored index becomes
// visible, the Reader must already be the restored state's: each trial
// reads the key the moment Restore announces the index.
func TestRestoreAnnouncesItsIndexWithItsReader(t *testing.T) {
	hash := sha256.Sum256([]byte("sk_test_restored"))
	leader := openMemFSM(t)
	applyBatch(t, leader, []*hraft.Log{{Index: 1, Type: hraft.LogCommand, Data: ledger.EncodeBatch(nil, []ledger.Command{
		&ledger.CreateOrganization{At: 1, ID: "org_1", Name: "Org 1", Country: "GH", Timezone: "Africa/Accra", DefaultCurrency: "GHS",
			Key: ledger.CreateAPIKey{At: 1, ID: "key_1", OrgID: "org_1", Name: "first", Hash: string(hash[:]), Scopes: ledger.ScopesMerchant}},
	})}})
	sn, err := leader.store.NewSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	if _, err := sn.WriteDump(&dump); err != nil {
		t.Fatal(err)
	}
	sn.Close()

	for trial := 0; trial < 50; trial++ {
		wiped := openMemFSM(t)
		announced := wiped.visibleChanges.wait()
		sawKey := make(chan bool)
		go func() {
			<-announced
			_, found := wiped.Reader().APIKeyByHash(hash)
			sawKey <- found && wiped.visible.Load() >= 1
		}()
		if err := wiped.Restore(io.NopCloser(bytes.NewReader(dump.Bytes()))); err != nil {
			t.Fatal(err)
		}
		if !<-sawKey {
			t.Fatalf("trial %d: index 1 was announced while the Reader was still the empty state's", trial)
		}
	}
}

// openMemFSM is an FSM on an empty state store in memory.
func openMemFSM(t *testing.T) *fsm {
	t.Helper()
	return openTestFSM(t, "state", wal.Options{FS: vfs.NewMem()})
}

// openTestFSM is an FSM on the state store opened in dir with opts, closed
// when the test ends.
func openTestFSM(tb testing.TB, dir string, opts wal.Options) *fsm {
	tb.Helper()
	store, err := wal.OpenState(dir, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	f, err := newFSM(store)
	if err != nil {
		tb.Fatal(err)
	}
	return f
}
