package money

import (
	"testing"
	"time"

	"payments/ledger"
	"payments/ledger/conversions"
	"payments/ledger/publicids"
)

func TestParseDateOrTime(t *testing.T) {
	day := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	cases := []struct {
		in       string
		endOfDay bool
		want     int64
		ok       bool
	}{
		{"2026-08-01", false, day, true},
		{"2026-08-01", true, day + 24*3600*1000 - 1, true},
		{"2026-08-01T09:12:44.5Z", true, day + (9*3600+12*60+44)*1000 + 500, true},
		{"2026-08-01T02:00:00+02:00", false, day, true},
		{"2026-08-01T00:00:00", false, 0, false}, // no zone
		{"2026-13-01", false, 0, false},
		{"yesterday", false, 0, false},
		{"", false, 0, false},
	}
	for _, c := range cases {
		got, ok := parseDateOrTime(c.in, c.endOfDay)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("parseDateOrTime(%q, %v) = %d, %v; want %d, %v", c.in, c.endOfDay, got, ok, c.want, c.ok)
		}
	}
}

// A transaction id parses back to its entry and type, and nothing else
// parses to an id that renders differently: in the old form (no id key)
// and the keyed one (where an old-form id still parses, and renders in the
// keyed form).
func FuzzTransactionID(f *testing.F) {
	keyed := publicids.New([]byte("fuzz-transaction-id-key-32-bytes"))
	for _, ids := range []*publicids.IDs{nil, keyed} {
		for _, seq := range []uint64{1, 2, 99, 1 << 40} {
			for _, typ := range []ledger.EntryType{ledger.EntryPayoutDebit, conversions.EntryCredit} {
				n := ledger.NumberedEntry{Seq: seq, Entry: ledger.Entry{Type: typ}}
				f.Add(transactionID(ids, &n))
			}
		}
	}
	f.Add("le_")
	f.Add("le__x")
	f.Add("le_payout_debit_")
	f.Fuzz(func(t *testing.T, id string) {
		for _, ids := range []*publicids.IDs{nil, keyed} {
			seq, typ, ok := parseTransactionID(ids, id)
			if !ok {
				continue
			}
			et, known := ledger.ParseEntryType(typ)
			if !known {
				continue
			}
			n := ledger.NumberedEntry{Seq: seq, Entry: ledger.Entry{Type: et}}
			got := transactionID(ids, &n)
			if ids != nil && got != id {
				got = transactionID(nil, &n) // an old-form id, still accepted
			}
			if got != id {
				t.Fatalf("%q parses to (%d, %s), which renders as %q", id, seq, typ, got)
			}
		}
	})
}
