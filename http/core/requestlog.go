package core

import (
	"bytes"
	"cmp"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	json "github.com/goccy/go-json/v2"
	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/http/redact"
	"payments/http/requestrecord"
	"payments/ledger"
)

// The request log: every API request made with a key, every failed
// authentication, and every request no route takes (404, 405), is
// recorded on the node that served it (contract, Authentication 6). The
// request path pays for a copy of what the record needs into a pooled
// buffer and a non-blocking send to a bounded queue; a
// full queue drops the record and counts it (RequestLogDropped). One
// recorder goroutine wakes every requestLogGatherDelay while records wait,
// holds each until requestLogReorderDelay after its request began so that
// records are written in the order of their positions, then redacts
// (package redact), encodes (package requestrecord) and writes them in batches to the
// node's RequestStore. Requests a follower relays to the leader are
// recorded by the leader, whose request id the client sees.
//
// Request ids say which node holds the record: "req_", seven characters of
// the second (as every id), three characters naming the node (nodeTag),
// then thirteen random ones. GET /v1/requests/{id} looks the record up on
// the node the tag names (requests.go).

// RequestStore is where a node keeps its request log (package
// wal/requestlog's Store). Append and Commit are called from the recorder
// goroutine only; Get and Scan from any.
type RequestStore interface {
	// NextSeq draws the position of a record still to be appended; safe
	// for concurrent use.
	NextSeq() uint64
	// Append adds a record at position seq to the batch the next Commit
	// writes.
	Append(seq uint64, id, org string, at time.Time, value []byte) error
	// Commit writes the batch.
	Commit() error
	// Get returns the record id, appended at position seq, if it belongs
	// to org and is within its retention.
	Get(seq uint64, id, org string) ([]byte, bool, error)
	// Scan calls fn with org's records within their retention, newest
	// first, from below position before, until fn returns false.
	Scan(org string, before uint64, fn func(pos uint64, at time.Time, value []byte) bool) error
}

const (
	requestLogQueueDefault = 8192
	// requestBodyLoggedBytesMax is the largest body the log keeps
	// (redacted); of a larger one it keeps the size and content type.
	requestBodyLoggedBytesMax = 16 << 10
	// errorBodyReadBytesMax bounds the error response copied to read its
	// code from.
	errorBodyReadBytesMax = 4 << 10
	requestLogBatchMax    = 256
	// requestLogGatherDelay is how long the recorder lets records gather
	// once one arrives: under load it then wakes once per delay, not once
	// per request, and writes what gathered as one batch.
	requestLogGatherDelay = 10 * time.Millisecond
	// requestLogReorderDelay is how long after its request began a record
	// waits, so that records are written in the order of their positions:
	// a request that takes longer makes a late record (package
	// requestlog keeps those apart), the rare one.
	requestLogReorderDelay = 100 * time.Millisecond
	// requestLogHeldMax bounds the records waiting for their turn; past it
	// the oldest are written at once.
	requestLogHeldMax = 8192
	// failedAuthRecordsPerSecond bounds the records without a valid key a
	// node records (failed authentications, requests to no route): anyone
	// can send them, and a flood of them must not crowd the
	// organizations' records out of the queue or the log.
	failedAuthRecordsPerSecond = 50
	// requestStateBufMax is the largest buffer a pooled record keeps.
	requestStateBufMax = 64 << 10
)

// requestStateKey is the user value under which a request's record in
// the making travels through the handlers.
const requestStateKey = "payments.request"

