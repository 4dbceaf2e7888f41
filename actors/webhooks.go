package actors

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"payments/ledger"
	"payments/ledger/webhooks"
)

// Webhook delivery. The ledger makes one delivery per event per subscribed
// endpoint, in the Apply that records the event, and keeps each delivery's
// attempts and next due time. On the leader, a driver actor follows the
// committed deliveries (a poll of the delivery log, plus a scan of every
// pending delivery when it gains leadership and every few seconds) and
// hands each to its endpoint's actor, one actor per endpoint, which
// schedules the attempts, runs them in worker goroutines (bounded per
// endpoint and overall, so a slow or dead endpoint holds only its own
// slots) and records each outcome through the log before it schedules the
// next. An attempt whose outcome never committed (the leader died
// mid-delivery) is made again by the next leader with the same webhook-id
// and body: delivery is at least once, and what a receiver acknowledged
// and the log recorded is never sent again.

// WebhookConfig configures webhook delivery. The zero value of each field
// takes its default.
type WebhookConfig struct {
	// Payload renders an event as the body of its deliveries. Without it
	// nothing is delivered (the deliveries stay pending).
	Payload func(ledger.Event) ([]byte, error)
	// Policy decides which URLs may receive webhooks.
	Policy WebhookURLPolicy
	// Timeout bounds one attempt: connect, send, and the response headers
	// (default 10s).
	Timeout time.Duration
	// Schedule is the delay before each retry after a failure; when it is
	// used up the delivery fails (default DefaultWebhookSchedule). Each
	// delay gets up to ±10% jitter.
	Schedule []time.Duration
	// Clock times the retries (default: Config.Clock).
	Clock Clock
	// EndpointConcurrency bounds the attempts in flight to one endpoint
	// (default 4); Concurrency bounds them overall (default 256).
	EndpointConcurrency int
	Concurrency         int
	// PollInterval is how often the leader looks for new deliveries in the
	// applied log (default 25ms).
	PollInterval time.Duration
}

// DefaultWebhookSchedule retries for about a day: 30s, 2m, 8m, 32m, 2h, 6h,
// 6h, 6h.
var DefaultWebhookSchedule = []time.Duration{
	30 * time.Second, 2 * time.Minute, 8 * time.Minute, 32 * time.Minute,
	2 * time.Hour, 6 * time.Hour, 6 * time.Hour, 6 * time.Hour,
}

// Limits of the delivery engine.
const (
	webhookPollBatchMax = 4096                  // deliveries read per poll
	webhookRescan       = 5 * time.Second       // how often to scan every pending delivery
	webhookSlotWait     = 20 * time.Millisecond // retry when the overall bound is reached
	webhookBackoff      = time.Second           // after an attempt that could not be recorded
	webhookErrorLen     = 500                   // bytes of a failed response kept as lastError
	webhookUserAgent    = "payments-webhooks/1"
)

type webhookEngine struct {
	cfg    WebhookConfig
	deps   *deps
	clock  Clock
	client *http.Client
	slots  chan struct{}
	driver *actor.PID
}

func startWebhooks(d *deps, as *actor.ActorSystem, cfg WebhookConfig) *webhookEngine {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Schedule == nil {
		cfg.Schedule = DefaultWebhookSchedule
	}
	if cfg.EndpointConcurrency <= 0 {
		cfg.EndpointConcurrency = 4
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 256
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 25 * time.Millisecond
	}
	e := &webhookEngine{cfg: cfg, deps: d, clock: cfg.Clock, slots: make(chan struct{}, cfg.Concurrency)}
	if e.clock == nil {
		e.clock = d.clock
	}
	e.client = &http.Client{
		Timeout: cfg.Timeout,
		// A redirect is an answer, not a new address to try: following it
		// would let a public URL lead to a private one.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           cfg.Policy.dialContext(cfg.Timeout),
			TLSHandshakeTimeout:   cfg.Timeout,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   cfg.EndpointConcurrency,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		},
	}
	e.driver = as.Root.Spawn(d.props(func() actor.Actor {
		return &webhookDriver{e: e, children: make(map[string]*actor.PID)}
	}))
	return e
}

