package railtest

import (
	"errors"
	"net/http"
	"net/http/httptest"
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
