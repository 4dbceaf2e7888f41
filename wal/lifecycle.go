package wal

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// lifecycle is what the log store and the state store share: every call
// is admitted by enter and ends with leave, Close holds life exclusively
// (Pebble panics when it is used after Close), and the first error after
// which a store must not serve — corruption, a failed write — fails it for
// good.
type lifecycle struct {
	name   string // "store" or "state store", for messages
	logger *slog.Logger

	life   sync.RWMutex // read-held by every call, write-held by Close
	closed bool         // guarded by life

	failure atomic.Pointer[error]
}

// enter admits a call unless the store is closed or failed; a nil return
// must be paired with leave.
func (l *lifecycle) enter() error {
	l.life.RLock()
	if l.closed {
		l.life.RUnlock()
		return ErrClosed
	}
	if f := l.failure.Load(); f != nil {
		l.life.RUnlock()
		return *f
	}
	return nil
}

func (l *lifecycle) leave() { l.life.RUnlock() }

// fail marks the store failed, so that every later call returns an error,
// and returns cause wrapped for the caller at hand.
func (l *lifecycle) fail(cause error) error {
	err := fmt.Errorf("wal: %s failed, refusing further use: %w", l.name, cause)
	if l.failure.CompareAndSwap(nil, &err) {
		l.logger.Error("wal: "+l.name+" failed", "err", cause)
	}
	return err
}

// readError wraps an error from a Pebble read; corruption also fails the
// store.
func (l *lifecycle) readError(what string, err error) error {
	err = classify(what, err)
	if errors.Is(err, ErrCorrupt) {
		return l.fail(err)
	}
	return fmt.Errorf("wal: %w", err)
}

// recoverFatal turns a pebbleFatal panic in the calling goroutine into a
// failed store and an error; other panics go on. Defer it directly.
func (l *lifecycle) recoverFatal(err *error) {
	r := recover()
	if r == nil {
		return
	}
	f, ok := r.(pebbleFatal)
	if !ok {
		panic(r)
	}
	*err = l.fail(errors.New(f.msg))
}

// close closes db, then releases the directory lock, once: it waits for
// the calls in progress, and a second close is a no-op. The caller wraps
// the error with what it closed.
func (l *lifecycle) close(db *pebble.DB, lock *pebble.Lock) (err error) {
	l.life.Lock()
	defer l.life.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	func() {
		defer l.recoverFatal(&err)
		err = db.Close()
	}()
	if lerr := lock.Close(); err == nil {
		err = lerr
	}
	return err
}

// diskBytes is the size of db's files; 0 once the store is closed or failed.
func (l *lifecycle) diskBytes(db *pebble.DB) uint64 {
	if err := l.enter(); err != nil {
		return 0
	}
	defer l.leave()
	return db.Metrics().DiskSpaceUsage()
}