// requestState is what the request path copies out of a request for its
// record. It is pooled: after the send, the recorder owns it.
type requestState struct {
	id       string
	seq      uint64 // the record's position in the node's log, named by id
	start    time.Time
	duration time.Duration
	status   int
	method   string
	keyID    string // the authenticated key; "" when none
	org      string
	keyHint  string // a failed authentication's presented key: prefix and last four
	// failedKeyID is the key a failed authentication presented, when it
	// is one of ours (revoked): the record goes to its organization.
	failedKeyID string
	// member: keyID (or failedKeyID, for a failed sign-in) is a dashboard
	// team member's id, not a key's.
	member bool
	// unrouted: no route took it (404, 405); recorded with a key or
	// without, as a failed authentication is.
	unrouted bool
	clientIP netip.Addr
	// remote is the connection's peer when it alone names the client: the
	// recorder makes it clientIP, off the request path.
	remote net.Addr
	// clientVouched: clientIP is the address a follower vouched for,
	// verified on the way in (checkForwardedClient).
	clientVouched bool
	forwarded     bool // it carries the header of a request a node relayed
	relayed       bool // a follower relayed it to the leader, which records it

	bodyBytes int
	bodyKept  bool
	// buf holds the path, the raw query, the content type, the body (when
	// kept) and an error response, at these ends.
	buf                                         []byte
	pathEnd, queryEnd, typeEnd, bodyEnd, errEnd int
}

var requestStatePool = sync.Pool{New: func() any { return new(requestState) }}

func releaseRequestState(st *requestState) {
	buf := st.buf[:0]
	if cap(buf) > requestStateBufMax {
		buf = nil
	}
	*st = requestState{buf: buf}
	requestStatePool.Put(st)
}

func requestStateOf(ctx *fasthttp.RequestCtx) *requestState {
	st, _ := ctx.UserValue(requestStateKey).(*requestState)
	return st
}

// noteKey records the key that authenticated a request.
func noteKey(ctx *fasthttp.RequestCtx, key *ledger.APIKey) {
	if st := requestStateOf(ctx); st != nil {
		st.keyID, st.org = key.ID, key.OrgID
	}
}

// noteUnrouted marks a request no route took (an unknown path, a method
// the path does not allow) for the request log, under the key it
// presented when that key is valid: a wrong path or method is what an
// integrator debugs first, in the organization's log.
func (s *Server) noteUnrouted(ctx *fasthttp.RequestCtx) {
	st := requestStateOf(ctx)
	if st == nil {
		return
	}
	st.unrouted = true
	if s.Config.Actors == nil || len(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)) == 0 {
		return
	}
	if key, err := s.authenticate(ctx); err == nil {
		noteKey(ctx, &key)
	}
}

// noteMember records that a dashboard request was made by m, for the
// request log (actor type "member", its id), like noteKey for keys.
func NoteMember(ctx *fasthttp.RequestCtx, memberID, orgID string) {
	if st := requestStateOf(ctx); st != nil {
		st.keyID, st.org, st.member = memberID, orgID, true
	}
}

// noteFailedSignIn records a failed dashboard sign-in of a member, so
// that it goes to the member's organization's log.
func NoteFailedSignIn(ctx *fasthttp.RequestCtx, memberID, orgID string) {
	if st := requestStateOf(ctx); st != nil {
		st.failedKeyID, st.org, st.member = memberID, orgID, true
	}
}

// dashboardFormSecrets are the dashboard forms' fields that a record never
// keeps, not even redacted.
var dashboardFormSecrets = map[string]bool{"csrf": true, "current": true, "password": true, "confirm": true}

// appendDashboardForm appends a dashboard form a member posted as a JSON
// object of its fields, less its secrets, for the redactor to read like an
// API body.
func appendDashboardForm(b []byte, ctx *fasthttp.RequestCtx) []byte {
	fields := map[string]string{}
	ctx.PostArgs().VisitAll(func(k, v []byte) {
		if !dashboardFormSecrets[string(k)] {
			fields[string(k)] = string(v)
		}
	})
	out, err := json.Marshal(fields)
	if err != nil {
		return b
	}
	return append(b, out...)
}

func isFormContentType(ct []byte) bool {
	return bytes.HasPrefix(bytes.ToLower(ct), []byte("application/x-www-form-urlencoded"))
}

// noteForwarded marks a request that says a node relayed it.
func noteForwarded(ctx *fasthttp.RequestCtx) {
	if st := requestStateOf(ctx); st != nil {
		st.forwarded = true
	}
}

// noteRelayed marks a request this node relayed to the leader.
func noteRelayed(ctx *fasthttp.RequestCtx) {
	if st := requestStateOf(ctx); st != nil {
		st.relayed = true
	}
}

