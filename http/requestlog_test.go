package http_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	nethttp "net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"payments/actors/actorstest/testkit"
	api "payments/http"
)

// waitRecord polls GET /v1/requests/{id} on addr until it answers 200 (the
// recorder writes asynchronously) and returns the record.
func waitRecord(t *testing.T, s *stack, addr, key, id string) map[string]any {
	t.Helper()
	var r response
	if !eventually(10*time.Second, func() bool {
		r = s.doAt(addr, "GET", "/v1/requests/"+id, key, nil)
		return r.status == 200
	}) {
		t.Fatalf("request %s never on record through %s: %d %s", id, addr, r.status, r.body)
	}
	return r.json(t)
}

// A failed authentication is on record with the presented key's prefix and
// last four characters only; no key, presented or valid, and no masked
// value is anywhere in the request log's files.
func TestRequestLogKeepsNoSecrets(t *testing.T) {
	st := newStack(t, stackOptions{})
	wrong := "sk_test_" + strings.Repeat("Zq7", 12) + "w9x8" // 44 characters, not a key of ours
	r := st.do("GET", "/v1/payouts", wrong, nil)
	if r.status != 401 {
		t.Fatalf("unknown key: %d", r.status)
	}
	failedID := r.header["x-request-id"]
	// The valid key, with secrets in the body and the query.
	secretBody := `{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233249876543","amount":1},"externalReference":"s-1","apiKey":"` + wrong + `"}`
	r = st.do("POST", "/v1/payouts?token="+wrong, st.key, secretBody)
	keyedID := r.header["x-request-id"]
	rec := waitRecord(t, st, st.addr, st.key, keyedID)
	if rec["query"] != "token=[redacted]" || strings.Contains(testkit.JSON(t, rec["body"]), "233249876543") {
		t.Fatalf("keyed record not redacted: %v", rec)
	}

	// The failed authentication belongs to no organization: the store has
	// it under the empty one.
	failed := unattributedRecord(t, st, failedID)
	actor, _ := failed["actor"].(map[string]any)
	if failed["status"] != 401.0 || failed["error"] != "unauthorized" || failed["keyId"] != nil ||
		actor["type"] != "anonymous" || actor["keyHint"] != "sk_test_…w9x8" {
		t.Fatalf("failed authentication recorded as %v", failed)
	}
	// Another organization's key cannot read it, nor can this one.
	if r := st.do("GET", "/v1/requests/"+failedID, st.key, nil); r.status != 404 {
		t.Fatalf("a failed authentication is readable by an organization: %d", r.status)
	}

	// A key of the organization, revoked: its failed authentication is in
	// the organization's log, under the key.
	created := st.do("POST", "/v1/keys", st.key, `{"name":"soon revoked","scopes":["payouts:read"]}`).json(t)["key"].(map[string]any)
	revoked, revokedID := created["secret"].(string), created["id"].(string)
	if r := st.do("DELETE", "/v1/keys/"+revokedID, st.key, nil); r.status != 200 {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	r = st.do("GET", "/v1/payouts", revoked, nil)
	if r.status != 401 {
		t.Fatalf("revoked key: %d", r.status)
	}
	rec = waitRecord(t, st, st.addr, st.key, r.header["x-request-id"])
	actor, _ = rec["actor"].(map[string]any)
	if rec["keyId"] != revokedID || actor["type"] != "api_key" || actor["id"] != revokedID ||
		actor["keyHint"] != revoked[:8]+"…"+revoked[len(revoked)-4:] || rec["status"] != 401.0 {
		t.Fatalf("failed authentication with a revoked key recorded as %v", rec)
	}

	// Every byte the log wrote: the ids are there, the secrets are not.
	st.srv.Shutdown(t.Context())
	st.requestLog.Close()
	var all []byte
	filepath.WalkDir(st.requestLogDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(path)
			all = append(all, b...)
		}
		return nil
	})
	for _, want := range []string{failedID, keyedID, "sk_test_…w9x8"} {
		if !bytes.Contains(all, []byte(want)) {
			t.Fatalf("%q is not in the log's files: the search below would prove nothing", want)
		}
	}
	for _, secret := range []string{wrong, wrong[8:], st.key, st.key[8:], revoked, revoked[8:], "233249876543"} {
		if bytes.Contains(all, []byte(secret)) {
			t.Errorf("the request log's files hold %q", secret)
		}
	}
}

// gatedStore holds the recorder in its first Append until released, so that
// a test can fill the queue behind it.
type gatedStore struct {
	api.RequestStore
	entered, release chan struct{}
	first            bool
}

func (g *gatedStore) Append(seq uint64, id, org string, at time.Time, value []byte) error {
	if !g.first {
		g.first = true
		close(g.entered)
		<-g.release
	}
	return g.RequestStore.Append(seq, id, org, at, value)
}

