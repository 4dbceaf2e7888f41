package requests

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-json/jsontext"
	json "github.com/goccy/go-json/v2"
	"github.com/valyala/fasthttp"

	"payments/http/core"
	"payments/http/requestrecord"
	"payments/ledger"
)

// The request log's endpoints (requestlog.go records):
//
//	GET /v1/requests/{requestId}  one record, from whichever node holds it
//	GET /v1/requests              every node's records, merged newest first
//
// A record is looked up on the node its id names; when that is another
// node, this one asks it over an internal route authenticated like the blob
// routes (filepeers.go, a peer token over the id and the organization).
// The list merges a page from each node, read over a second one:
//
//	GET /internal/requests/{requestId}?organization=…
//	GET /internal/requests?organization=…&before=…&limit=…&<filters>

func init() {
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/requests", Scope: ledger.ScopeRequestsRead, H: listRequests},
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/requests/{requestId}", Scope: ledger.ScopeRequestsRead, H: getRequest},
	)
}

const (
	listRequestsKind core.ListKind = 'q'
	// requestScanMax bounds the records one page examines; a page of a
	// narrow filter may come back short, with a cursor to go on.
	requestScanMax = 10_000
	// requestDurationMax is how much later than its start a request may be
	// recorded: the list stops at records this much older than "from".
	requestDurationMax = time.Minute
)

// A peer's lookup in this node's request log: no API key, no forwarding.
func init() { core.RegisterRouteSet(requestLogRoutes) }

func requestLogRoutes(s *core.Server) {
	s.Router().GET("/internal/requests/{requestId}", func(a0 *fasthttp.RequestCtx) { serveRequestRecord(s, a0) })
	s.Router().GET("/internal/requests", func(a0 *fasthttp.RequestCtx) { serveRequestPage(s, a0) })
}

func errRequestLogOff() *ledger.Error {
	return &ledger.Error{Code: ledger.CodeUnavailable, Message: "The request log is not configured on this node"}
}

// getRequest: GET /v1/requests/{requestId}.
func getRequest(c *core.Call) {
	store := c.Server.Config.RequestLog
	if store == nil {
		c.Fail(errRequestLogOff())
		return
	}
	id, _ := c.Ctx.UserValue("requestId").(string)
	notFound := &ledger.Error{Code: ledger.CodeNotFound, Message: "No request " + id + " is on record (records are kept for a limited time)"}
	tag, ok := core.RequestTag(id)
	if !ok {
		c.Fail(notFound)
		return
	}
	if tag == c.Server.Tag {
		v, found, err := localRequestRecord(c.Server, id, c.Org)
		if err != nil {
			c.Server.Logger.Error("request log read", "err", err)
			c.Fail(&ledger.Error{Code: ledger.CodeInternal, Message: "Internal error"})
			return
		}
		if found {
			writeRawJSON(c.Ctx, fasthttp.StatusOK, v)
			return
		}
	}
	peers := peersTagged(c.Server, tag)
	if len(peers) == 0 {
		c.Fail(notFound)
		return
	}
	key, e := c.SigningKey()
	if e != nil {
		c.Fail(e)
		return
	}
	reached := false
	for _, addr := range peers {
		v, found, err := fetchRequestRecord(c.Server, addr, key, id, c.Org)
		if err != nil {
			c.Server.Logger.Warn("request log: fetch from peer", "peer", addr, "err", err)
			continue
		}
		reached = true
		if found {
			writeRawJSON(c.Ctx, fasthttp.StatusOK, v)
			return
		}
	}
	if !reached {
		c.Fail(&ledger.Error{Code: ledger.CodeUnavailable, Message: "The node that holds this request's record could not be reached; retry shortly"})
		return
	}
	c.Fail(notFound)
}

// peersTagged returns the HTTP addresses of the other nodes whose request
// ids carry tag, in a fixed order.
func peersTagged(s *core.Server, tag string) []string {
	self := ""
	if s.Config.Cluster != nil {
		self = s.Config.Cluster.ID()
	}
	var out []string
	for id, addr := range s.Config.PeerHTTP {
		if id != self && addr != "" && core.NodeTag(id) == tag {
			out = append(out, addr)
		}
	}
	sort.Strings(out)
	return out
}

// requestPeerSubject is what a peer token for a request record signs: the
// id and the organization it is read for.
func requestPeerSubject(id, org string) string { return "request\x00" + id + "\x00" + org }