type (
	whLeadership struct{ leading bool }
	whPoll       struct{}
	whRescan     struct{}
	whTrack      struct{ d webhooks.Delivery }
	// whDeliverNow asks for an attempt of a delivery now; reply gets nil
	// when the attempt has ended (or at once if the delivery is not
	// pending), or an error.
	whDeliverNow struct {
		d     webhooks.Delivery
		reply chan error
	}
	whDue   struct{ d webhooks.Delivery }
	whTimer struct {
		id  string
		gen uint64
	}
	whSlot struct{}
	whDone struct {
		id  string
		err error
	}
)

// webhookDriver follows the committed deliveries on the leader and routes
// each to its endpoint's actor.
type webhookDriver struct {
	e        *webhookEngine
	leading  bool
	ctx      context.Context
	cancel   context.CancelFunc
	children map[string]*actor.PID
	seen     uint64 // deliveries of the log already routed
	stopped  bool
}

func (w *webhookDriver) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		w.after(ctx, w.e.cfg.PollInterval, &whPoll{})
		w.after(ctx, webhookRescan, &whRescan{})
	case *actor.Stopping:
		w.stopped = true
		w.endTerm(ctx)
	case *whLeadership:
		if m.leading == w.leading {
			return
		}
		w.endTerm(ctx)
		if m.leading {
			w.leading = true
			w.ctx, w.cancel = context.WithCancel(context.Background())
			st := w.e.deps.state.Reader()
			w.seen = webhooks.DeliveryCount(st)
			w.routePending(ctx, st)
		}
	case *whPoll:
		if w.stopped {
			return
		}
		if w.leading {
			w.poll(ctx)
		}
		w.after(ctx, w.e.cfg.PollInterval, &whPoll{})
	case *whRescan:
		if w.stopped {
			return
		}
		if w.leading {
			w.routePending(ctx, w.e.deps.state.Reader())
		}
		w.after(ctx, webhookRescan, &whRescan{})
	case *whTrack:
		if w.leading && m.d.Status == webhooks.Pending {
			w.route(ctx, &whDue{m.d}, m.d.EndpointID)
		}
	case *whDeliverNow:
		if !w.leading {
			m.reply <- ErrNotLeader
			return
		}
		w.route(ctx, m, m.d.EndpointID)
	}
}

// routePending routes every pending delivery to its endpoint's actor,
// which drops those it has already.
// It also counts them, and finds the oldest, for the metrics.
func (w *webhookDriver) routePending(ctx actor.Context, st *ledger.Reader) {
	var cursor ledger.OpenCursor
	var count, oldestMs int64
	for {
		var pending []webhooks.Delivery
		var done bool
		pending, cursor, done = webhooks.PendingDeliveries(st, cursor, webhookPollBatchMax)
		for _, d := range pending {
			w.route(ctx, &whDue{d}, d.EndpointID)
			count++
			if oldestMs == 0 || d.CreatedAt < oldestMs {
				oldestMs = d.CreatedAt
			}
		}
		if done {
			w.e.deps.webhooks.pending.Store(count)
			w.e.deps.webhooks.oldestCreatedMs.Store(oldestMs)
			return
		}
	}
}

func (w *webhookDriver) after(ctx actor.Context, d time.Duration, msg any) {
	self, root := ctx.Self(), w.e.deps.root
	time.AfterFunc(d, func() { root.Send(self, msg) })
}

// poll routes the deliveries committed since the last poll.
func (w *webhookDriver) poll(ctx actor.Context) {
	var batch []webhooks.Delivery
	st := w.e.deps.state.Reader()
	n := webhooks.DeliveryCount(st)
	for w.seen < n && len(batch) < webhookPollBatchMax {
		w.seen++
		if d, ok := webhooks.DeliveryAt(st, w.seen); ok && d.Status == webhooks.Pending {
			batch = append(batch, d)
		}
	}
	for _, d := range batch {
		w.route(ctx, &whDue{d}, d.EndpointID)
	}
}

func (w *webhookDriver) route(ctx actor.Context, msg any, endpointID string) {
	pid, ok := w.children[endpointID]
	if !ok {
		a := &webhookEndpointActor{e: w.e, ctx: w.ctx, entries: make(map[string]*whEntry)}
		pid = ctx.Spawn(w.e.deps.props(func() actor.Actor { return a }))
		w.children[endpointID] = pid
	}
	ctx.Send(pid, msg)
}

