package outbound

import (
	"errors"
	"testing"
	"time"
)

func TestTokenCache(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	fetches := 0
	fetch := func(at time.Time) (string, time.Time, error) {
		fetches++
		return "tok" + string(rune('0'+fetches)), at.Add(time.Minute), nil
	}
	var c TokenCache
	get := func() string {
		t.Helper()
		tok, err := c.Get(clock, 10*time.Second, fetch)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	if got := get(); got != "tok1" || get() != "tok1" || fetches != 1 {
		t.Fatalf("got %s after %d fetches, want tok1 once", got, fetches)
	}
	now = now.Add(50 * time.Second) // within refreshBefore of its expiry
	if got := get(); got != "tok2" {
		t.Fatalf("got %s, want a new token", got)
	}
	c.Invalidate("tok1") // no longer the cached one: kept
	if got := get(); got != "tok2" {
		t.Fatalf("got %s, want tok2 kept", got)
	}
	c.Invalidate("tok2")
	if got := get(); got != "tok3" {
		t.Fatalf("got %s, want a new token after Invalidate", got)
	}
	boom := errors.New("boom")
	now = now.Add(time.Hour)
	if _, err := c.Get(clock, 0, func(time.Time) (string, time.Time, error) { return "", time.Time{}, boom }); err != boom {
		t.Fatalf("err %v, want the fetch's", err)
	}
	if got := get(); got != "tok4" {
		t.Fatalf("got %s, want a fetch after a failed one", got)
	}
}
