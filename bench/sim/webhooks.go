package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"payments/actors"
	"payments/ledger"
)

// The webhook engine of every node delivers to one receiver on loopback,
// which fails a share of the attempts (the schedule sets the share) to
// make the engine retry, and remembers every delivery it was sent.
type receiver struct {
	srv *http.Server
	url string

	mu       sync.Mutex
	rng      *rand.Rand
	failRate float64
	bodies   map[string][]byte // webhook-id → the body of its first attempt
	attempts int
	changed  []string // webhook-ids sent again with a different body
}

// webhookSchedule retries quickly, and long enough that nothing fails
// for good within a run.
var webhookSchedule = []time.Duration{
	20 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
	400 * time.Millisecond, 400 * time.Millisecond, 400 * time.Millisecond, 400 * time.Millisecond,
	400 * time.Millisecond, 400 * time.Millisecond, 400 * time.Millisecond, 400 * time.Millisecond,
}

func webhookConfig() actors.WebhookConfig {
	return actors.WebhookConfig{
		Payload:      eventPayload,
		Policy:       actors.WebhookURLPolicy{AllowLoopback: true},
		Timeout:      time.Second,
		Schedule:     webhookSchedule,
		PollInterval: 10 * time.Millisecond,
	}
}

// eventPayload is the body the receiver is sent: the event's identity, as
// encoding/json writes it. The simulator reaches the service through actors/app and the
// actors, never through the front end (package http, whose rendering of
// payloads its own tests hold to the contract); what it checks of a
// delivery is the engine's (every event delivered, the same body on every
// attempt), which needs only a body that a retry sends again unchanged.
func eventPayload(ev ledger.Event) ([]byte, error) {
	return json.Marshal(struct {
		ID, Org, Type, Resource string
		At                      int64
	}{ev.ID, ev.OrgID, ev.Type, ev.ResourceID, ev.At})
}

func startReceiver(seed uint64) (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{rng: rand.New(rand.NewPCG(seed, 7)), bodies: map[string][]byte{}}
	r.url = "http://" + ln.Addr().String() + "/hook"
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go r.srv.Serve(ln)
	return r, nil
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	id := req.Header.Get("webhook-id")
	r.mu.Lock()
	r.attempts++
	fail := r.failRate > 0 && r.rng.Float64() < r.failRate
	if prev, ok := r.bodies[id]; ok {
		if !bytes.Equal(prev, body) {
			r.changed = append(r.changed, id)
		}
	} else if !fail {
		r.bodies[id] = body
	}
	r.mu.Unlock()
	if fail {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) setFailRate(rate float64) {
	r.mu.Lock()
	r.failRate = rate
	r.mu.Unlock()
}

// received reports whether a delivery with this webhook-id was taken.
func (r *receiver) received(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.bodies[id]
	return ok
}

func (r *receiver) close() { r.srv.Close() }