// endTerm stops the endpoint actors and cancels their attempts in flight:
// an attempt cut short is not recorded, so the next leader makes it again.
func (w *webhookDriver) endTerm(ctx actor.Context) {
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
	for _, pid := range w.children {
		ctx.Stop(pid)
	}
	w.children = make(map[string]*actor.PID)
	w.leading = false
	w.e.deps.webhooks.pending.Store(0) // the next leader's to count
	w.e.deps.webhooks.oldestCreatedMs.Store(0)
}

// whEntry is one pending delivery an endpoint actor is working on.
type whEntry struct {
	d        webhooks.Delivery // as last read from the ledger
	due      time.Time
	timer    Timer
	gen      uint64 // which timer is current
	ready    bool   // due, waiting for a slot
	inflight bool
	waiters  []chan error
}

// webhookEndpointActor schedules and runs the attempts of one endpoint.
type webhookEndpointActor struct {
	e        *webhookEngine
	ctx      context.Context // the leadership term's
	entries  map[string]*whEntry
	inflight int
	gen      uint64
	slotWait bool
}

func (a *webhookEndpointActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Stopping:
		for _, ent := range a.entries {
			if ent.timer != nil {
				ent.timer.Stop()
			}
			a.notify(ent, ErrNotLeader)
		}
		a.entries = nil
	case *whDue:
		ent := a.entries[m.d.ID]
		switch {
		case ent == nil:
			ent = &whEntry{d: m.d}
			a.entries[m.d.ID] = ent
		case ent.inflight || m.d.Attempts < ent.d.Attempts:
			return // the attempt in flight, or a later read, decides
		case m.d.Attempts == ent.d.Attempts && m.d.NextAttemptAt == ent.d.NextAttemptAt:
			return // nothing new
		default:
			ent.d = m.d
		}
		a.schedule(ctx, ent, a.due(ent.d))
	case *whDeliverNow:
		ent := a.entries[m.d.ID]
		if ent == nil {
			d, ok := a.read(m.d.ID)
			if !ok || d.Status != webhooks.Pending {
				m.reply <- nil
				return
			}
			ent = &whEntry{d: d}
			a.entries[d.ID] = ent
		}
		ent.waiters = append(ent.waiters, m.reply)
		if !ent.inflight {
			a.schedule(ctx, ent, a.e.clock.Now())
		}
	case *whTimer:
		if ent := a.entries[m.id]; ent != nil && ent.gen == m.gen && !ent.inflight {
			ent.ready = true
			a.pump(ctx)
		}
	case *whSlot:
		a.slotWait = false
		a.pump(ctx)
	case *whDone:
		a.inflight--
		ent := a.entries[m.id]
		if ent == nil {
			return
		}
		ent.inflight = false
		a.notify(ent, nil)
		d, ok := a.read(m.id)
		if !ok || d.Status != webhooks.Pending {
			delete(a.entries, m.id)
		} else {
			ent.d = d
			due := a.due(d)
			if m.err != nil {
				// Not recorded (overloaded log, a render failure): the
				// delivery is still due; try again shortly.
				due = a.e.clock.Now().Add(webhookBackoff)
			}
			a.schedule(ctx, ent, due)
		}
		a.pump(ctx)
	}
}

func (a *webhookEndpointActor) read(id string) (webhooks.Delivery, bool) {
	st := a.e.deps.state.Reader()
	return webhooks.DeliveryByID(st, id)
}

func (a *webhookEndpointActor) notify(ent *whEntry, err error) {
	for _, w := range ent.waiters {
		select {
		case w <- err:
		default:
		}
	}
	ent.waiters = nil
}

// schedule makes ent due at due: ready now, or when its timer fires.
func (a *webhookEndpointActor) schedule(ctx actor.Context, ent *whEntry, due time.Time) {
	if ent.timer != nil {
		ent.timer.Stop()
		ent.timer = nil
	}
	a.gen++
	ent.gen, ent.due, ent.ready = a.gen, due, false
	wait := due.Sub(a.e.clock.Now())
	if wait <= 0 {
		ent.ready = true
		a.pump(ctx)
		return
	}
	self, root, id, gen := ctx.Self(), a.e.deps.root, ent.d.ID, ent.gen
	ent.timer = a.e.clock.AfterFunc(wait, func() { root.Send(self, &whTimer{id: id, gen: gen}) })
}

