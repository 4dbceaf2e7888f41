package railtest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Stub starts a provider with canned answers and returns the adapter
// under test that build makes for its URL, failing t if build fails. The
// provider answers the requests whose path holds tokenPath (its token
// endpoint) with tokenStatus, and tokenBody when that is 200, and every
// other request with status and body, counting those in calls. It closes
// when t ends.
func Stub[A any](t testing.TB, tokenPath string, tokenStatus int, tokenBody string, status int, body string, build func(url string) (A, error)) (a A, calls *atomic.Int32) {
	t.Helper()
	calls = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, tokenPath) {
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
	a, err := build(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return a, calls
}
