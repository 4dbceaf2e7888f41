package core

import (
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// rateLimiter allows each API key `limit` requests in any sliding window of
// one second. A key's window is a ring of 100 slots of 10 ms counting its
// requests; a request is allowed when the slots of the last second hold
// fewer than the limit. The window slides in 10 ms steps, so the limit holds
// to within 10 ms, in constant memory per key whatever the limit.
//
// Limits are per node; followers forward to the leader, so in a cluster the
// leader's count is the one that matters.
type rateLimiter struct {
	limit uint32
	now   func() time.Time

	windows sync.Map // key id → *window

	sweepMu sync.Mutex
	swept   time.Time
}

// What a rate limiter's key stands for, as its rate_limited message names
// it: a request is counted against its API key, or, on a route without
// one, against its client address.
const (
	perAPIKey        = "API key"
	PerClientAddress = "client address"
)

const (
	rateSlot       = 10 * time.Millisecond
	rateSlots      = 100 // rateSlots × rateSlot = the one-second window
	rateIdleForget = time.Minute
)

type window struct {
	mu    sync.Mutex
	count [rateSlots]uint32 // requests per slot, indexed by slot number mod rateSlots
	head  int64             // the newest slot number the ring holds
	sum   uint32            // requests in the ring
}

func newRateLimiter(limit int) *rateLimiter {
	return &rateLimiter{limit: uint32(limit), now: time.Now}
}

// advance moves the window to slot, dropping the slots that left it.
func (w *window) advance(slot int64) {
	if slot-w.head >= rateSlots {
		w.count = [rateSlots]uint32{}
		w.sum = 0
	} else {
		for s := w.head + 1; s <= slot; s++ {
			i := s % rateSlots
			w.sum -= w.count[i]
			w.count[i] = 0
		}
	}
	if slot > w.head {
		w.head = slot
	}
}

// until returns how long until the window holds fewer than below requests:
// until enough of its oldest slots have left it.
func (w *window) until(below uint32, now time.Time) time.Duration {
	if w.sum < below || below == 0 {
		return 0
	}
	sum := w.sum
	for s := w.head - rateSlots + 1; s <= w.head; s++ {
		sum -= w.count[s%rateSlots]
		if sum < below {
			return time.Duration((s+rateSlots)*int64(rateSlot) - now.UnixNano())
		}
	}
	return rateSlots * rateSlot
}

// allow records a request of key and sets the ratelimit-* headers. It
// returns a rate_limited error when the key is over its limit, whose
// message names what the key stands for, per (perAPIKey,
// perClientAddress).
func (l *rateLimiter) Allow(ctx *fasthttp.RequestCtx, key, per string) *ledger.Error {
	now := l.now()
	slot := now.UnixNano() / int64(rateSlot)
	v, ok := l.windows.Load(key)
	if !ok {
		v, _ = l.windows.LoadOrStore(key, &window{head: slot})
	}
	w := v.(*window)
	w.mu.Lock()
	w.advance(slot)
	allowed := w.sum < l.limit
	if allowed {
		w.count[slot%rateSlots]++
		w.sum++
	}
	remaining := l.limit - min(w.sum, l.limit)
	// reset: when the oldest request counted leaves the window; when
	// limited, when a request will be allowed again.
	reset := w.until(w.sum, now)
	if !allowed {
		reset = w.until(l.limit, now)
	}
	w.mu.Unlock()
	l.sweep(now)

	resetSeconds := int((reset + time.Second - 1) / time.Second)
	h := &ctx.Response.Header
	h.Set("ratelimit-limit", strconv.FormatUint(uint64(l.limit), 10))
	h.Set("ratelimit-remaining", strconv.FormatUint(uint64(remaining), 10))
	h.Set("ratelimit-reset", strconv.Itoa(max(resetSeconds, 0)))
	if allowed {
		return nil
	}
	return &ledger.Error{
		Code:              ledger.CodeRateLimited,
		Message:           "Too many requests: this " + per + " is limited to " + strconv.FormatUint(uint64(l.limit), 10) + " requests per second",
		RetryAfterSeconds: max(resetSeconds, 1),
	}
}

// sweep forgets keys idle for a minute, at most once a minute.
func (l *rateLimiter) sweep(now time.Time) {
	if !l.sweepMu.TryLock() {
		return
	}
	defer l.sweepMu.Unlock()
	if now.Sub(l.swept) < rateIdleForget {
		return
	}
	l.swept = now
	oldest := now.Add(-rateIdleForget).UnixNano() / int64(rateSlot)
	l.windows.Range(func(k, v any) bool {
		w := v.(*window)
		w.mu.Lock()
		idle := w.head < oldest
		w.mu.Unlock()
		if idle {
			l.windows.Delete(k)
		}
		return true
	})
}
