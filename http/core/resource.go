package core

import (
	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// The one shape of the API's reads: one resource by a path parameter (its
// id, or its external reference), and cursor lists with filters. Each
// resource's handler is a line that names its reader, its filter and its
// rendering.

// ReadOne reads an organization's record of a kind by key (its id, or its
// external reference): the shape of ledger.Reader's single-record methods
// (ledger.Reader.APIKey, …), which pass as method expressions, and
// of the feature packages' reads (orders.Get, …).
type ReadOne[T any] func(st *ledger.Reader, org, key string) (T, bool)

// Get answers GET of one resource: the path parameter param, the record
// find reads under it (404 "<what> not found" when there is none, or it
// belongs to another organization: find says), rendered by body.
func Get[T, B any](c *Call, param, what string, find ReadOne[T], body func(*T) B) {
	if v, ok := Lookup(c, param, what, func(st *ledger.Reader, key string) (T, bool) {
		return find(st, c.Org, key)
	}); ok {
		c.OK(fasthttp.StatusOK, body(&v))
	}
}

// ByID is the handler of GET {path}/{id} (Handlers.Get): Get with the
// path parameter id.
func ByID[T, B any](what string, find ReadOne[T], body func(*T) B) func(*Call) {
	return func(c *Call) { Get(c, "id", what, find, body) }
}

// ByReference is the handler of GET {path}/by-reference/{externalReference}
// (Handlers.ByReference): Get with the path parameter externalReference.
func ByReference[T, B any](what string, find ReadOne[T], body func(*T) B) func(*Call) {
	return func(c *Call) { Get(c, "externalReference", what, find, body) }
}

// Bodies are the bodies of a resource's answers that carry one record,
// rendered by render under name ({"payout": {…}}): get, of a GET of it
// (ByID, ByReference); result, of a change to it, whose result carries the
// record (of reads it out).
func Bodies[T, J any](name string, of func(ledger.Result) *T, render func(*T) J) (get func(*T) map[string]J, result func(*ledger.Result) any) {
	get = func(v *T) map[string]J { return map[string]J{name: render(v)} }
	return get, ResultBody(of, get)
}

// ReadPage reads one page of an organization's records of a kind, with
// filter f, before the cursor: the shape of ledger.Reader's list methods
// (ledger.Reader.Payouts, …), which pass as method expressions.
type ReadPage[T, F any] func(st *ledger.Reader, org string, f F, before ledger.Cursor, limit int) ledger.Page[T]

// List answers GET of a cursor list: the page parameters (limit, and the
// cursor, which must be of kind), the filter that filter reads from the
// query (its error answers the request), the page read, each record
// rendered. Lists default to 20 records. The page comes from one pinned
// view: unpinned, the walk of its index and each record's read see the
// store at different moments, and one commit can change several records.
func List[T, F, J any](c *Call, kind ListKind, filter func(*Call) (F, *ledger.Error), read ReadPage[T, F], render func(*T) J) {
	limit, before, ok := c.Page(kind)
	if !ok {
		return
	}
	f, e := filter(c)
	if e != nil {
		c.Fail(e)
		return
	}
	c.OK(fasthttp.StatusOK, NewList(kind, PinnedPage(c.Server, func(st *ledger.Reader) ledger.Page[T] {
		return read(st, c.Org, f, before, limit)
	}), render))
}

// Lister is the handler of GET {path} (Handlers.List): List with the
// cursor kind kind, filter, read and render.
func Lister[T, F, J any](kind ListKind, filter func(*Call) (F, *ledger.Error), read ReadPage[T, F], render func(*T) J) func(*Call) {
	return func(c *Call) { List(c, kind, filter, read, render) }
}

// PinnedPage reads one page with read through a pinned view of the state
// store (see List).
func PinnedPage[T any](s *Server, read func(st *ledger.Reader) ledger.Page[T]) ledger.Page[T] {
	st, release := s.Config.Actors.Reader().Pinned()
	defer release()
	return read(st)
}

// Page reads a list's page parameters (PageParams): the limit, 20 records
// unless the query says otherwise, and the cursor, which must be of kind.
// Malformed ones are answered, and ok is false.
func (c *Call) Page(kind ListKind) (limit int, before ledger.Cursor, ok bool) {
	limit, before, e := PageParams(c.Ctx, kind, 20)
	if e != nil {
		c.Fail(e)
		return 0, 0, false
	}
	return limit, before, true
}

// Unfiltered is the filter of a list that takes none.
func Unfiltered(*Call) (struct{}, *ledger.Error) { return struct{}{}, nil }

// StatusFilter is the filter of a list whose one filter is a status: the
// query's status parsed by parse, or the zero status when none is given;
// one not parsed is refused with message.
func StatusFilter[S any](parse func(string) (S, bool), message string) func(*Call) (S, *ledger.Error) {
	return func(c *Call) (S, *ledger.Error) {
		var p Problems
		s := QueryStatus(c, &p, parse, message)
		return s, p.Err()
	}
}

// QueryStatus reads a list's status filter, among its others: the query's
// status parsed by parse, or the zero status when none is given; one not
// parsed is a problem, message.
func QueryStatus[S any](c *Call, p *Problems, parse func(string) (S, bool), message string) S {
	var s S
	if v, ok := Query(c.Ctx, "status"); ok {
		if s, ok = parse(v); !ok {
			p.Add("status", message)
		}
	}
	return s
}