// nodeTag is the three base-36 characters of a request id that name the
// node that served it: a hash of the node id, so that every node computes
// every peer's tag. Two nodes may share a tag; a lookup then asks each.
func NodeTag(nodeID string) string {
	h := fnv.New32a()
	h.Write([]byte(nodeID))
	var b [3]byte
	putBase36(b[:], uint64(h.Sum32()))
	return string(b[:])
}

const idTimeAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

// putBase36 writes v modulo 36^len(b) in base 36, most significant digit
// first.
func putBase36(b []byte, v uint64) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = idTimeAlphabet[v%36]
		v /= 36
	}
}

// Request ids: "req_" (4), the second (7), the node's tag (3), the record's
// position in that node's log (10, base 36: positions count microseconds
// from 1970, which 10 digits hold until 2085), random (3). The position
// makes a lookup by id one read of the node's log, with no index of ids.
const (
	requestIDPrefix   = "req_"
	requestIDTagStart = len(requestIDPrefix) + 7
	requestIDSeqStart = requestIDTagStart + 3
	requestIDSeqLen   = 10
	requestIDLen      = requestIDSeqStart + requestIDSeqLen + 3
)

// newRequestID draws a request id that names this node and the position
// its record takes in the node's log.
func (s *Server) newRequestID(now time.Time) (string, uint64) {
	var seq uint64
	if s.Config.RequestLog != nil {
		seq = s.Config.RequestLog.NextSeq()
	} else {
		seq = s.requestSeq.Add(1)
	}
	var b [requestIDLen]byte
	n := copy(b[:], requestIDPrefix)
	putBase36(b[n:requestIDTagStart], uint64(max(now.Unix(), 0)))
	copy(b[requestIDTagStart:], s.Tag)
	putBase36(b[requestIDSeqStart:requestIDSeqStart+requestIDSeqLen], seq)
	putBase36(b[requestIDSeqStart+requestIDSeqLen:], rand.Uint64())
	return string(b[:]), seq
}

// requestTag returns the node tag of a request id of this service's shape.
func RequestTag(id string) (string, bool) {
	if len(id) != requestIDLen || id[:len(requestIDPrefix)] != requestIDPrefix {
		return "", false
	}
	for i := len(requestIDPrefix); i < len(id); i++ {
		if c := id[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return "", false
		}
	}
	return id[requestIDTagStart : requestIDTagStart+3], true
}

// requestSeq returns the log position a request id of this service's shape
// names.
func RequestSeq(id string) uint64 {
	var seq uint64
	for i := requestIDSeqStart; i < requestIDSeqStart+requestIDSeqLen && i < len(id); i++ {
		c := id[i]
		d := uint64(c - '0')
		if c >= 'a' {
			d = uint64(c-'a') + 10
		}
		seq = seq*36 + d
	}
	return seq
}

// requestID is the request's id: the one its record carries, or a fresh
// one for a request outside the log's wrapper.
func (s *Server) RequestID(ctx *fasthttp.RequestCtx) string {
	if st := requestStateOf(ctx); st != nil {
		return st.id
	}
	return s.freshRequestID()
}

// freshRequestID draws a request id no record will carry.
func (s *Server) freshRequestID() string {
	id, _ := s.newRequestID(time.Now())
	return id
}

// requestRecorder owns the queue and the recorder goroutine.
type requestRecorder struct {
	store   RequestStore
	logger  interface{ Warn(string, ...any) }
	queue   chan *requestState
	dropped atomic.Uint64
	// failedAuth* bound the failed authentications recorded per second;
	// past it they are counted, not recorded.
	failedAuthSecond   atomic.Int64
	failedAuthInSecond atomic.Int64
	failedAuthDropped  atomic.Uint64
	stop               chan struct{}
	done               chan struct{}
	once               sync.Once

	red *redact.Redactor
	out []byte // encode's, reused

	// clientIP notes the address a record names when no follower vouched
	// for one: the one IP allowlists judge by (forwardauth.go), unknown
	// for a relayed request no node vouched for.
	clientIP func(*fasthttp.RequestCtx, *requestState)
}

