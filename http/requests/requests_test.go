package requests

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"testing"

	"github.com/goccy/go-json/jsontext"

	"payments/http/core"
)

// The merge shows a record only when no node can still have a newer one,
// and moves each node's position past what it showed.
func TestMergeRequestPages(t *testing.T) {
	item := func(pos uint64, at int64) requestItem {
		return requestItem{Pos: pos, At: at, Record: jsontext.Value(fmt.Sprintf(`"%d@%d"`, pos, at))}
	}
	for _, tc := range []struct {
		name      string
		pages     map[string]requestPage
		positions map[string]uint64
		limit     int
		want      string
		next      map[string]uint64
		more      bool
	}{
		{"a node with more holds back older records",
			map[string]requestPage{
				"aaa": {Items: []requestItem{item(30, 10), item(20, 8), item(10, 6)}, More: true, Next: 10, Floor: 6},
				"bbb": {Items: []requestItem{item(7, 9), item(5, 3)}},
			}, map[string]uint64{"aaa": math.MaxUint64, "bbb": math.MaxUint64}, 10,
			`["30@10","7@9","20@8","10@6"]`, map[string]uint64{"aaa": 10, "bbb": 7}, true},
		{"the limit cuts a page",
			map[string]requestPage{
				"aaa": {Items: []requestItem{item(30, 10), item(20, 8)}},
				"bbb": {Items: []requestItem{item(7, 9)}},
			}, map[string]uint64{"aaa": 40, "bbb": 8}, 2,
			`["30@10","7@9"]`, map[string]uint64{"aaa": 30, "bbb": 0}, true},
		{"every node done",
			map[string]requestPage{"aaa": {Items: []requestItem{item(3, 1)}}, "bbb": {}},
			map[string]uint64{"aaa": 9, "bbb": 9}, 5,
			`["3@1"]`, map[string]uint64{"aaa": 0, "bbb": 0}, false},
		{"an unreachable node is left out",
			map[string]requestPage{"aaa": {Items: []requestItem{item(3, 1)}}},
			map[string]uint64{"aaa": 9, "bbb": 9, "ccc": 0}, 5,
			`["3@1"]`, map[string]uint64{"aaa": 0, "bbb": 0, "ccc": 0}, false},
		{"a node that examined its bound without a match moves on",
			map[string]requestPage{"aaa": {More: true, Next: 4, Floor: 2}, "bbb": {Items: []requestItem{item(8, 5), item(6, 1)}}},
			map[string]uint64{"aaa": 9, "bbb": 9}, 5,
			`["8@5"]`, map[string]uint64{"aaa": 4, "bbb": 8}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, next := mergeRequestPages(tc.pages, tc.positions, tc.limit)
			got, _ := json.Marshal(body.Data)
			if string(got) != tc.want || !maps.Equal(next, tc.next) || body.HasMore != tc.more {
				t.Fatalf("got %s %v more=%v, want %s %v more=%v", got, next, body.HasMore, tc.want, tc.next, tc.more)
			}
		})
	}
	// The cursor carries every node's position.
	positions := map[string]uint64{"134": 0, "u61": math.MaxUint64, "8h2": 42}
	if got, ok := decodeRequestCursor(encodeRequestCursor(positions)); !ok || !maps.Equal(got, positions) {
		t.Fatalf("cursor round trip: %v %v", got, ok)
	}
	if _, ok := decodeRequestCursor(core.EncodeCursor(listRequestsKind, 5)); ok {
		t.Fatal("a cursor of another shape decodes")
	}
}
