package actors

import (
	"runtime"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// readerDispatcher runs the turns of actors that read the state store on
// long-lived goroutines. protoactor's default dispatcher starts a goroutine
// for every turn, on a small stack, and a state store lookup (Pebble's
// read path) needs a deep one: each turn grew its stack by copying, which
// cost the replay workload about a tenth of the server's CPU. A worker
// keeps its grown stack from turn to turn. When every worker is busy, a
// turn gets a goroutine of its own as before, so scheduling never waits.
type readerDispatcher struct {
	turns chan func()
}

// Throughput is how many messages a mailbox processes in one turn before
// it yields its worker (protoactor's default).
func (d *readerDispatcher) Throughput() int { return 300 }

func (d *readerDispatcher) Schedule(fn func()) {
	select {
	case d.turns <- fn:
	default:
		go fn()
	}
}

// sharedReaderDispatcher is the process's pool: the workers idle on an
// unbuffered channel and are never stopped, so every System shares them.
var sharedReaderDispatcher = sync.OnceValue(func() actor.Dispatcher {
	d := &readerDispatcher{turns: make(chan func())}
	for range 4 * runtime.GOMAXPROCS(0) {
		go func() {
			for fn := range d.turns {
				fn()
			}
		}()
	}
	return d
})
