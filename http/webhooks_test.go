package http_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	nethttp "net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"payments/actors"
	"payments/actors/actorstest/testkit"
	api "payments/http"
	"payments/ledger/webhooks"
)

// goldenDNS stands for public DNS: a public name, a name of a private
// address, and one of loopback.
var goldenDNS = testkit.DNS{
	"hooks.example.com":    "93.184.216.34",
	"internal.example.com": "10.0.0.5",
	"rebind.example.com":   "127.0.0.1",
}

// webhookConfig is the stack's webhook delivery: the API's payloads, the
// stack's URL policy with goldenDNS, and opts.webhooks's overrides.
func webhookConfig(opts stackOptions) actors.WebhookConfig {
	c := actors.WebhookConfig{Timeout: 2 * time.Second}
	if opts.webhooks != nil {
		c = *opts.webhooks
	}
	c.Payload = api.EventPayload
	c.Policy.AllowLoopback = !opts.live
	if c.Policy.Resolver == nil {
		c.Policy.Resolver = goldenDNS
	}
	return c
}

// receiver is a webhook receiver on loopback that records every request it
// reads, and answers as its behave function says.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	behave func(n int) string // "ok", "500", "hang", "close", "410", "hold", "redirect"
	hang   time.Duration

	held     atomic.Int32  // requests waiting in "hold"
	release  chan struct{} // closed: held requests answer 204
	location string        // where "redirect" points
}

type received struct {
	id, timestamp, signature string
	header                   nethttp.Header
	body                     []byte
	answered                 string
}

