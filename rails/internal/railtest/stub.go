package railtest

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
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
