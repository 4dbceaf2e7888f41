package fakehttp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Core is the state every fake provider keeps beside its own: the log of
// the requests it received, the faults queued per operation, the access
// tokens it issued, the money that moved, the callbacks it sent and, once
// it listens, its loopback server. R is the fake's request, F its fault, M
// its movement and C its callback.
//
// A Core lives under its fake's lock: Begin, IssueToken, Authorized, Move
// and Send are called with it held (a fake holds it while it serves a
// request, so a logged request may still be written to until the answer
// is out); Listen is called before it serves, and its Controls take the
// lock themselves.
type Core[R, F, M, C any] struct {
	mu        *sync.Mutex
	client    *http.Client
	requests  []logged[R] // the latest RequestLogMax
	faults    map[string][]F
	tokens    map[string]token
	movements []M
	callbacks []C
	sending   sync.WaitGroup   // the callbacks in flight
	srv       *httptest.Server // nil until Listen
}

// token is an access token a fake issued: for a scope (a MoMo product; ""
// for a provider with one) until it expires.
type token struct {
	scope   string
	expires time.Time
}

// RequestLogMax bounds a long-running fake's request log: past it the
// older half is forgotten.
const RequestLogMax = 100_000

// logged is one request in the log, with the operation it was for.
type logged[R any] struct {
	op  string
	req *R
}

// callbackTimeout bounds one callback's delivery.
const callbackTimeout = 5 * time.Second

// NewCore returns an empty core guarded by mu, the fake's lock.
func NewCore[R, F, M, C any](mu *sync.Mutex) *Core[R, F, M, C] {
	return &Core[R, F, M, C]{
		mu:     mu,
		client: &http.Client{Timeout: callbackTimeout},
		faults: map[string][]F{},
		tokens: map[string]token{},
	}
}

// Listen serves h on an ephemeral loopback port and returns its URL.
func (c *Core[R, F, M, C]) Listen(h http.Handler) string {
	c.srv = httptest.NewServer(h)
	return c.srv.URL
}

// Controls are the side of a Core that tests use: a fake embeds them, so
// that they are its own methods (and Begin, Move and the rest, its own
// business, stay out of its API). They take the fake's lock themselves and
// are safe for concurrent use.
type Controls[R, F, M, C any] struct{ c *Core[R, F, M, C] }

// Controls returns c's side for tests.
func (c *Core[R, F, M, C]) Controls() Controls[R, F, M, C] { return Controls[R, F, M, C]{c} }

// Close stops the server after the callbacks in flight are done (the
// server Listen started, if it did).
func (x Controls[R, F, M, C]) Close() {
	c := x.c
	c.sending.Wait()
	if c.srv != nil {
		c.srv.Close()
	}
}

// Begin logs req, a request of op, and takes the first fault queued for
// op off the queue; nil when none is. Past RequestLogMax requests the
// older half of the log is forgotten. Called under the fake's lock.
func (c *Core[R, F, M, C]) Begin(op string, req *R) *F {
	if len(c.requests) >= RequestLogMax {
		c.requests = append(c.requests[:0], c.requests[RequestLogMax/2:]...)
	}
	c.requests = append(c.requests, logged[R]{op: op, req: req})
	q := c.faults[op]
	if len(q) == 0 {
		return nil
	}
	f := q[0]
	c.faults[op] = q[1:]
	return &f
}

// FailNext queues f, a one-shot fault, for the next request of op;
// several queue up.
func (x Controls[R, F, M, C]) FailNext(op string, f F) {
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults[op] = append(c.faults[op], f)
}

// Requests returns every request received (the latest RequestLogMax), in
// order, as copies safe from the fake's later writes.
func (x Controls[R, F, M, C]) Requests() []R {
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]R, len(c.requests))
	for i, l := range c.requests {
		out[i] = *l.req
	}
	return out
}

// Count returns how many requests of op were received (the log holds),
// refused ones included.
func (x Controls[R, F, M, C]) Count(op string) int {
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, l := range c.requests {
		if l.op == op {
			n++
		}
	}
	return n
}

// IssueToken issues a new access token of n random bytes for scope, valid
// until expires, and returns it. Called under the fake's lock.
func (c *Core[R, F, M, C]) IssueToken(scope string, expires time.Time, n int) string {
	tok := RandomHex(n)
	c.tokens[tok] = token{scope: scope, expires: expires}
	return tok
}

// Authorized reports whether r carries a bearer token issued for scope
// that has not expired at now. Called under the fake's lock.
func (c *Core[R, F, M, C]) Authorized(r *http.Request, scope string, now time.Time) bool {
	tok, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	t, known := c.tokens[tok]
	return found && known && t.scope == scope && now.Before(t.expires)
}

// ExpireTokens makes every token issued so far expired.
func (x Controls[R, F, M, C]) ExpireTokens() {
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, t := range c.tokens {
		t.expires = time.Time{}
		c.tokens[k] = t
	}
}

// Move records money that moved and returns how many movements there have
// been, this one included. Called under the fake's lock.
func (c *Core[R, F, M, C]) Move(m M) int {
	c.movements = append(c.movements, m)
	return len(c.movements)
}

// Movements returns the money that moved, in order.
func (x Controls[R, F, M, C]) Movements() []M {
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]M(nil), c.movements...)
}

// Send delivers body to url with method, once, in the background and with
// no retry, and keeps what sent makes of the outcome: the receiver's
// status, or the error that kept the callback from being delivered.
// Called under the fake's lock.
func (c *Core[R, F, M, C]) Send(method, url string, body []byte, sent func(status int, err error) C) {
	c.sending.Add(1)
	go func() {
		defer c.sending.Done()
		status := 0
		req, err := http.NewRequest(method, url, bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			var resp *http.Response
			if resp, err = c.client.Do(req); err == nil {
				status = resp.StatusCode
				resp.Body.Close()
			}
		}
		c.mu.Lock()
		c.callbacks = append(c.callbacks, sent(status, err))
		c.mu.Unlock()
	}()
}

// Callbacks waits for the callbacks in flight and returns those sent, in
// the order they were done.
func (x Controls[R, F, M, C]) Callbacks() []C {
	c := x.c
	c.sending.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]C(nil), c.callbacks...)
}

// HandleControls serves the controls every fake has under /_fake/:
// POST expire-tokens expires the tokens, GET requests answers the log.
func (c *Core[R, F, M, C]) HandleControls(mux *http.ServeMux) {
	mux.HandleFunc("POST /_fake/expire-tokens", func(w http.ResponseWriter, _ *http.Request) {
		c.Controls().ExpireTokens()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /_fake/requests", func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, c.Controls().Requests())
	})
}

// HeldMax bounds the payouts a Held keeps; past it they are decided at
// once.
const HeldMax = 1024

// Held keeps payouts undecided while a test holds them: it stands for
// payouts a provider takes its time over, so that a test can act while
// they are at the provider. Its zero value holds nothing. It lives under
// its fake's lock.
type Held[T any] struct {
	holding bool
	held    []T
}

// Start makes Keep keep the payouts from now on.
func (h *Held[T]) Start() { h.holding = true }

// Keep keeps t and reports true while holding and under HeldMax; false:
// the fake decides t at once.
func (h *Held[T]) Keep(t T) bool {
	if !h.holding || len(h.held) >= HeldMax {
		return false
	}
	h.held = append(h.held, t)
	return true
}

// Release stops holding and decides the payouts kept, in the order they
// arrived, with decide; it returns how many there were.
func (h *Held[T]) Release(decide func(T)) int {
	held := h.held
	h.holding, h.held = false, nil
	for _, t := range held {
		decide(t)
	}
	return len(held)
}
