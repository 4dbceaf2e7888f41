package money

import (
	"context"
	"payments/http/core"
	"runtime"
	"sync"
	"time"

	"payments/ledger"
)

// exportLanes keep exports from crowding out everything else on a node. An
// export reads and renders up to exportRowsMax rows: cheap for the state
// store, which reads history without holding anything Apply needs, but a
// burst of them is pure CPU. So one organization runs one export at a
// time, and the node runs at most a quarter of its cores' worth at once
// (at least one). A lane rests as long as its export ran before the next
// one starts, so exports keep at most half of each lane's core. An export
// waits up to exportWaitMax for its turn and is then refused with
// rate_limited: a client looping on exports slows down itself, not the
// other organizations' payouts.
type exportLanes struct {
	node chan struct{} // a token per export running on the node
	wait time.Duration // exportWaitMax but in tests

	mu   sync.Mutex
	orgs map[string]*orgLane
}

// orgLane is one organization's turn to export; users counts the exports
// running or waiting, so that an idle organization's lane is forgotten.
type orgLane struct {
	turn  chan struct{}
	users int
}

// exportWaitMax is how long an export waits for its turn.
const exportWaitMax = 10 * time.Second

func newExportLanes(wait time.Duration) *exportLanes {
	return &exportLanes{
		node: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/4)),
		wait: wait,
		orgs: make(map[string]*orgLane),
	}
}

// acquire waits for org's turn and a slot on the node, for at most l.wait;
// release gives both back once the lane has rested.
func (l *exportLanes) acquire(org string) (release func(), err *ledger.Error) {
	l.mu.Lock()
	lane, ok := l.orgs[org]
	if !ok {
		lane = &orgLane{turn: make(chan struct{}, 1)}
		l.orgs[org] = lane
	}
	lane.users++
	l.mu.Unlock()
	leave := func() {
		l.mu.Lock()
		if lane.users--; lane.users == 0 {
			delete(l.orgs, org)
		}
		l.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.wait)
	defer cancel()
	select {
	case lane.turn <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, l.busy("this organization's exports")
	}
	select {
	case l.node <- struct{}{}:
	case <-ctx.Done():
		<-lane.turn
		leave()
		return nil, l.busy("exports on this node")
	}
	start := time.Now()
	return func() {
		rest := time.Since(start)
		time.AfterFunc(rest, func() {
			<-l.node
			<-lane.turn
			leave()
		})
	}, nil
}

func (l *exportLanes) busy(what string) *ledger.Error {
	return &ledger.Error{
		Code:              ledger.CodeRateLimited,
		Message:           "Too many exports: " + what + " take turns, and this one waited " + l.wait.String() + " for its turn; retry later",
		RetryAfterSeconds: max(1, int(l.wait/time.Second)),
	}
}

// exportLanesKey is the export lanes' key in a server's State.
type exportLanesKey struct{}

// exports are s's export lanes, one set per server.
func exports(s *core.Server) *exportLanes {
	return s.State(exportLanesKey{}, func() any { return newExportLanes(exportWaitMax) }).(*exportLanes)
}
