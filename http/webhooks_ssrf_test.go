package http_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"

	"payments/actors"
	"payments/actors/actorstest/testkit"
)

// switchDNS is a resolver whose answers a test changes while the service
// reads them.
type switchDNS struct {
	mu sync.Mutex
	m  map[string]string
}

func (r *switchDNS) set(host, ip string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[host] = ip
}

func (r *switchDNS) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return testkit.DNS(r.m).LookupIPAddr(ctx, host)
}

// On production the test endpoint is no port scanner: an address outside
// the allowlist is refused at creation, and a name that later resolves to
// a local listener is refused at the dial, so the answer carries neither
// the listener's body nor a socket error.
func TestWebhookTestEndpointIsNoPortScanner(t *testing.T) {
	dns := &switchDNS{m: map[string]string{"hooks.example.com": "93.184.216.34"}}
	st := newStack(t, stackOptions{live: true, webhooks: &actors.WebhookConfig{Policy: actors.WebhookURLPolicy{Resolver: dns}}})
	rcv := newReceiver(t, func(int) string { return "500" })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(rcv.srv.URL, "http://"))

	for _, u := range []string{
		"https://192.0.2.2:" + port + "/hook", "https://127.0.0.1:" + port + "/hook", "https://[::127.0.0.1]:" + port + "/hook",
		"https://[::ffff:0:7f00:1]:" + port + "/hook", "https://[fec0::1]:" + port + "/hook", "https://[100::1]:" + port + "/hook",
		"https://[2001:db8::1]:" + port + "/hook", "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]:" + port + "/hook",
	} {
		body, _ := json.Marshal(map[string]any{"url": u, "events": []string{"*"}})
		r := st.do("POST", "/v1/webhooks/endpoints", st.key, body)
		if r.status != 400 || r.json(t)["error"] != "validation_error" {
			t.Errorf("%s: %d %s, want 400 validation_error", u, r.status, r.body)
		}
	}

	body, _ := json.Marshal(map[string]any{"url": "https://hooks.example.com:" + port + "/hook", "events": []string{"*"}})
	r := st.do("POST", "/v1/webhooks/endpoints", st.key, body)
	st.mustStatus(r, 201)
	id := r.json(t)["endpoint"].(map[string]any)["id"].(string)
	dns.set("hooks.example.com", "127.0.0.1") // rebinding to the local listener

	r = st.do("POST", "/v1/webhooks/endpoints/"+id+"/test", st.key, nil)
	st.mustStatus(r, 200)
	test := r.json(t)["test"].(map[string]any)
	msg, _ := test["error"].(string)
	if test["success"] != false || test["statusCode"] != nil || !strings.Contains(msg, "resolves to 127.0.0.1, which is loopback") {
		t.Fatalf("test send after rebinding: %s", r.body)
	}
	if strings.Contains(string(r.body), "receiver is down") || strings.Contains(string(r.body), "connect:") {
		t.Fatalf("the answer echoes the local listener: %s", r.body)
	}
	if n := len(rcv.requests()); n != 0 {
		t.Fatalf("the local listener got %d requests", n)
	}
}

// On the sandbox, which allows loopback receivers, the test endpoint is no
// port reader either: a loopback receiver's failed answer is known by its
// status and timing only, in the test's answer and in the delivery, never
// by its body.
func TestWebhookTestToLoopbackShowsNoBody(t *testing.T) {
	st := newStack(t, stackOptions{})
	rcv := newReceiver(t, func(int) string { return "500" }) // answers "receiver is down"
	id, _ := st.createEndpoint(rcv.url(), "*")

	r := st.do("POST", "/v1/webhooks/endpoints/"+id+"/test", st.key, nil)
	st.mustStatus(r, 200)
	test := r.json(t)["test"].(map[string]any)
	if test["success"] != false || test["statusCode"] != 500.0 || test["error"] != "HTTP 500" {
		t.Fatalf("test send to a loopback receiver: %s", r.body)
	}
	d := st.do("GET", "/v1/webhooks/deliveries/"+test["deliveryId"].(string), st.key, nil)
	st.mustStatus(d, 200)
	delivery, _ := d.json(t)["delivery"].(map[string]any)
	attempts, _ := delivery["attemptHistory"].([]any)
	if delivery["lastError"] != "HTTP 500" || len(attempts) != 1 {
		t.Fatalf("the delivery: %s", d.body)
	}
	if a := attempts[0].(map[string]any); a["error"] != "HTTP 500" || a["statusCode"] != 500.0 || a["durationMs"] == nil {
		t.Fatalf("the attempt: %v", a)
	}
	for _, b := range [][]byte{r.body, d.body} {
		if strings.Contains(string(b), "receiver is down") {
			t.Fatalf("the loopback receiver's body is in an answer: %s", b)
		}
	}
	if n := len(rcv.requests()); n != 1 {
		t.Fatalf("the receiver got %d requests, want the test's one", n)
	}
}
