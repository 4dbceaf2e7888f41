package core

import (
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// The limiter allows `limit` requests in any one-second window (to within
// its 10 ms slots), per key, and says when to come back.
func TestRateLimiterSlidingWindow(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	now := start
	l := newRateLimiter(100)
	l.now = func() time.Time { return now }
	var ctx fasthttp.RequestCtx
	allow := func(key string) bool { return l.Allow(&ctx, key, perAPIKey) == nil }

	// 100 requests, one per 10 ms slot, over the first second are allowed.
	for i := 0; i < 100; i++ {
		now = start.Add(time.Duration(i) * 10 * time.Millisecond)
		if !allow("k1") {
			t.Fatalf("request %d refused", i+1)
		}
	}
	if got := string(ctx.Response.Header.Peek("ratelimit-remaining")); got != "0" {
		t.Fatalf("ratelimit-remaining %s after 100 requests", got)
	}
	// The 101st, still inside the second, is refused with a retry hint.
	now = start.Add(995 * time.Millisecond)
	e := l.Allow(&ctx, "k1", perAPIKey)
	if e == nil || e.Code != "rate_limited" || e.RetryAfterSeconds != 1 {
		t.Fatalf("101st request: %+v", e)
	}
	// Another key is not affected.
	if !allow("k2") {
		t.Fatal("a second key was limited by the first")
	}
	// The window slides: once the first request (at 0 ms) is a second old,
	// one slot frees, and only one.
	now = start.Add(1000 * time.Millisecond)
	if !allow("k1") {
		t.Fatal("refused after the oldest request left the window")
	}
	if allow("k1") {
		t.Fatal("allowed a second request when one slot had freed")
	}
	// A second of silence frees everything.
	now = start.Add(3 * time.Second)
	for i := 0; i < 100; i++ {
		if !allow("k1") {
			t.Fatalf("request %d refused after a quiet second", i+1)
		}
	}
}

func TestRateLimiterForgetsIdleKeys(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := newRateLimiter(10)
	l.now = func() time.Time { return now }
	var ctx fasthttp.RequestCtx
	l.Allow(&ctx, "idle", perAPIKey)
	now = now.Add(2 * time.Minute)
	l.Allow(&ctx, "busy", perAPIKey)
	if _, ok := l.windows.Load("idle"); ok {
		t.Fatal("an idle key's window is still held")
	}
}