// pump starts the ready attempts, oldest due first, while slots are free.
func (a *webhookEndpointActor) pump(ctx actor.Context) {
	if a.inflight >= a.e.cfg.EndpointConcurrency {
		return
	}
	var ready []*whEntry
	for _, ent := range a.entries {
		if ent.ready && !ent.inflight {
			ready = append(ready, ent)
		}
	}
	slices.SortFunc(ready, func(x, y *whEntry) int {
		if c := x.due.Compare(y.due); c != 0 {
			return c
		}
		return int(x.d.Seq) - int(y.d.Seq)
	})
	for _, ent := range ready {
		if a.inflight >= a.e.cfg.EndpointConcurrency {
			return
		}
		select {
		case a.e.slots <- struct{}{}:
		default:
			if !a.slotWait {
				a.slotWait = true
				self, root := ctx.Self(), a.e.deps.root
				time.AfterFunc(webhookSlotWait, func() { root.Send(self, &whSlot{}) })
			}
			return
		}
		ent.ready, ent.inflight = false, true
		a.inflight++
		self, root, id, term := ctx.Self(), a.e.deps.root, ent.d.ID, a.ctx
		go func() {
			defer stopOnClosedStore()
			err := a.e.attempt(term, id)
			<-a.e.slots
			root.Send(self, &whDone{id: id, err: err})
		}()
	}
}

// attempt makes one attempt of the delivery as the ledger has it now and
// records its outcome. It returns an error when the outcome was not
// recorded.
func (e *webhookEngine) attempt(ctx context.Context, id string) error {
	st := e.deps.state.Reader()
	d, ok := webhooks.DeliveryByID(st, id)
	ep, epOK := webhooks.EndpointByID(st, d.EndpointID)
	ev, evOK := st.EventAt(d.EventSeq)
	if !ok || d.Status != webhooks.Pending || !epOK || ep.Deleted || !evOK {
		return nil // nothing to send: the ledger has moved on
	}
	if e.cfg.Payload == nil {
		return errors.New("webhooks: no payload renderer configured")
	}
	body, err := e.cfg.Payload(ev)
	if err != nil {
		e.deps.logger.Error("webhook payload did not render", "event", ev.ID, "err", err)
		return err
	}
	started := e.clock.Now()
	out := e.send(ctx, &ep, &d, body)
	if ctx.Err() != nil {
		return ErrNotLeader // the term ended mid-attempt; the next leader sends again
	}
	done := e.clock.Now()
	rec := &webhooks.RecordAttempt{
		At: done.UnixMilli(), StartedAt: started.UnixMilli(), DeliveryID: d.ID, Attempt: d.Attempts + 1,
		Succeeded: out.ok, StatusCode: int64(out.status), Error: out.err,
	}
	if !out.ok && !d.Test && int(d.Step) < len(e.cfg.Schedule) {
		rec.RetryAt = done.Add(jitter(e.cfg.Schedule[d.Step])).UnixMilli()
	}
	_, err = e.deps.proposer.ProposeWait(rec)
	switch {
	case err != nil:
		e.deps.webhooks.unrecorded.Add(1)
	case out.ok:
		e.deps.webhooks.succeeded.Add(1)
	default:
		e.deps.webhooks.failed.Add(1)
	}
	return err
}

// due is when a delivery's next attempt is due. One with no attempt since
// its schedule (re)started (Step 0: new, replayed, or retried by request)
// is due at once. Its NextAttemptAt is the leader's time when it was made
// (deliveries stay on real time, never on an organization's sandbox clock:
// ledger/clock.go), so this only keeps it from waiting on a leader whose
// clock ran ahead of this one's.
func (a *webhookEndpointActor) due(d webhooks.Delivery) time.Time {
	if d.Step == 0 {
		return a.e.clock.Now()
	}
	return time.UnixMilli(d.NextAttemptAt)
}

// jitter spreads a retry delay by up to ±10%, so that the retries of many
// deliveries that failed together do not arrive together.
func jitter(d time.Duration) time.Duration {
	spread := d / 10
	if spread <= 0 {
		return d
	}
	return d - spread + rand.N(2*spread+1)
}

