package requests

import (
	"errors"
	"math"
	"net/url"
	"strconv"

	"github.com/goccy/go-json/jsontext"
	json "github.com/goccy/go-json/v2"

	"payments/http/core"
	"payments/ledger"
)

// The operator's view of the request log: the records of no organization,
// which no key can read (GET /v1/requests shows an organization its own).
// They are failed authentications with keys that are not ours (or no key)
// and requests no route took without a valid key; each names a presented
// key by its hint only (its prefix and last four characters, as the
// organizations' records do), never the key. The admin API serves them
// (cmd/payments, GET /v1/requests/unattributed), one node's at a time, as
// the request log is the node's own.

// ErrRequestLogOff is UnattributedRequests' error on a node without a
// request log.
var ErrRequestLogOff = errors.New("the request log is not configured on this node")

// UnattributedRequests returns a page of this node's request records of no
// organization, newest first, in GET /v1/requests' envelope ({data,
// hasMore, nextCursor}) and record shape. The query q takes limit (1 to
// 100, default 20), status (only records answered with it) and cursor (a
// page's nextCursor, for the next page). A query out of shape is a
// *ledger.Error of code validation_error; a node without a request log
// returns ErrRequestLogOff. Safe for concurrent use.
func UnattributedRequests(s *core.Server, q url.Values) ([]byte, error) {
	if s.Config.RequestLog == nil {
		return nil, ErrRequestLogOff
	}
	limit, f, before := 20, requestFilter{}, uint64(math.MaxUint64)
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return nil, ledger.FieldInvalid("limit", "must be an integer from 1 to 100")
		}
		limit = n
	}
	if v := q.Get("status"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 || n > 599 {
			return nil, ledger.FieldInvalid("status", "must be an HTTP status code from 100 to 599")
		}
		f.status = n
	}
	if v := q.Get("cursor"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			return nil, ledger.FieldInvalid("cursor", "is not a cursor from this list; pass the nextCursor of the previous page")
		}
		before = n
	}
	p, err := localRequestPage(s, "", before, limit, &f)
	if err != nil {
		return nil, err
	}
	body := core.ListBody[jsontext.Value]{Data: make([]jsontext.Value, 0, len(p.Items)), HasMore: p.More}
	for _, it := range p.Items {
		body.Data = append(body.Data, it.Record)
	}
	if p.More {
		next := strconv.FormatUint(p.Next, 10)
		body.NextCursor = &next
	}
	return json.Marshal(&body)
}
