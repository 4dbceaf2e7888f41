package core

import (
	"sync/atomic"
	"time"
)

// logEvery is how often a throttled warning may be logged.
const logEvery = time.Second

// logThrottle lets one line of a repeated warning through per logEvery and
// counts the ones it held back, which the next line reports: a leader that
// stops answering fails every request forwarded to it, and one line per
// request (thousands a minute) buries everything else in the log. The zero
// value is ready to use and safe for concurrent use.
type logThrottle struct {
	next       atomic.Int64  // unix nanoseconds before which lines are held back
	suppressed atomic.Uint64 // lines held back since the last one logged
}

// allow reports whether to log now, and how many lines were held back
// since the last one logged.
func (t *logThrottle) allow(now time.Time) (ok bool, suppressed uint64) {
	next := t.next.Load()
	if now.UnixNano() < next || !t.next.CompareAndSwap(next, now.Add(logEvery).UnixNano()) {
		t.suppressed.Add(1)
		return false, 0
	}
	return true, t.suppressed.Swap(0)
}
