package http

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-json/jsontext"
	json "github.com/goccy/go-json/v2"
	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// The request log's endpoints (requestlog.go records):
//
//	GET /v1/requests/{requestId}  one record, from whichever node holds it
//	GET /v1/requests              this node's records, newest first
//
// A record is looked up on the node its id names; when that is another
// node, this one asks it over an internal route authenticated like the blob
// routes (filepeers.go):
//
//	GET /internal/requests/{requestId}?organization=…
//
// The list is this node's: API requests are served by the leader, so it
// holds every request since it became leader, and records served by an
// earlier leader are found by id only.

func init() {
	registerRoutes(
		endpoint{fasthttp.MethodGet, "/v1/requests", ledger.ScopeRequestsRead, (*call).listRequests, nil},
		endpoint{fasthttp.MethodGet, "/v1/requests/{requestId}", ledger.ScopeRequestsRead, (*call).getRequest, nil},
	)
}

const (
	listRequestsKind listKind = 'q'
	// requestScanMax bounds the records one page examines; a page of a
	// narrow filter may come back short, with a cursor to go on.
	requestScanMax = 10_000
	// requestDurationMax is how much later than its start a request may be
	// recorded: the list stops at records this much older than "from".
	requestDurationMax = time.Minute
)

func (s *Server) requestLogRoutes() {
	s.router.GET("/internal/requests/{requestId}", s.serveRequestRecord)
}

func errRequestLogOff() *ledger.Error {
	return &ledger.Error{Code: ledger.CodeUnavailable, Message: "The request log is not configured on this node"}
}

// getRequest: GET /v1/requests/{requestId}.
func (c *call) getRequest() {
	store := c.s.cfg.RequestLog
	if store == nil {
		c.fail(errRequestLogOff())
		return
	}
	id, _ := c.ctx.UserValue("requestId").(string)
	notFound := &ledger.Error{Code: ledger.CodeNotFound, Message: "No request " + id + " is on record (records are kept for a limited time)"}
	tag, ok := requestTag(id)
	if !ok {
		c.fail(notFound)
		return
	}
	if tag == c.s.tag {
		v, found, err := store.Get(id, c.org)
		if err != nil {
			c.s.logger.Error("request log read", "err", err)
			c.fail(&ledger.Error{Code: ledger.CodeInternal, Message: "Internal error"})
			return
		}
		if found {
			writeRawJSON(c.ctx, fasthttp.StatusOK, v)
			return
		}
	}
	peers := c.s.peersTagged(tag)
	if len(peers) == 0 {
		c.fail(notFound)
		return
	}
	key, e := c.signingKey()
	if e != nil {
		c.fail(e)
		return
	}
	reached := false
	for _, addr := range peers {
		v, found, err := c.s.fetchRequestRecord(addr, key, id, c.org)
		if err != nil {
			c.s.logger.Warn("request log: fetch from peer", "peer", addr, "err", err)
			continue
		}
		reached = true
		if found {
			writeRawJSON(c.ctx, fasthttp.StatusOK, v)
			return
		}
	}
	if !reached {
		c.fail(&ledger.Error{Code: ledger.CodeUnavailable, Message: "The node that holds this request's record could not be reached; retry shortly"})
		return
	}
	c.fail(notFound)
}

// peersTagged returns the HTTP addresses of the other nodes whose request
// ids carry tag, in a fixed order.
func (s *Server) peersTagged(tag string) []string {
	self := ""
	if s.cfg.Cluster != nil {
		self = s.cfg.Cluster.ID()
	}
	var out []string
	for id, addr := range s.cfg.PeerHTTP {
		if id != self && addr != "" && nodeTag(id) == tag {
			out = append(out, addr)
		}
	}
	sort.Strings(out)
	return out
}

// requestPeerSubject is what a peer token for a request record signs: the
// id and the organization it is read for.
func requestPeerSubject(id, org string) string { return "request\x00" + id + "\x00" + org }

func (s *Server) fetchRequestRecord(addr string, key []byte, id, org string) ([]byte, bool, error) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	args := fasthttp.AcquireArgs()
	defer fasthttp.ReleaseArgs(args)
	args.Set("organization", org)
	req.SetRequestURI("http://" + addr + "/internal/requests/" + id + "?" + args.String())
	req.Header.Set(peerTokenHeader, peerToken(key, fasthttp.MethodGet, requestPeerSubject(id, org), time.Now().Add(peerTokenLifetime).Unix()))
	if err := s.forwarder(addr).DoTimeout(req, resp, peerTimeout); err != nil {
		return nil, false, err
	}
	switch resp.StatusCode() {
	case fasthttp.StatusOK:
		return append([]byte(nil), resp.Body()...), true, nil
	case fasthttp.StatusNotFound:
		return nil, false, nil
	default:
		return nil, false, &peerStatusError{status: resp.StatusCode()}
	}
}

type peerStatusError struct{ status int }

func (e *peerStatusError) Error() string { return "peer answered status " + strconv.Itoa(e.status) }

