package http_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// Every response that carries a secret (a new key, a signing secret) tells
// caches not to keep it; responses without one are not marked.
func TestSecretResponsesAreNotStored(t *testing.T) {
	st := newStack(t, stackOptions{})
	endpoint, _ := json.Marshal(map[string]any{"url": "http://127.0.0.1:9/hooks", "events": []string{"*"}})
	r := st.do("POST", "/v1/webhooks/endpoints", st.key, endpoint)
	st.mustStatus(r, 201)
	id := r.json(t)["endpoint"].(map[string]any)["id"].(string)

	cases := []struct {
		name, method, path, body, secret string
		status                           int
	}{
		{"new key", "POST", "/v1/keys", `{"name":"second"}`, "sk_test_", 201},
		{"new organization", "POST", "/v1/organizations", `{"name":"Other Org"}`, "sk_test_", 201},
		{"signing secret", "GET", "/v1/webhooks/signing-secret/" + id, "", "whsec_", 200},
		{"rotated signing secret", "POST", "/v1/webhooks/signing-secret/" + id + "/rotate", "", "whsec_", 200},
	}
	for _, tc := range cases {
		var body any
		if tc.body != "" {
			body = tc.body
		}
		r := st.do(tc.method, tc.path, st.key, body)
		st.mustStatus(r, tc.status)
		if !strings.Contains(string(r.body), tc.secret) {
			t.Fatalf("%s: no secret in %s", tc.name, r.body)
		}
		if got := r.header["cache-control"]; got != "no-store" {
			t.Errorf("%s: Cache-Control %q, want no-store", tc.name, got)
		}
	}
	if r := st.do("GET", "/v1/keys", st.key, nil); r.header["cache-control"] != "" {
		t.Errorf("a list of keys without secrets is marked %q", r.header["cache-control"])
	}
}
