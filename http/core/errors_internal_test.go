package core

import (
	"strconv"
	"testing"

	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// Every code the table answers 503 has a Retry-After of its own, which
// writeError sends; an error that says its own wait keeps it, and no other
// status gets one unasked.
func TestRetryAfterOfEvery503Code(t *testing.T) {
	n := 0
	for code, status := range statusOf {
		var ctx fasthttp.RequestCtx
		WriteError(&ctx, &ledger.Error{Code: code, Message: "x"})
		got := string(ctx.Response.Header.Peek(fasthttp.HeaderRetryAfter))
		if status != fasthttp.StatusServiceUnavailable {
			if _, listed := retryAfterOf[code]; listed || got != "" {
				t.Errorf("%s (%d): Retry-After %q, listed %v; only 503s get one unasked", code, status, got, listed)
			}
			continue
		}
		n++
		if retryAfterOf[code] < 1 || got != strconv.Itoa(retryAfterOf[code]) {
			t.Errorf("%s: Retry-After %q, want its own number of seconds (%d) of at least 1", code, got, retryAfterOf[code])
		}
		var own fasthttp.RequestCtx
		WriteError(&own, &ledger.Error{Code: code, Message: "x", RetryAfterSeconds: 42})
		if got := string(own.Response.Header.Peek(fasthttp.HeaderRetryAfter)); got != "42" {
			t.Errorf("%s with its own wait: Retry-After %q, want 42", code, got)
		}
	}
	if n != len(retryAfterOf) || n < 3 {
		t.Fatalf("%d codes answer 503, %d have a Retry-After", n, len(retryAfterOf))
	}
}