func newRequestRecorder(store RequestStore, queueLen int, logger interface{ Warn(string, ...any) }) *requestRecorder {
	if queueLen <= 0 {
		queueLen = requestLogQueueDefault
	}
	r := &requestRecorder{store: store, logger: logger, queue: make(chan *requestState, queueLen),
		stop: make(chan struct{}), done: make(chan struct{}), red: redact.New()}
	go r.run()
	return r
}

// close stops the recorder once it has written what is queued.
func (r *requestRecorder) close() {
	r.once.Do(func() { close(r.stop) })
	<-r.done
}

// recordRequests wraps the router: every request gets its id here, and
// those the log keeps are handed to the recorder when answered.
func (s *Server) recordRequests(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	if s.recorder == nil {
		return next
	}
	return func(ctx *fasthttp.RequestCtx) {
		st := requestStatePool.Get().(*requestState)
		st.start = time.Now()
		st.id, st.seq = s.newRequestID(st.start)
		ctx.SetUserValue(requestStateKey, st)
		next(ctx)
		ctx.SetUserValue(requestStateKey, nil)
		if st.keyID == "" && ctx.Response.StatusCode() == fasthttp.StatusUnauthorized {
			s.attributeFailedAuth(ctx, st)
		}
		s.recorder.capture(ctx, st)
	}
}

// attributeFailedAuth finds the organization of a failed authentication
// that presented one of its keys, revoked since: the organization then
// sees the attempt in its log. An unknown key belongs to no organization.
func (s *Server) attributeFailedAuth(ctx *fasthttp.RequestCtx, st *requestState) {
	if s.Config.Actors == nil || st.relayed {
		return
	}
	secret, ok := bearerSecret(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))
	if !ok {
		return
	}
	if key, found := s.Config.Actors.Reader().APIKeyByHash(actors.KeyDigest(secret)); found {
		st.failedKeyID, st.org = key.ID, key.OrgID
	}
}

// capture copies what the record needs from the answered request and
// queues it, or drops it when the queue is full. Runs on the request path:
// copies only, no encoding.
func (r *requestRecorder) capture(ctx *fasthttp.RequestCtx, st *requestState) {
	status := ctx.Response.StatusCode()
	// A failed sign-in refused by the lock-out (429) is kept like one
	// refused for its password (401).
	failedSignIn := st.member && st.keyID == "" && status == fasthttp.StatusTooManyRequests
	if st.relayed || st.keyID == "" && status != fasthttp.StatusUnauthorized && !failedSignIn && !st.unrouted {
		releaseRequestState(st)
		return
	}
	if st.keyID == "" && !r.takeFailedAuth(st.start) {
		r.failedAuthDropped.Add(1)
		releaseRequestState(st)
		return
	}
	st.duration = time.Since(st.start)
	st.status = status
	st.method = methodName(ctx.Method())
	buf := append(st.buf[:0], ctx.Path()...)
	st.pathEnd = len(buf)
	buf = append(buf, ctx.URI().QueryString()...)
	st.queryEnd = len(buf)
	ct := ctx.Request.Header.ContentType()
	buf = append(buf, ct...)
	st.typeEnd = len(buf)
	if st.keyID != "" && ctx.RequestBodyStream() == nil {
		// Only a body in memory is kept: fasthttp read it whole, or the
		// pipeline did (readBody releases the stream). One refused before
		// or while it was read (a failed authentication, a missing scope,
		// the bound on bodies in flight) stays unread (body.go), and the
		// record keeps its declared size.
		body := ctx.Request.Body()
		st.bodyBytes = len(body)
		if len(body) > 0 && len(body) <= requestBodyLoggedBytesMax && isJSONContentType(ct) {
			buf = append(buf, body...)
			st.bodyKept = true
		} else if st.member && len(body) > 0 && len(body) <= requestBodyLoggedBytesMax && isFormContentType(ct) {
			buf = appendDashboardForm(buf, ctx)
			st.bodyKept = true
		}
	} else {
		st.bodyBytes = max(ctx.Request.Header.ContentLength(), 0)
	}
	if st.keyID == "" {
		st.keyHint = keyHintOf(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))
	}
	st.bodyEnd = len(buf)
	if status >= 400 {
		if b := ctx.Response.Body(); len(b) <= errorBodyReadBytesMax {
			buf = append(buf, b...)
		}
	}
	st.errEnd = len(buf)
	st.buf = buf
	if !st.clientVouched {
		r.clientIP(ctx, st)
	}
	select {
	case r.queue <- st:
	default:
		r.dropped.Add(1)
		releaseRequestState(st)
	}
}

