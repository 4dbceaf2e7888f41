package http

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// The request path's share of the request log is a copy into a pooled
// buffer and a channel send: at most two allocations more per request than
// without the log (the id's spliced node tag is one).
func TestRequestLogAllocsPerRequest(t *testing.T) {
	var req fasthttp.Request
	req.Header.SetMethod(fasthttp.MethodGet)
	req.SetRequestURI("/v1/organization?limit=5&email=a%40b.co")
	req.Header.Set(fasthttp.HeaderAuthorization, "Bearer nope") // refused before any lookup: no actors needed
	run := func(h fasthttp.RequestHandler) float64 {
		var ctx fasthttp.RequestCtx
		return testing.AllocsPerRun(200, func() {
			req.CopyTo(&ctx.Request)
			ctx.Response.Reset()
			h(&ctx)
			if ctx.Response.StatusCode() != fasthttp.StatusUnauthorized {
				t.Fatalf("status %d", ctx.Response.StatusCode())
			}
		})
	}
	without := run(New(Config{}).Handler())

	s := New(Config{})
	// A recorder without its goroutine: the test takes each record off the
	// queue and returns it to the pool, as the recorder would.
	s.recorder = &requestRecorder{queue: make(chan *requestState, 1)}
	logged := s.recordRequests(s.router.Handler)
	with := run(func(ctx *fasthttp.RequestCtx) {
		logged(ctx)
		select {
		case st := <-s.recorder.queue:
			releaseRequestState(st)
		default:
			t.Fatal("the failed authentication was not queued")
		}
	})
	t.Logf("allocations per request: %.1f without the request log, %.1f with it", without, with)
	if with > without+2 {
		t.Fatalf("the request log costs %.1f allocations per request", with-without)
	}
}
