package railtest

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"payments/rails/provider"
)

// Stub starts a provider that answers every request isToken picks with
// tokenStatus (and tokenBody when that is 200), and every other request
// with status and body, counting those. It closes when t ends.
func Stub(t testing.TB, isToken func(*http.Request) bool, tokenStatus int, tokenBody string, status int, body string) (url string, calls *atomic.Int32) {
	t.Helper()
	calls = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isToken(r) {
			w.WriteHeader(tokenStatus)
			if tokenStatus == http.StatusOK {
				w.Write([]byte(tokenBody))
			}
			return
		}
		calls.Add(1)
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, calls
}

// CheckOutcome fails t unless err is of wantKind or, when wantKind is nil,
// err is nil and out is in wantState.
func CheckOutcome(t testing.TB, out provider.Outcome, err error, wantState provider.State, wantKind error) {
	t.Helper()
	if wantKind == nil {
		if err != nil || out.State != wantState {
			t.Fatalf("%+v %v", out, err)
		}
	} else if !errors.Is(err, wantKind) {
		t.Fatalf("err %v, want %v", err, wantKind)
	}
}

// QueryCase is a provider's answer to a status query and what the adapter
// must make of it: an error of WantKind or, when that is nil, an outcome
// in Want whose message holds WantMsg.
type QueryCase struct {
	Name     string
	Status   int
	Body     string
	Want     provider.State
	WantMsg  string
	WantKind error
}

// Check fails t unless out and err are what c wants; it reports whether
// there is an outcome for the caller's further checks.
func (c QueryCase) Check(t testing.TB, out provider.Outcome, err error) bool {
	t.Helper()
	if c.WantKind != nil {
		if !errors.Is(err, c.WantKind) {
			t.Fatalf("err %v, want %v", err, c.WantKind)
		}
		return false
	}
	if err != nil || out.State != c.Want || !strings.Contains(out.Message, c.WantMsg) {
		t.Fatalf("%+v %v; want %v with %q", out, err, c.Want, c.WantMsg)
	}
	return true
}
