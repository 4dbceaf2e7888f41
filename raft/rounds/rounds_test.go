package rounds

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Callers share rounds, and a caller's round starts after it joined: a round
// already running when it arrived is not its round.
func TestRoundsAreSharedAndStartAfterTheCaller(t *testing.T) {
	var b Rounds[struct{}]
	var rounds atomic.Int64
	var startedNs atomic.Int64 // the running round's start
	run := func() (struct{}, error) {
		rounds.Add(1)
		startedNs.Store(time.Now().UnixNano())
		time.Sleep(2 * time.Millisecond)
		return struct{}{}, nil
	}
	const callers = 300
	var wg sync.WaitGroup
	late := make(chan string, callers)
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			joined := time.Now().UnixNano()
			if _, err := b.Do(context.Background(), run); err != nil {
				late <- err.Error()
				return
			}
			// The last round to start before this one finished is the
			// one that served it (rounds do not overlap).
			if s := startedNs.Load(); s < joined {
				late <- "a caller was served by a round that started before it joined"
			}
		}()
	}
	wg.Wait()
	close(late)
	for msg := range late {
		t.Fatal(msg)
	}
	if n := rounds.Load(); n == 0 || n >= callers {
		t.Fatalf("%d rounds for %d callers: they were not shared", n, callers)
	}
}