// A full queue drops records and counts them; requests are answered all
// the same, and what was queued is written once the recorder catches up.
func TestRequestLogDropsWhenQueueFull(t *testing.T) {
	gate := &gatedStore{entered: make(chan struct{}), release: make(chan struct{})}
	st := newStack(t, stackOptions{requestLogQueue: 2, requestLog: func(s api.RequestStore) api.RequestStore {
		gate.RequestStore = s
		return gate
	}})
	var ids []string
	get := func() {
		r := st.do("GET", "/v1/organization", st.key, nil)
		if r.status != 200 {
			t.Fatalf("GET /v1/organization: %d", r.status)
		}
		ids = append(ids, r.header["x-request-id"])
	}
	get() // the recorder takes it and waits in Append
	select {
	case <-gate.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the recorder never wrote")
	}
	for range 5 {
		get() // two fill the queue, three are dropped
	}
	if got := st.srv.RequestLogDropped(); got != 3 {
		t.Fatalf("dropped %d records, want 3", got)
	}
	close(gate.release)
	for _, id := range ids[:3] {
		waitRecord(t, st, st.addr, st.key, id)
	}
	for _, id := range ids[3:] {
		if r := st.do("GET", "/v1/requests/"+id, st.key, nil); r.status != 404 {
			t.Fatalf("dropped request %s: %d", id, r.status)
		}
	}
}

// A request recorded by one node is found through every node, also after
// the leader that served it handed the lead to another (which then asks the
// node the id names); another organization gets 404 from every node.
func TestRequestFoundFromAnyNode(t *testing.T) {
	nodes, key := newFilesCluster(t)
	st := &stack{t: t, addr: nodes[0].addr, client: newTestClient()}
	r := st.do("POST", "/v1/payouts", key, `{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":1},"externalReference":"c-1"}`)
	if r.status != 422 {
		t.Fatalf("payout on an empty balance: %d %s", r.status, r.body)
	}
	id := r.header["x-request-id"]
	for _, n := range nodes {
		if rec := waitRecord(t, st, n.addr, key, id); rec["id"] != id || rec["error"] != "insufficient_funds" {
			t.Fatalf("through %s: %v", n.addr, rec)
		}
	}
	// A request sent to a follower is relayed to the leader, which records
	// it under the id the client sees.
	relayed := st.doAt(nodes[1].addr, "GET", "/v1/organization", key, nil)
	waitRecord(t, st, nodes[2].addr, key, relayed.header["x-request-id"])

	// Another organization.
	org := st.do("POST", "/v1/organizations", key, `{"name":"Other","country":"GH","timezone":"Africa/Accra","defaultCurrency":"GHS"}`).json(t)
	otherKey, _ := org["key"].(map[string]any)["secret"].(string)
	if otherKey == "" {
		t.Fatalf("no key for the new organization: %v", org)
	}

	// The lead moves: the record stays on the node that served it.
	if err := nodes[0].node.TransferLeadership(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a new leader", 15*time.Second, func() bool { return nodes[1].node.IsLeader() || nodes[2].node.IsLeader() })
	for _, n := range nodes {
		if rec := waitRecord(t, st, n.addr, key, id); rec["id"] != id || rec["path"] != "/v1/payouts" {
			t.Fatalf("after the change of leader, through %s: %v", n.addr, rec)
		}
		if r := st.doAt(n.addr, "GET", "/v1/requests/"+id, otherKey, nil); r.status != 404 {
			t.Fatalf("another organization reads the record through %s: %d %s", n.addr, r.status, r.body)
		}
	}
	// The list merges every node's records, newest first: the payout the
	// new leader served, then the one the old leader did, a page at a time.
	r = st.doAt(nodes[2].addr, "POST", "/v1/payouts", key, `{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":1},"externalReference":"c-2"}`)
	newer := r.header["x-request-id"]
	waitRecord(t, st, nodes[0].addr, key, newer)
	for _, n := range nodes {
		var got []string
		cursor := ""
		for page := 0; page < 5; page++ {
			r := st.doAt(n.addr, "GET", "/v1/requests?path=/v1/payouts&limit=1"+cursor, key, nil)
			var body struct {
				Data       []struct{ ID string }
				HasMore    bool
				NextCursor *string
			}
			if r.status != 200 || json.Unmarshal(r.body, &body) != nil {
				t.Fatalf("list through %s: %d %s", n.addr, r.status, r.body)
			}
			for _, d := range body.Data {
				got = append(got, d.ID)
			}
			if !body.HasMore {
				break
			}
			cursor = "&cursor=" + *body.NextCursor
		}
		if strings.Join(got, " ") != newer+" "+id {
			t.Fatalf("list through %s: %v, want [%s %s]", n.addr, got, newer, id)
		}
	}
}

// doAt sends a request to another node than the stack's.
func (s *stack) doAt(addr, method, path, key string, body any) response {
	s.t.Helper()
	other := *s
	other.addr = addr
	return other.do(method, path, key, body)
}

func newTestClient() *nethttp.Client { return &nethttp.Client{Timeout: 30 * time.Second} }

// A path escape may decode to bytes that are not UTF-8; the record still
// reads back, those bytes shown as the replacement character.
func TestRequestLogPathNotUTF8(t *testing.T) {
	st := newStack(t, stackOptions{})
	r := st.do("GET", "/v1/payouts/pay_%ff%fe", st.key, nil)
	id := r.header["x-request-id"]
	rec := waitRecord(t, st, st.addr, st.key, id)
	if rec["path"] != "/v1/payouts/pay_\uFFFD" && rec["path"] != "/v1/payouts/pay_\uFFFD\uFFFD" {
		t.Fatalf("path recorded as %q", rec["path"])
	}
}
