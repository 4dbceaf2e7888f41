package core

import (
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"payments/http/metrics"
	"payments/ledger"
)

// errorCodeKey is the user value under which writeError leaves the error
// code it answered, for the request metrics.
const errorCodeKey = "payments.errorCode"

// instrument wraps the router's handler with the request metrics: the
// route label is the template the router matched (saved by the router when
// SaveMatchedRoutePath is set), never the path.
func instrument(m *metrics.Requests, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		start := time.Now()
		next(ctx)
		route, _ := ctx.UserValue(router.MatchedRoutePathParam).(string)
		observe(m, ctx, route, time.Since(start))
	}
}

// instrumentErrors counts the requests fasthttp could not read (a body past
// the limit, a malformed request), which never reach the router.
func instrumentErrors(m *metrics.Requests, next func(*fasthttp.RequestCtx, error)) func(*fasthttp.RequestCtx, error) {
	return func(ctx *fasthttp.RequestCtx, err error) {
		start := time.Now()
		next(ctx, err)
		observe(m, ctx, "", time.Since(start))
	}
}

func observe(m *metrics.Requests, ctx *fasthttp.RequestCtx, route string, elapsed time.Duration) {
	m.Observe(ctx.Method(), route, ctx.Response.StatusCode(), elapsed)
	if code, ok := ctx.UserValue(errorCodeKey).(ledger.Code); ok {
		m.Error(string(code))
	}
}
