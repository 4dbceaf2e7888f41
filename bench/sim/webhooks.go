package sim

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"payments/actors"
	api "payments/http"
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
		Payload:      api.EventPayload,
		Policy:       actors.WebhookURLPolicy{AllowLoopback: true},
		Timeout:      time.Second,
		Schedule:     webhookSchedule,
		PollInterval: 10 * time.Millisecond,
	}
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