func fetchRequestRecord(s *core.Server, addr string, key []byte, id, org string) ([]byte, bool, error) {
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)
	args := fasthttp.AcquireArgs()
	defer fasthttp.ReleaseArgs(args)
	args.Set("organization", org)
	if err := askPeer(s, addr, key, "/internal/requests/"+id, args, requestPeerSubject(id, org), resp); err != nil {
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

// askPeer sends the peer at addr a GET of path with the query args, signed
// for subject with key, and reads its answer into resp.
func askPeer(s *core.Server, addr string, key []byte, path string, args *fasthttp.Args, subject string, resp *fasthttp.Response) error {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.SetRequestURI("http://" + addr + path + "?" + args.String())
	req.Header.Set(core.PeerTokenHeader, core.PeerToken(key, fasthttp.MethodGet, subject, time.Now().Add(core.PeerTokenLifetime).Unix()))
	return s.Forwarder(addr).DoTimeout(req, resp, core.PeerTimeout)
}

type peerStatusError struct{ status int }

func (e *peerStatusError) Error() string { return "peer answered status " + strconv.Itoa(e.status) }

// serveRequestRecord: GET /internal/requests/{requestId}, a peer's lookup
// in this node's log.
func serveRequestRecord(s *core.Server, ctx *fasthttp.RequestCtx) {
	id, _ := ctx.UserValue("requestId").(string)
	org := string(ctx.QueryArgs().Peek("organization"))
	if !beginPeerRead(s, ctx, requestPeerSubject(id, org)) {
		return
	}
	v, found, err := localRequestRecord(s, id, org)
	if err != nil || !found || org == "" {
		if err != nil {
			s.Logger.Error("request log read", "err", err)
		}
		core.WriteError(ctx, &ledger.Error{Code: ledger.CodeNotFound, Message: "This node holds no such request"})
		return
	}
	writeRawJSON(ctx, fasthttp.StatusOK, v)
}

// beginPeerRead admits a peer's read of this node's log, signed for
// subject; a read it refuses (an unknown service version, no log here,
// a bad signature) is answered, and it returns false.
func beginPeerRead(s *core.Server, ctx *fasthttp.RequestCtx, subject string) bool {
	if !s.Begin(ctx) {
		return false
	}
	if s.Config.RequestLog == nil {
		core.WriteError(ctx, errRequestLogOff())
		return false
	}
	if e := s.CheckPeer(ctx, subject); e != nil {
		core.WriteError(ctx, e)
		return false
	}
	return true
}

// localRequestRecord reads request id of org from this node's log, as GET
// /v1/requests/{requestId} shows it.
func localRequestRecord(s *core.Server, id, org string) ([]byte, bool, error) {
	v, found, err := s.Config.RequestLog.Get(core.RequestSeq(id), id, org)
	if err != nil || !found {
		return nil, false, err
	}
	rendered, err := requestrecord.Render(v, org)
	return rendered, err == nil, err
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

func (f *requestFilter) keep(at time.Time, value []byte) bool {
	ms := at.UnixMilli()
	if f.from != 0 && ms < f.from || f.to != 0 && ms >= f.to {
		return false
	}
	if f.status == 0 && f.method == "" && f.path == "" && f.keyID == "" {
		return true
	}
	r, ok := requestrecord.FieldsOf(value)
	if !ok {
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
	if v, ok := core.Query(ctx, "status"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			return f, ledger.FieldInvalid("status", "must be an HTTP status code from 100 to 599")
		}
		f.status = n
	}
	if v, ok := core.Query(ctx, "method"); ok {
		f.method = strings.ToUpper(v)
		if !isKnownMethod(f.method) {
			return f, ledger.FieldInvalid("method", "must be one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS")
		}
	}
	if v, ok := core.Query(ctx, "path"); ok {
		if !strings.HasPrefix(v, "/") {
			return f, ledger.FieldInvalid("path", "must start with / (end it with * to match a prefix)")
		}
		f.path, f.pathPrefix = strings.CutSuffix(v, "*")
	}
	if v, ok := core.Query(ctx, "keyId"); ok {
		f.keyID = v
	}
	var e *ledger.Error
	if f.from, e = core.QueryTime(ctx, "from"); e != nil {
		return f, e
	}
	if f.to, e = core.QueryTime(ctx, "to"); e != nil {
		return f, e
	}
	return f, nil
}

func isKnownMethod(m string) bool {
	for _, k := range core.KnownMethods {
		if k == m {
			return true
		}
	}
	return false
}

// requestPage is one node's page of an organization's records: up to a
// limit of matching records below a position, newest first.
type requestPage struct {
	Items []requestItem `json:"items"`
	// More is set when the node holds older records than it examined;
	// Next is then the position to go on from, and Floor the time
	// (unix ns) of the last record examined: no record still to come
	// from this node is newer than it.
	More  bool   `json:"more"`
	Next  uint64 `json:"next"`
	Floor int64  `json:"floor"`
}

type requestItem struct {
	Pos    uint64         `json:"pos"`
	At     int64          `json:"at"` // unix ns
	Record jsontext.Value `json:"record"`
}

// localRequestPage reads a page from this node's log.
func localRequestPage(s *core.Server, org string, before uint64, limit int, f *requestFilter) (requestPage, error) {
	var p requestPage
	examined := 0
	var err error
	serr := s.Config.RequestLog.Scan(org, before, func(pos uint64, at time.Time, value []byte) bool {
		if f.from != 0 && at.UnixMilli() < f.from-requestDurationMax.Milliseconds() {
			return false // older records started earlier still
		}
		if len(p.Items) == limit || examined == requestScanMax {
			p.More = true // there is another record to examine
			return false
		}
		examined++
		p.Next, p.Floor = pos, at.UnixNano()
		if f.keep(at, value) {
			rendered, rerr := requestrecord.Render(value, org)
			if rerr != nil {
				err = rerr
				return false
			}
			p.Items = append(p.Items, requestItem{Pos: pos, At: at.UnixNano(), Record: jsontext.Value(bytes.Clone(rendered))})
		}
		return true
	})
	if serr != nil {
		return p, serr
	}
	return p, err
}

// The merged list's cursor: for each node, by its tag, the position to
// read below (0: nothing left there), with a checksum.
func encodeRequestCursor(positions map[string]uint64) string {
	tags := make([]string, 0, len(positions))
	for t := range positions {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	b := []byte{byte(listRequestsKind)}
	for _, t := range tags {
		b = append(b, t...)
		b = binary.AppendUvarint(b, positions[t])
	}
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, core.CursorTable))
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeRequestCursor(s string) (map[string]uint64, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 5 || b[0] != byte(listRequestsKind) {
		return nil, false
	}
	body, sum := b[:len(b)-4], b[len(b)-4:]
	if crc32.Checksum(body, core.CursorTable) != binary.BigEndian.Uint32(sum) {
		return nil, false
	}
	out := map[string]uint64{}
	for rest := body[1:]; len(rest) > 0; {
		if len(rest) < 4 {
			return nil, false
		}
		tag := string(rest[:3])
		pos, n := binary.Uvarint(rest[3:])
		if n <= 0 {
			return nil, false
		}
		out[tag], rest = pos, rest[3+n:]
	}
	return out, true
}

// listRequests: GET /v1/requests. The organization's records on every node
// the cluster names, merged newest first: each node reads a page below its
// position in the cursor, and the merge keeps only records no node can
// still have a newer one than (a node's page ends at its Floor). A node that
// cannot be reached is left out of the rest of the listing (its records are
// still found by id once it is back).
func listRequests(c *core.Call) {
	if c.Server.Config.RequestLog == nil {
		c.Fail(errRequestLogOff())
		return
	}
	limit, e := core.PageLimit(c.Ctx, 20)
	if e != nil {
		c.Fail(e)
		return
	}
	f, e := requestFilterOf(c.Ctx)
	if e != nil {
		c.Fail(e)
		return
	}
	nodes := requestLogNodes(c.Server) // tag → address ("" for this node)
	positions := map[string]uint64{}
	for tag := range nodes {
		positions[tag] = math.MaxUint64
	}
	if v, ok := core.Query(c.Ctx, "cursor"); ok {
		cur, ok := decodeRequestCursor(v)
		if !ok {
			c.Fail(ledger.FieldInvalid("cursor", "is not a cursor from this list; pass the nextCursor of the previous page"))
			return
		}
		for tag := range positions {
			if p, known := cur[tag]; known {
				positions[tag] = p
			}
		}
	}
	pages := map[string]requestPage{}
	if before := positions[c.Server.Tag]; before != 0 {
		p, err := localRequestPage(c.Server, c.Org, before, limit, &f)
		if err != nil {
			c.Server.Logger.Error("request log scan", "err", err)
			c.Fail(&ledger.Error{Code: ledger.CodeInternal, Message: "Internal error"})
			return
		}
		pages[c.Server.Tag] = p
	}
	var key []byte
	filters := string(c.Ctx.QueryArgs().QueryString()) // the goroutines must not read ctx
	var mu sync.Mutex
	var wg sync.WaitGroup
	for tag, addr := range nodes {
		before := positions[tag]
		if before == 0 || addr == "" {
			continue
		}
		if key == nil {
			if key, e = c.SigningKey(); e != nil {
				wg.Wait()
				c.Fail(e)
				return
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := fetchRequestPage(c.Server, addr, key, c.Org, before, limit, filters)
			if err != nil {
				c.Server.Logger.Warn("request log: list from peer", "peer", addr, "err", err)
				return
			}
			mu.Lock()
			pages[tag] = p
			mu.Unlock()
		}()
	}
	wg.Wait()
	body, next := mergeRequestPages(pages, positions, limit)
	if body.HasMore {
		cur := encodeRequestCursor(next)
		body.NextCursor = &cur
	}
	c.OK(fasthttp.StatusOK, body)
}

// mergeRequestPages merges nodes' pages newest first into one of at most
// limit records, and returns each node's position after it.
func mergeRequestPages(pages map[string]requestPage, positions map[string]uint64, limit int) (core.ListBody[jsontext.Value], map[string]uint64) {
	type ref struct {
		tag string
		it  *requestItem
	}
	var all []ref
	floor := int64(math.MinInt64) // no record older than this may be shown yet
	for tag, p := range pages {
		for i := range p.Items {
			all = append(all, ref{tag, &p.Items[i]})
		}
		if p.More {
			floor = max(floor, p.Floor)
		}
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.it.At != b.it.At {
			return a.it.At > b.it.At
		}
		if a.tag != b.tag {
			return a.tag < b.tag
		}
		return a.it.Pos > b.it.Pos
	})
	body := core.ListBody[jsontext.Value]{Data: make([]jsontext.Value, 0, limit)}
	taken := map[string]int{}
	next := maps.Clone(positions)
	for _, r := range all {
		if len(body.Data) == limit || r.it.At < floor {
			break
		}
		body.Data = append(body.Data, r.it.Record)
		taken[r.tag]++
		next[r.tag] = r.it.Pos
	}
	for tag, pos := range positions {
		if _, read := pages[tag]; !read && pos != 0 {
			next[tag] = 0 // unreachable: left out of the rest of this listing
		}
	}
	for tag, p := range pages {
		if taken[tag] == len(p.Items) { // every record read there is shown
			if p.More {
				next[tag] = p.Next
			} else {
				next[tag] = 0
			}
		}
	}
	for _, pos := range next {
		if pos != 0 {
			body.HasMore = true
		}
	}
	return body, next
}

// requestLogNodes maps the tag of every node the cluster names, this one
// included, to its HTTP address ("" for this node).
func requestLogNodes(s *core.Server) map[string]string {
	nodes := map[string]string{s.Tag: ""}
	self := ""
	if s.Config.Cluster != nil {
		self = s.Config.Cluster.ID()
	}
	for id, addr := range s.Config.PeerHTTP {
		if t := core.NodeTag(id); id != self && addr != "" && t != s.Tag {
			nodes[t] = addr
		}
	}
	return nodes
}

func requestListSubject(org string) string { return "requests\x00" + org }

// fetchRequestPage asks a peer for its page, with the client's filters.
func fetchRequestPage(s *core.Server, addr string, key []byte, org string, before uint64, limit int, filters string) (requestPage, error) {
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseResponse(resp)
	args := fasthttp.AcquireArgs()
	defer fasthttp.ReleaseArgs(args)
	args.Parse(filters)
	args.Del("cursor")
	args.Set("organization", org)
	args.Set("before", strconv.FormatUint(before, 10))
	args.Set("limit", strconv.Itoa(limit))
	var p requestPage
	if err := askPeer(s, addr, key, "/internal/requests", args, requestListSubject(org), resp); err != nil {
		return p, err
	}
	if resp.StatusCode() != fasthttp.StatusOK {
		return p, &peerStatusError{status: resp.StatusCode()}
	}
	err := json.Unmarshal(resp.Body(), &p)
	return p, err
}

// serveRequestPage: GET /internal/requests, a peer's read of this node's
// page for the merged list.
func serveRequestPage(s *core.Server, ctx *fasthttp.RequestCtx) {
	org := string(ctx.QueryArgs().Peek("organization"))
	if !beginPeerRead(s, ctx, requestListSubject(org)) {
		return
	}
	limit, e := core.PageLimit(ctx, 20)
	if e != nil {
		core.WriteError(ctx, e)
		return
	}
	f, e := requestFilterOf(ctx)
	if e != nil {
		core.WriteError(ctx, e)
		return
	}
	before, err := strconv.ParseUint(string(ctx.QueryArgs().Peek("before")), 10, 64)
	if err != nil || org == "" {
		core.WriteError(ctx, ledger.FieldInvalid("before", "must be a position"))
		return
	}
	p, err := localRequestPage(s, org, before, limit, &f)
	if err != nil {
		s.Logger.Error("request log scan", "err", err)
		core.WriteError(ctx, &ledger.Error{Code: ledger.CodeInternal, Message: "Internal error"})
		return
	}
	core.WriteJSON(ctx, fasthttp.StatusOK, &p)
}
