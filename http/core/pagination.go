package core

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"strconv"

	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// Cursors are opaque to clients: a list kind, a position in that list, and a
// checksum, base64url-encoded. A cursor from another list, or an edited one,
// is a validation error rather than a silently wrong page.

type ListKind byte

const (
	ListPayouts     ListKind = 'p'
	ListCollections ListKind = 'c'
	ListEntries     ListKind = 'e'
)

var CursorTable = crc32.MakeTable(crc32.Castagnoli)

func EncodeCursor(kind ListKind, pos ledger.Cursor) string {
	b := make([]byte, 1, 1+binary.MaxVarintLen64+4)
	b[0] = byte(kind)
	b = binary.AppendUvarint(b, uint64(pos))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, CursorTable))
	return base64.RawURLEncoding.EncodeToString(b)
}

func DecodeCursor(kind ListKind, s string) (ledger.Cursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 6 || b[0] != byte(kind) {
		return 0, false
	}
	body, sum := b[:len(b)-4], b[len(b)-4:]
	if crc32.Checksum(body, CursorTable) != binary.BigEndian.Uint32(sum) {
		return 0, false
	}
	pos, n := binary.Uvarint(body[1:])
	if n <= 0 || 1+n != len(body) {
		return 0, false
	}
	return ledger.Cursor(pos), true
}

// pageParams reads limit and cursor from the query.
func PageParams(ctx *fasthttp.RequestCtx, kind ListKind, defaultLimit int) (limit int, before ledger.Cursor, err *ledger.Error) {
	args := ctx.QueryArgs()
	if limit, err = PageLimit(ctx, defaultLimit); err != nil {
		return 0, 0, err
	}
	before = ledger.CursorStart
	if v := args.Peek("cursor"); v != nil {
		c, ok := DecodeCursor(kind, string(v))
		if !ok {
			return 0, 0, ledger.FieldInvalid("cursor", "is not a cursor from this list; pass the nextCursor of the previous page")
		}
		before = c
	}
	return limit, before, nil
}

// pageLimit reads the page size from the query.
func PageLimit(ctx *fasthttp.RequestCtx, defaultLimit int) (int, *ledger.Error) {
	v := ctx.QueryArgs().Peek("limit")
	if v == nil {
		return defaultLimit, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 1 || n > 100 {
		return 0, ledger.FieldInvalid("limit", "must be an integer from 1 to 100")
	}
	return n, nil
}

// listBody is the pagination envelope.
type ListBody[T any] struct {
	Data       []T     `json:"data"`
	HasMore    bool    `json:"hasMore"`
	NextCursor *string `json:"nextCursor"`
}

func NewList[T, R any](kind ListKind, p ledger.Page[R], render func(*R) T) ListBody[T] {
	body := ListBody[T]{Data: make([]T, 0, len(p.Items)), HasMore: p.HasMore}
	for i := range p.Items {
		body.Data = append(body.Data, render(&p.Items[i]))
	}
	if p.HasMore {
		c := EncodeCursor(kind, p.Next)
		body.NextCursor = &c
	}
	return body
}
