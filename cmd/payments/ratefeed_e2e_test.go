package main

import (
	"fmt"
	nethttp "net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

const liveKey = "sk_live_e2etestbootstrapkey0001"

// A production node prices cross-currency requests from its rate feed, and
// from nothing else: past the staleness limit it answers 503
// rate_unavailable (with Retry-After), never a sandbox rate.
func TestProductionRatesFromTheFeed(t *testing.T) {
	endToEnd(t)
	var age atomic.Int64 // how old the feed's rates are when it is asked
	feed := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		asOf := time.Now().UTC().Add(-time.Duration(age.Load()))
		fmt.Fprintf(w, `{"base":"USD","asOf":%q,"rates":{"GHS":"12.5","EUR":"0.9"}}`, asOf.Format(time.RFC3339Nano))
	}))
	defer feed.Close()
	p := startReady(t, t.TempDir(), "--stack", "production", "--bootstrap-key", liveKey,
		"--rate-feed-url", feed.URL, "--rate-staleness", "2s")
	var got struct {
		Rate struct {
			Rate string `json:"rate"`
		} `json:"rate"`
	}
	if st, err := callWith(client, liveKey, nil, p.addr, "GET", "/v1/rates/USD/GHS", nil, &got); err != nil || st != 200 || got.Rate.Rate != "12.375" {
		t.Fatalf("USD→GHS from the feed: %d %v %q, want 12.375 (12.5 less 1%%)", st, err, got.Rate.Rate)
	}
	// The feed keeps answering, but with rates that have grown stale.
	age.Store(int64(time.Minute))
	waitUntil(t, 10*time.Second, "stale rates refused", func() bool {
		req, _ := nethttp.NewRequest("GET", "http://"+p.addr+"/v1/rates/USD/GHS", nil)
		req.Header.Set("Authorization", "Bearer "+liveKey)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "" {
			t.Fatal("503 without Retry-After")
		}
		return resp.StatusCode == 503
	})
}
