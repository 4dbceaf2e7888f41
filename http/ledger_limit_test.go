package http_test

import (
	"fmt"
	"testing"
)

// Ledger lists page 20 entries when the caller names no limit, as every
// other list does (the contract's page size rule).
func TestLedgerListsDefaultToTwentyEntries(t *testing.T) {
	st := newStack(t, stackOptions{rateLimit: 1000})
	const funded = 25
	for i := range funded {
		st.fund(st.key, "GHS", "1.00", fmt.Sprintf("seed-%d", i))
	}
	accounts := st.do("GET", "/v1/accounts", st.key, nil).json(t)["data"].([]any)
	if len(accounts) != 1 {
		t.Fatalf("accounts %v", accounts)
	}
	account := accounts[0].(map[string]any)["id"].(string)
	for _, tc := range []struct {
		name, path string
		want       int
	}{
		{"the organization's ledger", "/v1/ledger", 20},
		{"an account's ledger", "/v1/accounts/" + account + "/ledger", 20},
		{"a limit still applies", "/v1/ledger?limit=25", funded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := st.do("GET", tc.path, st.key, nil)
			st.mustStatus(r, 200)
			body := r.json(t)
			if got := len(body["data"].([]any)); got != tc.want {
				t.Fatalf("%s: %d entries, want %d", tc.path, got, tc.want)
			}
			if more := body["hasMore"].(bool); more != (tc.want < funded) {
				t.Fatalf("%s: hasMore %v with %d of %d entries", tc.path, more, tc.want, funded)
			}
		})
	}
}
