package http_test

import (
	"encoding/json"
	"io"
	nethttp "net/http"
	"strings"
	"testing"
)

// Download links start with the configured public base URL, whatever Host
// the caller sends; without one, with the listener's address.
func TestDownloadLinksUseThePublicBaseURL(t *testing.T) {
	for _, tc := range []struct {
		name, configured string
		want             func(s *stack) string
	}{
		{"configured", "https://api.payments.test/", func(*stack) string { return "https://api.payments.test/v1/files/" }},
		{"default", "", func(s *stack) string { return "http://" + s.addr + "/v1/files/" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newStack(t, stackOptions{publicBase: tc.configured})
			r := st.upload("dispute.evidence", "receipt.pdf", "application/pdf", []byte("%PDF-1.4 receipt"))
			st.mustStatus(r, 201)
			file := r.json(t)["file"].(map[string]any)
			want := tc.want(st)
			if u := file["url"].(string); !strings.HasPrefix(u, want) {
				t.Fatalf("upload's url %q, want it under %q", u, want)
			}
			// A caller's Host header does not choose where links point.
			req, _ := nethttp.NewRequest("GET", "http://"+st.addr+"/v1/files/"+file["id"].(string), nil)
			req.Host = "attacker.example"
			req.Header.Set("Authorization", "Bearer "+st.key)
			resp, err := st.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got struct {
				File struct {
					URL string `json:"url"`
				} `json:"file"`
			}
			b, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(b, &got); err != nil || resp.StatusCode != 200 {
				t.Fatalf("get file: %d %s", resp.StatusCode, b)
			}
			if !strings.HasPrefix(got.File.URL, want) || strings.Contains(got.File.URL, "attacker") {
				t.Fatalf("url %q with Host attacker.example, want it under %q", got.File.URL, want)
			}
		})
	}
}
