package http_test

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	api "payments/http"
)

// Requests no route takes (an unknown path, a method the path does not
// allow) are in the request log: under the key when a valid one was sent,
// found by id and listed to its organization; without a valid key, under
// no organization, with the presented key's hint only, like a failed
// authentication.
func TestRequestLogRecordsUnroutedRequests(t *testing.T) {
	st := newStack(t, stackOptions{})
	keyID := waitRecord(t, st, st.addr, st.key, st.do("GET", "/v1/organization", st.key, nil).header["x-request-id"])["keyId"]
	wrong := "sk_test_" + strings.Repeat("Zq7", 8) + "k4m2"
	cases := []struct {
		name, method, path, key string
		status                  int
		code                    string
	}{
		{"unknown path with a key", "GET", "/v1/payoutz?limit=1", st.key, 404, "not_found"},
		{"method not allowed with a key", "PUT", "/v1/payouts", st.key, 405, "method_not_allowed"},
		{"unknown path without a key", "GET", "/v1/nowhere", "", 404, "not_found"},
		{"method not allowed with a wrong key", "DELETE", "/v1/payouts", wrong, 405, "method_not_allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := st.do(tc.method, tc.path, tc.key, nil)
			st.mustStatus(r, tc.status)
			id := r.header["x-request-id"]
			var rec map[string]any
			if tc.key == st.key {
				rec = waitRecord(t, st, st.addr, st.key, id)
				list := st.do("GET", "/v1/requests?status="+strconv.Itoa(tc.status)+"&method="+tc.method, st.key, nil)
				if !strings.Contains(string(list.body), id) {
					t.Fatalf("the organization's list lacks %s: %s", id, list.body)
				}
			} else {
				rec = unattributedRecord(t, st, id)
				if r := st.do("GET", "/v1/requests/"+id, st.key, nil); r.status != 404 {
					t.Fatalf("a request without a valid key is readable by an organization: %d", r.status)
				}
			}
			actor, _ := rec["actor"].(map[string]any)
			path, _, _ := strings.Cut(tc.path, "?")
			if rec["method"] != tc.method || rec["path"] != path || rec["status"] != float64(tc.status) || rec["error"] != tc.code {
				t.Fatalf("recorded as %v", rec)
			}
			switch tc.key {
			case st.key:
				if rec["keyId"] != keyID || actor["type"] != "api_key" || actor["id"] != keyID {
					t.Fatalf("not under the key %v: %v", keyID, rec)
				}
			case wrong:
				if rec["keyId"] != nil || actor["type"] != "anonymous" || actor["keyHint"] != "sk_test_…k4m2" {
					t.Fatalf("the wrong key recorded as %v", rec)
				}
			default:
				if rec["keyId"] != nil || actor["type"] != "anonymous" || actor["keyHint"] != nil {
					t.Fatalf("recorded as %v", rec)
				}
			}
		})
	}
}

// unattributedRecord waits for request id among the node's records of no
// organization and returns it.
func unattributedRecord(t *testing.T, st *stack, id string) map[string]any {
	t.Helper()
	var found map[string]any
	waitFor(t, "request "+id+" on record under no organization", 10*time.Second, func() bool {
		st.requestLog.Scan("", math.MaxUint64, func(pos uint64, at time.Time, value []byte) bool {
			var v map[string]any
			rendered, err := api.RenderRequestRecord(value, "")
			if err == nil && json.Unmarshal(rendered, &v) == nil && v["id"] == id {
				found = v
			}
			return found == nil
		})
		return found != nil
	})
	return found
}