// takeFailedAuth reports whether a failed authentication arriving at now
// is within this second's budget. The count restarts each second; two
// requests racing over the boundary may both restart it, which only errs
// by a few records.
func (r *requestRecorder) takeFailedAuth(now time.Time) bool {
	sec := now.Unix()
	if r.failedAuthSecond.Load() != sec {
		r.failedAuthSecond.Store(sec)
		r.failedAuthInSecond.Store(0)
	}
	return r.failedAuthInSecond.Add(1) <= failedAuthRecordsPerSecond
}

// Dropped is how many records a full queue refused since the start.
func (r *requestRecorder) Dropped() uint64 { return r.dropped.Load() }

// RequestLogDropped is how many request records this node dropped because
// its recorder's queue was full.
func (s *Server) RequestLogDropped() uint64 {
	if s.recorder == nil {
		return 0
	}
	return s.recorder.Dropped()
}

// RequestLogFailedAuthDropped is how many failed authentications this node
// did not record, past failedAuthRecordsPerSecond.
func (s *Server) RequestLogFailedAuthDropped() uint64 {
	if s.recorder == nil {
		return 0
	}
	return s.recorder.failedAuthDropped.Load()
}

var KnownMethods = [...]string{
	fasthttp.MethodGet, fasthttp.MethodPost, fasthttp.MethodPut, fasthttp.MethodPatch,
	fasthttp.MethodDelete, fasthttp.MethodHead, fasthttp.MethodOptions,
}

// methodName returns a request method without allocating for the usual
// ones.
func methodName(m []byte) string {
	for _, k := range KnownMethods {
		if string(m) == k {
			return k
		}
	}
	return string(m)
}

// keyHintOf is what the log keeps of a presented key that failed to
// authenticate: its prefix and last four characters, and only for a value
// shaped as our keys are and long enough that four characters give little
// away; "" otherwise.
func keyHintOf(authorization []byte) string {
	secret, ok := bearerSecret(authorization)
	if !ok {
		return ""
	}
	const prefixLen = len("sk_test_")
	if len(secret) < prefixLen+16 || !(bytes.HasPrefix(secret, []byte("sk_test_")) || bytes.HasPrefix(secret, []byte("sk_live_"))) {
		return ""
	}
	for _, c := range secret {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return ""
		}
	}
	return string(secret[:prefixLen]) + "…" + string(secret[len(secret)-4:])
}

func (r *requestRecorder) run() {
	defer close(r.done)
	var fresh, held []*requestState
	// Drops are told to the operator once a minute at most, besides the
	// metric that counts them.
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	gather := time.NewTimer(requestLogGatherDelay)
	gather.Stop()
	var told, toldFailedAuth uint64
	report := func() {
		if d := r.dropped.Load(); d != told {
			r.logger.Warn("request log: queue full, records dropped", "dropped", d-told, "droppedTotal", d)
			told = d
		}
		if d := r.failedAuthDropped.Load(); d != toldFailedAuth {
			r.logger.Warn("request log: failed authentications past the per-second bound, not recorded",
				"dropped", d-toldFailedAuth, "droppedTotal", d)
			toldFailedAuth = d
		}
	}
	stopping := false
	for {
		if len(held) == 0 && !stopping {
			select {
			case <-tick.C:
				report()
				continue
			case st := <-r.queue:
				fresh = append(fresh, st)
			case <-r.stop:
				stopping = true
			}
		}
		// Let records gather while this goroutine is off the queue: a
		// send then wakes no one.
		if !stopping {
			gather.Reset(requestLogGatherDelay)
			select {
			case <-gather.C:
			case <-r.stop:
				gather.Stop()
				stopping = true
			}
		}
		for len(r.queue) > 0 {
			fresh = append(fresh, <-r.queue)
		}
		held = mergeBySeq(held, fresh)
		fresh = fresh[:0]
		// Records are written in the order of their positions once every
		// request that began before them has most likely ended: the log
		// then only ever writes at its end (package requestlog).
		due := len(held)
		if !stopping {
			cutoff := time.Now().Add(-requestLogReorderDelay)
			due = 0
			for due < len(held) && (held[due].start.Before(cutoff) || len(held)-due > requestLogHeldMax) {
				due++
			}
		}
		for i := 0; i < due; i += requestLogBatchMax {
			r.write(held[i:min(i+requestLogBatchMax, due)])
		}
		n := copy(held, held[due:])
		clear(held[n:])
		held = held[:n]
		if stopping && len(held) == 0 && len(r.queue) == 0 {
			return
		}
		select {
		case <-tick.C:
			report()
		default:
		}
	}
}

