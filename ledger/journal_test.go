package ledger

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"
)

// newConversionState is a ledger with two organizations, org_a holding
// 1,000.00 GHS: the start of the conversions' tests when they were the
// kernel's, and of the kernel's tests that move money.
func newConversionState(t *testing.T) *testState {
	t.Helper()
	s := newTestState(t)
	for _, org := range []string{"org_a", "org_b"} {
		hash := sha256.Sum256([]byte(org))
		if r := s.Apply(&CreateOrganization{At: 1, ID: org, Name: org, Key: CreateAPIKey{At: 1, ID: "key_" + org[4:], OrgID: org, Hash: string(hash[:])}}); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if r := s.Apply(&FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 100_000, ExternalReference: "f1"}); r.Err != nil {
		t.Fatal(r.Err)
	}
	return s
}

// A journal walk bounded by time reads only around its range, however long
// the history before and after it: an export of one day of an account with
// years of entries is answered whole, not refused as too large.
func TestJournalTimeRangeSkipsTheRest(t *testing.T) {
	s := newConversionState(t)
	const n = 3 * PageScanMax
	const minute = int64(60_000)
	var cmds []Command
	for i := 0; i < n; i++ {
		// Two currencies: the walk merges two accounts' statements.
		cur := []string{"GHS", "KES"}[i%2]
		cmds = append(cmds, &FundBalance{At: int64(i+1) * minute, OrgID: "org_a", Currency: cur, Amount: 1, ExternalReference: fmt.Sprint("range-", i)})
		if len(cmds) == 500 {
			for _, r := range s.applyBatch(cmds...) {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
			}
			cmds = cmds[:0]
		}
	}
	for _, tc := range []struct {
		name     string
		from, to int64 // minutes, inclusive; 0 for no bound
	}{
		{"the middle", 12_000, 12_099},
		{"the start", 1, 40},
		{"the end", n - 30, 0},
		{"up to a time", 0, 7},
		{"up to after the end", n - 20, n + 1000},
		{"a range past the end", n + 5, n + 1000},
	} {
		f := JournalFilter{From: tc.from * minute, To: tc.to * minute}
		p := s.Journal("org_a", f, CursorStart, 1000)
		if p.HasMore {
			t.Fatalf("%s: a range of %d entries has more than a page", tc.name, len(p.Items))
		}
		// What a walk of the whole journal, filtered, finds.
		var want []NumberedEntry
		for before := CursorStart; ; {
			all := s.Journal("org_a", JournalFilter{}, before, 1000)
			for _, it := range all.Items {
				if (f.From == 0 || it.Entry.At >= f.From) && (f.To == 0 || it.Entry.At <= f.To) {
					want = append(want, it)
				}
			}
			if !all.HasMore {
				break
			}
			before = all.Next
		}
		if (len(want) == 0) != (tc.from > n) || len(p.Items) != len(want) {
			t.Fatalf("%s: %d entries, want %d", tc.name, len(p.Items), len(want))
		}
		for i := range want {
			if p.Items[i] != want[i] {
				t.Fatalf("%s: entry %d is %+v, want %+v", tc.name, i, p.Items[i], want[i])
			}
		}
	}
}

// A command stamped earlier than the account's last entry (a new leader
// whose clock is behind) is booked at the account's last time: times never
// go back along a statement, which time-bounded walks rely on. Records keep
// the command's own time.
func TestEntryTimesNeverGoBack(t *testing.T) {
	s := newConversionState(t)
	for i, at := range []int64{100_000, 40_000, 120_000} {
		if r := s.Apply(&FundBalance{At: at, OrgID: "org_a", Currency: "GHS", Amount: 1, ExternalReference: fmt.Sprint("skew-", i)}); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	p := s.Journal("org_a", JournalFilter{Currency: "GHS"}, CursorStart, 3)
	var got []int64
	for _, it := range p.Items {
		got = append(got, it.Entry.At)
	}
	if want := []int64{120_000, 100_000, 100_000}; !slices.Equal(got, want) {
		t.Fatalf("entry times %v, want %v", got, want)
	}
}