// serveRequestRecord: GET /internal/requests/{requestId}, a peer's lookup
// in this node's log.
func (s *Server) serveRequestRecord(ctx *fasthttp.RequestCtx) {
	if !s.begin(ctx) {
		return
	}
	if s.cfg.RequestLog == nil {
		writeError(ctx, errRequestLogOff())
		return
	}
	id, _ := ctx.UserValue("requestId").(string)
	org := string(ctx.QueryArgs().Peek("organization"))
	if e := s.checkPeer(ctx, requestPeerSubject(id, org)); e != nil {
		writeError(ctx, e)
		return
	}
	v, found, err := s.cfg.RequestLog.Get(id, org)
	if err != nil || !found || org == "" {
		if err != nil {
			s.logger.Error("request log read", "err", err)
		}
		writeError(ctx, &ledger.Error{Code: ledger.CodeNotFound, Message: "This node holds no such request"})
		return
	}
	writeRawJSON(ctx, fasthttp.StatusOK, v)
}

func writeRawJSON(ctx *fasthttp.RequestCtx, status int, body []byte) {
	ctx.SetContentType("application/json")
	ctx.SetStatusCode(status)
	ctx.SetBody(body)
}

// requestFilter is GET /v1/requests's query.
type requestFilter struct {
	status     int
	method     string
	path       string
	pathPrefix bool // path ended in '*'
	keyID      string
	from, to   int64 // unix ms; 0: unbounded
}

// requestFields are the members of a record the filters read.
type requestFields struct {
	Status int     `json:"status"`
	Method string  `json:"method"`
	Path   string  `json:"path"`
	KeyID  *string `json:"keyId"`
}

func (f *requestFilter) keep(at time.Time, value []byte) bool {
	ms := at.UnixMilli()
	if f.from != 0 && ms < f.from || f.to != 0 && ms >= f.to {
		return false
	}
	if f.status == 0 && f.method == "" && f.path == "" && f.keyID == "" {
		return true
	}
	var r requestFields
	if json.Unmarshal(value, &r) != nil {
		return false
	}
	switch {
	case f.status != 0 && r.Status != f.status,
		f.method != "" && r.Method != f.method,
		f.keyID != "" && (r.KeyID == nil || *r.KeyID != f.keyID),
		f.path != "" && !f.pathPrefix && r.Path != f.path,
		f.path != "" && f.pathPrefix && !strings.HasPrefix(r.Path, f.path):
		return false
	}
	return true
}

func requestFilterOf(ctx *fasthttp.RequestCtx) (requestFilter, *ledger.Error) {
	var f requestFilter
	if v, ok := query(ctx, "status"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			return f, ledger.FieldInvalid("status", "must be an HTTP status code from 100 to 599")
		}
		f.status = n
	}
	if v, ok := query(ctx, "method"); ok {
		f.method = strings.ToUpper(v)
		if !isKnownMethod(f.method) {
			return f, ledger.FieldInvalid("method", "must be one of GET, POST, PUT, PATCH, DELETE")
		}
	}
	if v, ok := query(ctx, "path"); ok {
		if !strings.HasPrefix(v, "/") {
			return f, ledger.FieldInvalid("path", "must start with / (end it with * to match a prefix)")
		}
		f.path, f.pathPrefix = strings.CutSuffix(v, "*")
	}
	if v, ok := query(ctx, "keyId"); ok {
		f.keyID = v
	}
	var e *ledger.Error
	if f.from, e = queryTime(ctx, "from"); e != nil {
		return f, e
	}
	if f.to, e = queryTime(ctx, "to"); e != nil {
		return f, e
	}
	return f, nil
}

func isKnownMethod(m string) bool {
	for _, k := range knownMethods {
		if k == m {
			return true
		}
	}
	return false
}

// listRequests: GET /v1/requests.
func (c *call) listRequests() {
	store := c.s.cfg.RequestLog
	if store == nil {
		c.fail(errRequestLogOff())
		return
	}
	limit, before, e := pageParams(c.ctx, listRequestsKind, 20)
	if e != nil {
		c.fail(e)
		return
	}
	f, e := requestFilterOf(c.ctx)
	if e != nil {
		c.fail(e)
		return
	}
	body := listBody[jsontext.Value]{Data: make([]jsontext.Value, 0, limit)}
	var last uint64
	examined := 0
	err := store.Scan(c.org, uint64(before), func(pos uint64, at time.Time, value []byte) bool {
		if f.from != 0 && at.UnixMilli() < f.from-requestDurationMax.Milliseconds() {
			return false // older records started earlier still
		}
		examined++
		if f.keep(at, value) {
			if len(body.Data) == limit {
				body.HasMore = true
				return false
			}
			body.Data = append(body.Data, jsontext.Value(append([]byte(nil), value...)))
		}
		last = pos
		if examined >= requestScanMax {
			body.HasMore = true
			return false
		}
		return true
	})
	if err != nil {
		c.s.logger.Error("request log scan", "err", err)
		c.fail(&ledger.Error{Code: ledger.CodeInternal, Message: "Internal error"})
		return
	}
	if body.HasMore {
		cur := encodeCursor(listRequestsKind, ledger.Cursor(last))
		body.NextCursor = &cur
	}
	c.ok(fasthttp.StatusOK, body)
}