func newReceiver(t *testing.T, behave func(n int) string) *receiver {
	r := &receiver{t: t, behave: behave, hang: 5 * time.Second, release: make(chan struct{})}
	r.srv = httptest.NewServer(nethttp.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) url() string { return r.srv.URL + "/hook" }

func (r *receiver) serve(w nethttp.ResponseWriter, req *nethttp.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	r.mu.Lock()
	n := len(r.got)
	how := "ok"
	if r.behave != nil {
		how = r.behave(n)
	}
	r.got = append(r.got, received{
		id: req.Header.Get("webhook-id"), timestamp: req.Header.Get("webhook-timestamp"),
		signature: req.Header.Get("webhook-signature"), header: req.Header.Clone(), body: body, answered: how,
	})
	r.mu.Unlock()
	switch how {
	case "ok":
		w.WriteHeader(nethttp.StatusNoContent)
	case "500":
		w.WriteHeader(nethttp.StatusInternalServerError)
		io.WriteString(w, "receiver is down")
	case "410":
		w.WriteHeader(nethttp.StatusGone)
	case "hang":
		select {
		case <-time.After(r.hang):
		case <-req.Context().Done():
		}
		w.WriteHeader(nethttp.StatusNoContent)
	case "hold":
		r.held.Add(1)
		select {
		case <-r.release:
		case <-req.Context().Done():
		}
		w.WriteHeader(nethttp.StatusNoContent)
		r.held.Add(-1)
	case "redirect":
		nethttp.Redirect(w, req, r.location, nethttp.StatusTemporaryRedirect)
	case "close":
		conn, _, err := w.(nethttp.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func (s *stack) createEndpoint(url string, events ...string) (id, secret string) {
	s.t.Helper()
	body, _ := json.Marshal(map[string]any{"url": url, "events": events})
	r := s.do("POST", "/v1/webhooks/endpoints", s.key, body)
	s.mustStatus(r, 201)
	id = r.json(s.t)["endpoint"].(map[string]any)["id"].(string)
	r = s.do("GET", "/v1/webhooks/signing-secret/"+id, s.key, nil)
	s.mustStatus(r, 200)
	return id, r.json(s.t)["signingSecret"].(string)
}

// Deliveries carry Standard Webhooks signatures that the official library
// verifies, and the body is the event's payload as GET shows it. After a
// rotation, both the old and the new secret verify.
func TestWebhookSignaturesVerify(t *testing.T) {
	st := newStack(t, stackOptions{})
	rcv := newReceiver(t, nil)
	id, secret := st.createEndpoint(rcv.url(), "*")

	st.fund(st.key, "GHS", "10.00", "sig-1")
	waitFor(t, "the first delivery", 10*time.Second, func() bool { return len(rcv.requests()) == 1 })
	first := rcv.requests()[0]
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(first.body, first.header); err != nil {
		t.Fatalf("signature does not verify: %v (%s)", err, first.signature)
	}
	if first.header.Get("Content-Type") != "application/json" || !strings.HasPrefix(first.id, "whd_") {
		t.Fatalf("headers %v", first.header)
	}
	ev := st.do("GET", "/v1/webhooks/events?limit=1", st.key, nil).json(t)["data"].([]any)[0].(map[string]any)
	want, _ := json.Marshal(ev["payload"])
	var gotBody, wantBody any
	json.Unmarshal(first.body, &gotBody)
	json.Unmarshal(want, &wantBody)
	if !reflect.DeepEqual(gotBody, wantBody) || ev["eventType"] != "account.credited" {
		t.Fatalf("body %s, event payload %s", first.body, want)
	}
	// The delivery is recorded as a success.
	waitFor(t, "the success to be recorded", 10*time.Second, func() bool {
		d := st.do("GET", "/v1/webhooks/deliveries?endpointId="+id, st.key, nil).json(t)["data"].([]any)
		return len(d) == 1 && d[0].(map[string]any)["status"] == "success"
	})

	// Rotation: for a day both secrets sign.
	r := st.do("POST", "/v1/webhooks/signing-secret/"+id+"/rotate", st.key, nil)
	st.mustStatus(r, 200)
	newSecret := r.json(t)["signingSecret"].(string)
	if newSecret == secret || !strings.HasPrefix(newSecret, "whsec_") {
		t.Fatalf("rotated secret %q", newSecret)
	}
	st.fund(st.key, "GHS", "10.00", "sig-2")
	waitFor(t, "the second delivery", 10*time.Second, func() bool { return len(rcv.requests()) == 2 })
	second := rcv.requests()[1]
	if n := len(strings.Fields(second.signature)); n != 2 {
		t.Fatalf("%d signatures during the rotation window, want 2", n)
	}
	for _, s := range []string{secret, newSecret} {
		wh, _ := standardwebhooks.NewWebhook(s)
		if err := wh.Verify(second.body, second.header); err != nil {
			t.Fatalf("secret %s does not verify after the rotation: %v", s[:10], err)
		}
	}
	other, _ := standardwebhooks.NewWebhook(actors.NewWebhookSecret())
	if err := other.Verify(second.body, second.header); err == nil {
		t.Fatal("an unrelated secret verifies")
	}

	// The endpoint test succeeds against a receiver that answers 2xx.
	r = st.do("POST", "/v1/webhooks/endpoints/"+id+"/test", st.key, nil)
	st.mustStatus(r, 200)
	test := r.json(t)["test"].(map[string]any)
	if test["success"] != true || test["statusCode"] != float64(204) || test["error"] != nil {
		t.Fatalf("test send: %v", test)
	}
	last := rcv.requests()[2]
	if !strings.Contains(string(last.body), `"event":"webhook.test"`) || last.id != test["deliveryId"] {
		t.Fatalf("test delivery %s: %s", last.id, last.body)
	}
	wh, _ = standardwebhooks.NewWebhook(newSecret)
	if err := wh.Verify(last.body, last.header); err != nil {
		t.Fatalf("test delivery does not verify: %v", err)
	}
}

// At least once under faults: the receiver answers 500, hangs past the
// timeout, or closes the connection after reading, at random. Every
// committed event still arrives, every copy of a delivery has the same
// webhook-id and body, and nothing arrives that the log does not hold.
func TestWebhookAtLeastOnceUnderFaults(t *testing.T) {
	schedule := make([]time.Duration, 30)
	for i := range schedule {
		schedule[i] = 20 * time.Millisecond
	}
	st := newStack(t, stackOptions{webhooks: &actors.WebhookConfig{Timeout: 200 * time.Millisecond, Schedule: schedule}})
	rcv := newReceiver(t, randomFaults(rand.New(rand.NewPCG(1, 2)), fault{"500", 2}, fault{"hang", 1}, fault{"close", 1}))
	rcv.hang = time.Second
	_, secret := st.createEndpoint(rcv.url(), "*")
	const events = 30
	for i := 0; i < events; i++ {
		st.fund(st.key, "GHS", "1.00", fmt.Sprint("fault-", i))
	}
	waitFor(t, "every delivery to succeed", 60*time.Second, func() bool {
		var pending int
		pending = webhooks.PendingDeliveryCount(st.sys.Reader())
		return pending == 0
	})
	checkAtLeastOnce(t, st.sys, rcv, secret, events)
}

// fault is an answer of a receiver's (see receiver.serve) and how many
// tenths of its requests get it.
type fault struct {
	answer string
	tenths int
}

// randomFaults is a receiver's behaviour that answers each request at
// random, drawing from rng: with each fault's answer for its tenths of
// the requests, in turn, and "ok" for the rest.
func randomFaults(rng *rand.Rand, faults ...fault) func(int) string {
	var mu sync.Mutex
	return func(int) string {
		mu.Lock()
		defer mu.Unlock()
		n := rng.IntN(10)
		for _, f := range faults {
			if n < f.tenths {
				return f.answer
			}
			n -= f.tenths
		}
		return "ok"
	}
}

// checkAtLeastOnce holds the receiver's log to the committed state: every
// committed event has a delivery that succeeded, each delivery arrived at
// least once with one body, and every request names a committed delivery.
func checkAtLeastOnce(t *testing.T, sys *actors.System, rcv *receiver, secret string, wantEvents int) {
	t.Helper()
	var deliveries []webhooks.Delivery
	var eventCount int
	{
		s := sys.Reader()
		for seq := uint64(1); seq <= webhooks.DeliveryCount(s); seq++ {
			d, _ := webhooks.DeliveryAt(s, seq)
			deliveries = append(deliveries, d)
		}
		eventCount = int(s.EventCount())
	}
	if eventCount < wantEvents || len(deliveries) != eventCount {
		t.Fatalf("%d events, %d deliveries, want at least %d events each with one delivery", eventCount, len(deliveries), wantEvents)
	}
	committed := map[string]webhooks.Delivery{}
	for _, d := range deliveries {
		if d.Status != webhooks.Success {
			t.Fatalf("delivery %s is %s after %d attempts (%s)", d.ID, d.Status, d.Attempts, d.LastError)
		}
		committed[d.ID] = d
	}
	bodies := map[string][]byte{}
	succeeded := map[string]bool{}
	wh, _ := standardwebhooks.NewWebhook(secret)
	for _, r := range rcv.requests() {
		if _, ok := committed[r.id]; !ok {
			t.Fatalf("the receiver got %s, which the log does not hold", r.id)
		}
		if b, seen := bodies[r.id]; seen && !bytes.Equal(b, r.body) {
			t.Fatalf("delivery %s arrived with two bodies:\n%s\n%s", r.id, b, r.body)
		}
		bodies[r.id] = r.body
		if err := wh.VerifyIgnoringTimestamp(r.body, r.header); err != nil {
			t.Fatalf("delivery %s does not verify: %v", r.id, err)
		}
		if r.answered == "ok" {
			succeeded[r.id] = true
		}
	}
	for id, d := range committed {
		if !succeeded[id] {
			t.Fatalf("delivery %s (event %s) was recorded as a success but never acknowledged", id, d.EventID)
		}
	}
	t.Logf("%d deliveries, %d requests", len(committed), len(rcv.requests()))
}