// mergeBySeq sorts fresh by position and merges it into held, which is in
// that order.
func mergeBySeq(held, fresh []*requestState) []*requestState {
	if len(fresh) == 0 {
		return held
	}
	bySeq := func(a, b *requestState) int { return cmp.Compare(a.seq, b.seq) }
	slices.SortFunc(fresh, bySeq)
	if len(held) == 0 || held[len(held)-1].seq < fresh[0].seq {
		return append(held, fresh...)
	}
	merged := make([]*requestState, 0, len(held)+len(fresh))
	i, j := 0, 0
	for i < len(held) && j < len(fresh) {
		if held[i].seq < fresh[j].seq {
			merged = append(merged, held[i])
			i++
		} else {
			merged = append(merged, fresh[j])
			j++
		}
	}
	merged = append(merged, held[i:]...)
	return append(merged, fresh[j:]...)
}

func (r *requestRecorder) write(batch []*requestState) {
	for _, st := range batch {
		r.out = r.encode(r.out[:0], st)
		if err := r.store.Append(st.seq, st.id, st.org, st.start, r.out); err != nil {
			r.logger.Warn("request log: record refused", "err", err)
		}
		releaseRequestState(st)
	}
	if err := r.store.Commit(); err != nil {
		r.logger.Warn("request log: write failed", "records", len(batch), "err", err)
	}
}

// encode redacts a record and appends its stored form to b (package
// requestrecord), from the record's buffer without copies.
func (r *requestRecorder) encode(b []byte, st *requestState) []byte {
	rec := requestrecord.Record{
		Start:          st.start,
		Status:         st.status,
		DurationMicros: st.duration.Microseconds(),
		BodyBytes:      st.bodyBytes,
		Actor:          requestrecord.ActorAnonymous,
		ID:             st.id,
		Method:         st.method,
		Path:           redact.Path(bufString(st.buf[:st.pathEnd])),
		Query:          redact.Query(bufString(st.buf[st.pathEnd:st.queryEnd])),
		Code:           errorCodeOf(st.buf[st.bodyEnd:st.errEnd]),
		KeyHint:        st.keyHint,
		ContentType:    bufString(st.buf[st.queryEnd:st.typeEnd]),
	}
	switch {
	case st.keyID != "":
		rec.Actor, rec.KeyID, rec.KeyHint = requestrecord.ActorAPIKey, st.keyID, ""
	case st.failedKeyID != "":
		rec.Actor, rec.KeyID = requestrecord.ActorFailedKey, st.failedKeyID
	}
	if st.member {
		rec.Actor, rec.KeyHint = requestrecord.ActorMember, ""
	}
	if tcp, ok := st.remote.(*net.TCPAddr); ok {
		if a, ok := netip.AddrFromSlice(tcp.IP); ok {
			st.clientIP = a.Unmap()
		}
	}
	var ip [64]byte
	if st.clientIP.IsValid() {
		rec.ClientIP = bufString(st.clientIP.AppendTo(ip[:0]))
	}
	if st.bodyKept {
		if red, ok := r.red.Body(st.buf[st.typeEnd:st.bodyEnd]); ok {
			rec.Body = red
		}
	}
	return requestrecord.Append(b, &rec)
}

// bufString views bytes as a string for reading, without a copy; the bytes
// must not change while it is in use.
func bufString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// errorCodeOf reads the code of an error response, "" if it is not one.
func errorCodeOf(body []byte) string {
	if len(body) == 0 {
		return ""
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Error
}
