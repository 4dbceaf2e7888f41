package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"payments/actors/actorstest/testkit"
)

// exportServer answers GET /v1/transactions/export over history (row times
// in unix ms) as the service does: the rows from–to as CSV, or a 400 about
// from when there are more than rowsMax of them.
func exportServer(t *testing.T, history []int64, rowsMax int) (*httptest.Server, *int) {
	t.Helper()
	probes := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probes++
		from, err1 := time.Parse(time.RFC3339Nano, r.URL.Query().Get("from"))
		to, err2 := time.Parse(time.RFC3339Nano, r.URL.Query().Get("to"))
		if r.URL.Path != "/v1/transactions/export" || r.URL.Query().Get("format") != "csv" || err1 != nil || err2 != nil {
			http.Error(w, `{"error":{"code":"validation_error","fields":[{"field":"to"}]}}`, http.StatusBadRequest)
			return
		}
		var b strings.Builder
		b.WriteString("id,type,createdAt\n")
		rows := 0
		for i, at := range history {
			if at >= from.UnixMilli() && at <= to.UnixMilli() {
				fmt.Fprintf(&b, "le_%d,payout,%d\n", i, at)
				rows++
			}
		}
		if rows > rowsMax {
			http.Error(w, `{"error":{"code":"validation_error","fields":[{"field":"from","message":"selects more than 10000 transactions"}]}}`, http.StatusBadRequest)
			return
		}
		w.Write([]byte(b.String()))
	}))
	t.Cleanup(srv.Close)
	return srv, &probes
}

// TestExportRanges checks that setup splits a history into ranges the
// export accepts: every row in exactly one range, none over the limit, no
// empty range.
func TestExportRanges(t *testing.T) {
	const rowsMax = 100
	for _, tc := range []struct {
		name    string
		history []int64
		err     string // in the error; "" for none
	}{
		{"under the limit", ramp(1_000_000, 60, 1), ""},
		{"at the limit", ramp(1_000_000, rowsMax, 1), ""},
		{"one over", ramp(1_000_000, rowsMax+1, 1), ""},
		{"many rows a millisecond", ramp(1_000_000, 1000, 0.1), ""},
		{"a gap", append(ramp(1_000_000, 150, 1), ramp(9_000_000, 150, 1)...), ""},
		{"more rows in one millisecond than the limit", ramp(1_000_000, rowsMax+1, 0), "got 400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, probes := exportServer(t, tc.history, rowsMax)
			s := newSetup(strings.TrimPrefix(srv.URL, "http://"))
			defer s.close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			from, to := tc.history[0], tc.history[len(tc.history)-1]
			ranges, err := s.exportRanges(ctx, "sk_test_x", from, to)
			if testkit.WantErr(t, err, tc.err) {
				return
			}
			total := 0
			for _, r := range ranges {
				if r.rows < 1 || r.rows > rowsMax {
					t.Errorf("range %s holds %d rows", r.path, r.rows)
				}
				total += r.rows
			}
			if total != len(tc.history) {
				t.Errorf("%d rows in %d ranges, the history has %d", total, len(ranges), len(tc.history))
			}
			if *probes > exportProbesMax {
				t.Errorf("%d exports tried", *probes)
			}
		})
	}
}

// ramp returns n row times from start, msPerRow milliseconds apart (0:
// all in the same millisecond).
func ramp(start int64, n int, msPerRow float64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = start + int64(float64(i)*msPerRow)
	}
	return out
}

func TestExportPath(t *testing.T) {
	from := time.Date(2026, 8, 1, 9, 0, 0, 123e6, time.UTC).UnixMilli()
	want := "/v1/transactions/export?format=csv&from=2026-08-01T09:00:00.123Z&to=2026-08-01T09:00:00.124Z"
	if got := exportPath(from, from+1); got != want {
		t.Errorf("exportPath = %s, want %s", got, want)
	}
}

func TestCSVRows(t *testing.T) {
	for body, want := range map[string]int{
		"":                    0,
		"id,type\n":           0,
		"id,type\na,b\n":      1,
		"id,type\na,b\nc,d\n": 2,
	} {
		if got := csvRows([]byte(body)); got != want {
			t.Errorf("csvRows(%q) = %d, want %d", body, got, want)
		}
	}
}
