package publicids

import (
	"strings"
	"testing"

	"payments/ledger"
	"payments/ledger/ledgertest"
)

func TestIDs(t *testing.T) {
	a := New([]byte("deployment-a-id-key-of-32-bytes!"))
	b := New([]byte("deployment-b-id-key-of-32-bytes!"))
	if New([]byte("deployment-a-id-key-of-32-bytes!")) != a {
		t.Fatal("the same key makes a second maker")
	}
	for _, seq := range []uint64{1, 2, 3, 1000, 1 << 40, ^uint64(0)} {
		for _, form := range []struct {
			name   string
			make   func(*IDs, uint64) string
			parse  func(*IDs, string) (uint64, bool)
			prefix string
		}{
			{"entry", (*IDs).EntryID, (*IDs).ParseEntryID, "le_"},
			{"event", (*IDs).EventID, (*IDs).ParseEventID, "wev_"},
		} {
			id := form.make(a, seq)
			if !strings.HasPrefix(id, form.prefix) || len(id) != len(form.prefix)+publicIDLen {
				t.Fatalf("%s %d: id %q", form.name, seq, id)
			}
			if got, ok := form.parse(a, id); !ok || got != seq {
				t.Fatalf("%s %q parses to %d, %v; want %d", form.name, id, got, ok, seq)
			}
			// Another deployment neither makes nor reads it.
			if other := form.make(b, seq); other == id {
				t.Fatalf("%s %d: two keys make the same id %q", form.name, seq, id)
			}
			if got, ok := form.parse(b, id); ok {
				t.Fatalf("%s %q parses under another key to %d", form.name, id, got)
			}
			// Without the key it is not the public scramble of any number.
			if _, ok := form.parse(nil, id); ok {
				t.Fatalf("%s %q decodes without the key", form.name, id)
			}
			// The old form stays accepted on input.
			old := form.make(nil, seq)
			if got, ok := form.parse(a, old); !ok || got != seq {
				t.Fatalf("%s old form %q parses to %d, %v", form.name, old, got, ok)
			}
		}
	}
	// An entry id is not an event id, and a changed character is no id.
	id := a.EntryID(7)
	if _, ok := a.ParseEventID("wev_" + id[3:]); ok {
		t.Fatal("an entry id reads as an event id")
	}
	flipped := id[:10] + string("0123456789abcdefghijklmnopqrstuv"[(strings.IndexByte("0123456789abcdefghijklmnopqrstuv", id[10])+1)%32]) + id[11:]
	if _, ok := a.ParseEntryID(flipped); ok {
		t.Fatalf("%q (from %q) parses", flipped, id)
	}
	// Consecutive numbers give unrelated ids.
	if x, y := a.EntryID(1000), a.EntryID(1001); x[:8] == y[:8] {
		t.Fatalf("consecutive ids %q %q share a prefix", x, y)
	}
	// References: an old-form entry id is shown keyed and read back.
	ref := ledger.EntryID(42)
	if pub := a.PublicRef(ref); pub != a.EntryID(42) || a.InternalEntryRef(pub) != ref {
		t.Fatalf("reference %q shows as %q", ref, pub)
	}
	if a.PublicRef("pay_x") != "pay_x" || a.InternalEventID(a.EventID(9)) != ledger.EventID(9) {
		t.Fatal("references")
	}
}

// SetKey commits the first key; a second is a replay that changes
// nothing; the key is read back through the store, and after a restart.
func TestSetKeyFirstWins(t *testing.T) {
	s := ledgertest.New(t)
	if _, ok := Key(s.Reader); ok {
		t.Fatal("a fresh ledger has an id key")
	}
	first := strings.Repeat("a", KeyLen)
	if r := s.Apply(&SetKey{At: 1, Key: first}); r.Err != nil || r.Replayed {
		t.Fatalf("first key: %+v", r)
	}
	if r := s.Apply(&SetKey{At: 2, Key: strings.Repeat("b", KeyLen)}); !r.Replayed {
		t.Fatalf("second key: %+v", r)
	}
	if r := s.Apply(&SetKey{At: 3, Key: "short"}); r.Err == nil {
		t.Fatal("a short key is accepted")
	}
	if k, ok := Key(s.Reader); !ok || string(k) != first {
		t.Fatalf("key %q, %v", k, ok)
	}
	again := s.Restored()
	if k, ok := Key(again.Reader); !ok || string(k) != first {
		t.Fatalf("after a restart: key %q, %v", k, ok)
	}
}
