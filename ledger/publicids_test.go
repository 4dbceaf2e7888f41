package ledger

import (
	"strings"
	"testing"
)

func TestPublicIDs(t *testing.T) {
	a := NewPublicIDs([]byte("deployment-a-id-key-of-32-bytes!"))
	b := NewPublicIDs([]byte("deployment-b-id-key-of-32-bytes!"))
	if NewPublicIDs([]byte("deployment-a-id-key-of-32-bytes!")) != a {
		t.Fatal("the same key makes a second maker")
	}
	for _, seq := range []uint64{1, 2, 3, 1000, 1 << 40, ^uint64(0)} {
		for _, form := range []struct {
			name   string
			make   func(*PublicIDs, uint64) string
			parse  func(*PublicIDs, string) (uint64, bool)
			prefix string
		}{
			{"entry", (*PublicIDs).EntryID, (*PublicIDs).ParseEntryID, "le_"},
			{"event", (*PublicIDs).EventID, (*PublicIDs).ParseEventID, "wev_"},
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
	ref := EntryID(42)
	if pub := a.PublicRef(ref); pub != a.EntryID(42) || a.InternalEntryRef(pub) != ref {
		t.Fatalf("reference %q shows as %q", ref, pub)
	}
	if a.PublicRef("pay_x") != "pay_x" || a.InternalEventID(a.EventID(9)) != EventID(9) {
		t.Fatal("references")
	}
}

// SetIDKey commits the first key; a second is a replay that changes
// nothing; the key is read back through the store, and after a restart.
func TestSetIDKeyFirstWins(t *testing.T) {
	s := newTestState(t)
	if _, ok := s.IDKey(); ok {
		t.Fatal("a fresh ledger has an id key")
	}
	first := strings.Repeat("a", IDKeyLen)
	if r := s.Apply(&SetIDKey{At: 1, Key: first}); r.Err != nil || r.Replayed {
		t.Fatalf("first key: %+v", r)
	}
	if r := s.Apply(&SetIDKey{At: 2, Key: strings.Repeat("b", IDKeyLen)}); !r.Replayed {
		t.Fatalf("second key: %+v", r)
	}
	if r := s.Apply(&SetIDKey{At: 3, Key: "short"}); r.Err == nil {
		t.Fatal("a short key is accepted")
	}
	if k, ok := s.IDKey(); !ok || string(k) != first {
		t.Fatalf("key %q, %v", k, ok)
	}
	again, err := loadTestState(t, s.store)
	if err != nil {
		t.Fatal(err)
	}
	if k, ok := again.IDKey(); !ok || string(k) != first {
		t.Fatalf("after a restart: key %q, %v", k, ok)
	}
}
