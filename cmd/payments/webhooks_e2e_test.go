package main

import (
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// The binary delivers webhooks: a sandbox node sends a credit's event to a
// receiver on loopback, signed so that the official library verifies it.
func TestWebhookDeliveredByTheBinary(t *testing.T) {
	endToEnd(t)
	type delivery struct {
		header nethttp.Header
		body   []byte
	}
	got := make(chan delivery, 16)
	rcv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Clone(), body}
		w.WriteHeader(nethttp.StatusOK)
	}))
	defer rcv.Close()

	p := startReady(t, t.TempDir(), "--webhook-timeout", "2s")
	var created struct {
		Endpoint struct {
			ID string `json:"id"`
		} `json:"endpoint"`
	}
	// Ready means a leader is known; the bootstrap key commits just after.
	waitUntil(t, 10*time.Second, "the endpoint created", func() bool {
		st, err := call(p.addr, "POST", "/v1/webhooks/endpoints",
			map[string]any{"url": rcv.URL + "/hook", "events": []string{"account.credited"}}, &created)
		if st != 401 && !(err == nil && st == 201) {
			t.Fatalf("create endpoint: %d %v", st, err)
		}
		return err == nil && st == 201
	})
	var secret struct {
		SigningSecret string `json:"signingSecret"`
	}
	if st, err := call(p.addr, "GET", "/v1/webhooks/signing-secret/"+created.Endpoint.ID, nil, &secret); err != nil || st != 200 {
		t.Fatalf("signing secret: %d %v", st, err)
	}
	fundGHS(t, p.addr, "5.00", "wh-e2e")
	select {
	case d := <-got:
		wh, err := standardwebhooks.NewWebhook(secret.SigningSecret)
		if err != nil {
			t.Fatal(err)
		}
		if err := wh.Verify(d.body, d.header); err != nil {
			t.Fatalf("signature: %v\n%s", err, d.body)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("no delivery\n%s", p.stderr)
	}
}
