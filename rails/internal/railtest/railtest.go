package railtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"payments/actors/actorstest/testkit"
	"payments/rails/provider"
)

// callbacksMax bounds the callbacks an ingress holds for the test.
const callbacksMax = 16

// callbackWait is how long Next waits for a callback.
const callbackWait = 5 * time.Second

// Ingress is a loopback server standing for our callback route: it passes
// each request it receives to the test as a provider.Callback (header
// names lowercased) and answers 200 with its answer body.
type Ingress struct {
	URL       string
	srv       *httptest.Server
	callbacks chan provider.Callback
}

// NewIngress starts an ingress that answers with answer (nil: no body).
// The caller closes it, after the fake whose callbacks it receives.
func NewIngress(answer []byte) *Ingress {
	in := &Ingress{callbacks: make(chan provider.Callback, callbacksMax)}
	in.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		h := map[string]string{}
		for k := range req.Header {
			h[strings.ToLower(k)] = req.Header.Get(k)
		}
		in.callbacks <- provider.Callback{Header: h, Body: body, RemoteAddr: req.RemoteAddr, Query: req.URL.RawQuery}
		if answer == nil {
			w.WriteHeader(http.StatusOK)
			return
		}
		w.Write(answer)
	}))
	in.URL = in.srv.URL
	return in
}

// Close stops the ingress.
func (in *Ingress) Close() { in.srv.Close() }

// Next waits for the next callback the ingress received, failing t after
// callbackWait.
func (in *Ingress) Next(t testing.TB) provider.Callback {
	t.Helper()
	select {
	case cb := <-in.callbacks:
		return cb
	case <-time.After(callbackWait):
		t.Fatal("no callback arrived")
	}
	return provider.Callback{}
}

// None fails t if a callback is waiting; the caller first waits for the
// fake's callbacks in flight.
func (in *Ingress) None(t testing.TB) {
	t.Helper()
	select {
	case cb := <-in.callbacks:
		t.Fatalf("an unexpected callback: %s", cb.Body)
	default:
	}
}

// Rig is what an adapter's tests against its fake start from: the test,
// a clock the adapter and the fake share, and an ingress standing for our
// callback route. An adapter's rig embeds it beside its fake and adapter.
type Rig struct {
	T     *testing.T
	Clock *testkit.Clock
	In    *Ingress
}

// NewRig returns a rig whose clock reads start and whose ingress answers
// with answer (nil: no body). The ingress closes when t ends, after what
// the caller registers later (its fake, whose callbacks it receives).
func NewRig(t *testing.T, start time.Time, answer []byte) *Rig {
	r := &Rig{T: t, Clock: testkit.NewClock(start), In: NewIngress(answer)}
	t.Cleanup(r.In.Close)
	return r
}

// Callback waits for the next callback the ingress received.
func (r *Rig) Callback() provider.Callback {
	r.T.Helper()
	return r.In.Next(r.T)
}
