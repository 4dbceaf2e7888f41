package http_test

import (
	"fmt"
	"strings"
	"testing"

	"payments/ledger"
	"payments/rails"
)

// Chains go by the reference's names ("Ethereum", not "ethereum") in every
// response, through the one mapping rails.ChainName: a checkout session
// names its chain as a crypto address on that chain does, in the answer
// that opens it, in its payment link, and in the hosted checkout's view.
func TestCheckoutSessionsNameChains(t *testing.T) {
	st := newStack(t, stackOptions{})
	tested := 0
	for _, m := range rails.DefaultCatalogue().Networks() {
		if m.Type != ledger.MethodCrypto || !m.Collections || m.Status != "operational" {
			continue
		}
		tested++
		t.Run(m.Code, func(t *testing.T) {
			want := rails.ChainName(m.Chain)
			if want == m.Chain {
				t.Fatalf("chain %q has no name of its own in the catalogue", m.Chain)
			}
			// A crypto address asked for with the chain's code in lower
			// case names the chain too, where the pair takes deposits.
			if _, ok := rails.DefaultCatalogue().DepositNetwork(m.Currency, m.Chain); ok {
				r := created(t, st, "/v1/crypto-addresses", st.key, fmt.Sprintf(`{"currency":%q,"chain":%q}`, m.Currency, m.Chain))
				if got := stringAt(t, r, "address", "chain"); got != want {
					t.Fatalf("crypto address: chain %q, want %q", got, want)
				}
			}

			link := st.plCreate("40.00", `["crypto"]`)
			r := created(t, st, "/v1/payment-links/"+link+"/sessions", st.key, fmt.Sprintf(`{"method":"crypto","code":%q}`, m.Code))
			if got := stringAt(t, r, "checkoutSession", "chain"); got != want {
				t.Fatalf("session: chain %q, want %q", got, want)
			}
			if got := stringAt(t, r, "checkoutSession", "instructions", "chain"); got != want {
				t.Fatalf("session instructions: chain %q, want %q", got, want)
			}
			if msg := stringAt(t, r, "checkoutSession", "instructions", "message"); !strings.Contains(msg, " on "+want+" ") {
				t.Fatalf("session instructions: message %q does not name %s", msg, want)
			}
			s := st.plGet(link)["sessions"].([]any)[0].(map[string]any)
			if got := stringAt(t, s, "chain"); got != want {
				t.Fatalf("payment link's session: chain %q, want %q", got, want)
			}
			pub := st.do("GET", "/v1/checkout/"+link, "", nil)
			st.mustStatus(pub, 200)
			if got := stringAt(t, pub.json(t), "checkout", "session", "chain"); got != want {
				t.Fatalf("hosted checkout's session: chain %q, want %q", got, want)
			}
		})
	}
	if tested == 0 {
		t.Fatal("the catalogue collects on no crypto network")
	}
}