type sendOutcome struct {
	ok     bool
	status int    // 0 when no HTTP answer came
	err    string // why it failed
}

// send POSTs one signed attempt. Only a 2xx answer is a success.
func (e *webhookEngine) send(ctx context.Context, ep *webhooks.Endpoint, d *webhooks.Delivery, body []byte) sendOutcome {
	if _, err := e.cfg.Policy.CheckSyntax(ep.URL); err != nil {
		return sendOutcome{err: err.Error()}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewReader(body))
	if err != nil {
		return sendOutcome{err: err.Error()}
	}
	ts := e.clock.Now()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", webhookUserAgent)
	req.Header.Set("webhook-id", d.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("webhook-signature", SignWebhook(ep.Secrets(ts.UnixMilli()), d.ID, ts.Unix(), body))
	var remote net.Addr // the receiver's address, as connected to
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(c httptrace.GotConnInfo) { remote = c.Conn.RemoteAddr() },
	}))
	resp, err := e.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if ue != nil && ue.Timeout() {
			return sendOutcome{err: "timed out after " + e.cfg.Timeout.String()}
		}
		return sendOutcome{err: deliveryFailure(err)}
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, webhookErrorLen))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return sendOutcome{ok: true, status: resp.StatusCode}
	}
	if !e.answerShown(remote) {
		snippet = nil
	}
	return sendOutcome{status: resp.StatusCode, err: attemptError(resp.StatusCode, snippet)}
}

// attemptError is a failed answer's error: its status, and the first bytes
// of its body when it may be shown (answerShown).
func attemptError(status int, snippet []byte) string {
	msg := "HTTP " + strconv.Itoa(status)
	if len(snippet) > 0 {
		msg += ": " + string(bytes.ToValidUTF8(snippet, []byte("?")))
	}
	return webhooks.CutText(msg, webhookErrorLen)
}

// answerShown reports whether the body of an answer from the receiver at
// remote may be quoted in the attempt's error (lastError, the test
// endpoint's answer): only a public receiver's, one production would send
// to. A receiver on loopback (which the sandbox allows) or at any other
// address outside that allowlist is known by its status and timing only:
// quoting what a local port says would let a merchant read the service's
// own network through its webhooks.
func (e *webhookEngine) answerShown(remote net.Addr) bool {
	tcp, ok := remote.(*net.TCPAddr)
	if !ok {
		return false
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return false
	}
	public := e.cfg.Policy
	public.AllowLoopback = false
	return public.CheckAddr(ip.Unmap()) == nil
}

// deliveryFailure says why an attempt got no answer, in words that name no
// address and quote nothing the network said: lastError (and the test
// endpoint's answer) must not turn the service into a port scanner. A
// refusal by the policy is said as it is.
func deliveryFailure(err error) string {
	var dnsErr *net.DNSError
	var tlsErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, ErrWebhookURL):
		return err.Error()
	case errors.As(err, &dnsErr):
		return "could not resolve the host"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "could not connect: connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection was closed before an answer"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "could not connect: host unreachable"
	case errors.As(err, &tlsErr):
		return "TLS handshake failed: the receiver's certificate is not valid for its host"
	case errors.As(err, &recordErr):
		return "TLS handshake failed: the receiver did not answer TLS"
	}
	return "could not connect"
}

// DeliverWebhookNow attempts a pending delivery now (the endpoint test) and
// waits until that attempt has ended and is recorded, or ctx ends. It
// returns ErrNotLeader on a follower, or when delivery is not configured.
func (s *System) DeliverWebhookNow(ctx context.Context, d webhooks.Delivery) error {
	if s.webhooks == nil {
		return ErrNotLeader
	}
	reply := make(chan error, 1)
	s.actors.Root.Send(s.webhooks.driver, &whDeliverNow{d: d, reply: reply})
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ErrOutcomeUnknown
	}
}

// TrackWebhookDelivery tells the engine of a delivery made due by a request
// (a retry), so it need not wait for its next scan.
func (s *System) TrackWebhookDelivery(d webhooks.Delivery) {
	if s.webhooks != nil {
		s.actors.Root.Send(s.webhooks.driver, &whTrack{d})
	}
}

// WebhookPolicy is the URL policy endpoints are checked against.
func (s *System) WebhookPolicy() WebhookURLPolicy { return s.webhookPolicy }
