package rails

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// A feed on loopback, whose document and status the test sets.
type testFeed struct {
	srv    *httptest.Server
	doc    atomic.Value // string
	status atomic.Int32
	hits   atomic.Int32
}

func newTestFeed(t *testing.T, doc string) *testFeed {
	f := &testFeed{}
	f.doc.Store(doc)
	f.status.Store(200)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		w.WriteHeader(int(f.status.Load()))
		fmt.Fprint(w, f.doc.Load().(string))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func feedDoc(asOf time.Time, ghs string) string {
	return fmt.Sprintf(`{"base":"USD","asOf":%q,"rates":{"GHS":%q,"EUR":"0.92","XYZ":"3"}}`, asOf.Format(time.RFC3339), ghs)
}

func TestFeedRates(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	clock := now
	feed := newTestFeed(t, feedDoc(now, "15.6"))
	src := &FeedRates{URL: feed.srv.URL, Staleness: time.Minute, SpreadBasisPoints: 100, Now: func() time.Time { return clock }}

	// Fetched on demand, priced exactly as the sandbox prices the same
	// mid-market figures.
	r, err := src.Rate("USD", "GHS")
	want, _ := SandboxRates{SpreadBasisPoints: 100}.Rate("USD", "GHS")
	if err != nil || r.String() != want.String() {
		t.Fatalf("USD→GHS: %v %v, want %s", r, err, want)
	}
	if r, err := src.Rate("GHS", "EUR"); err != nil || r.String() != "0.05838461538" {
		t.Fatalf("GHS→EUR: %v %v", r, err)
	}
	if _, err := src.Rate("USD", "NGN"); !errors.Is(err, ErrRateUnavailable) {
		t.Fatalf("a currency the feed does not price: %v", err)
	}
	if _, err := src.Rate("USD", "ABC"); !errors.Is(err, ErrUnsupportedCurrency) {
		t.Fatalf("an unknown currency: %v", err)
	}

	// Past the staleness limit, with the feed down, nothing is served.
	clock = now.Add(61 * time.Second)
	feed.status.Store(503)
	if _, err := src.Rate("USD", "GHS"); !errors.Is(err, ErrRatesStale) || !errors.Is(err, ErrRateUnavailable) {
		t.Fatalf("stale: %v", err)
	}
	if _, _, lastErr := src.Status(); lastErr == nil {
		t.Fatal("the feed's failure is not reported")
	}
	if r, err := src.Rate("GHS", "GHS"); err != nil || r.String() != "1" {
		t.Fatalf("a same-currency rate needs no feed: %v %v", r, err)
	}

	// The feed recovers with newer rates: served again.
	feed.status.Store(200)
	feed.doc.Store(feedDoc(clock, "16"))
	if r, err := src.Rate("USD", "GHS"); err != nil || r.String() != "15.84" {
		t.Fatalf("after recovery: %v %v", r, err)
	}
	// An older document never replaces a newer one.
	feed.doc.Store(feedDoc(now, "99"))
	if err := src.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r, _ := src.Rate("USD", "GHS"); r.String() != "15.84" {
		t.Fatalf("an older document replaced a newer one: %v", r)
	}
}

func TestFeedDocumentsRefused(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"a number, not a decimal string", `{"base":"USD","asOf":"2026-11-26T10:00:00Z","rates":{"GHS":15.6}}`},
		{"negative", `{"base":"USD","asOf":"2026-11-26T10:00:00Z","rates":{"GHS":"-1"}}`},
		{"not a number", `{"base":"USD","asOf":"2026-11-26T10:00:00Z","rates":{"GHS":"NaN"}}`},
		{"no time", `{"base":"USD","rates":{"GHS":"15.6"}}`},
		{"unknown base", `{"base":"XYZ","asOf":"2026-11-26T10:00:00Z","rates":{}}`},
		{"not JSON", `<html>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, _, err := parseFeed([]byte(tc.doc)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}
