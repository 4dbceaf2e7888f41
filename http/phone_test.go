package http_test

import (
	"fmt"
	"testing"
)

// Every request that takes a phone number accepts it with or without a
// leading + and stores the digits with the country code: payouts,
// collections, both sides of an order, recipients, account validation, and
// checkout sessions opened through the API and through the hosted checkout.
func TestPhoneNumbersWithOrWithoutPlus(t *testing.T) {
	st := newStack(t, stackOptions{})
	st.fund(st.key, "GHS", "10000.00", "seed-phone")
	const stored = "233241234567"
	wantName := validatedName(t, st, stored)

	for i, tc := range []struct {
		name string
		// send sends number (ref keeps creates apart) and returns the
		// number as it was stored.
		send func(t *testing.T, number, ref string) string
	}{
		{"payout", func(t *testing.T, number, ref string) string {
			r := created(t, st, "/v1/payouts", st.key, fmt.Sprintf(
				`{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":%q,"amount":10},"externalReference":%q}`, number, ref))
			return stringAt(t, r, "payout", "to", "accountNumber")
		}},
		{"collection", func(t *testing.T, number, ref string) string {
			r := created(t, st, "/v1/collections", st.key, fmt.Sprintf(
				`{"from":{"accountNumber":%q,"code":"gh_mtn","amount":"10.00","currency":"GHS"},"externalReference":%q}`, number, ref))
			return stringAt(t, r, "collection", "from", "accountNumber")
		}},
		{"order paid by mobile money", func(t *testing.T, number, ref string) string {
			r := created(t, st, "/v1/orders", st.key, fmt.Sprintf(
				`{"from":{"code":"gh_mtn","currency":"GHS","accountNumber":%q,"amount":"200"},"to":{"code":"usdc_solana","currency":"USDC","accountNumber":"7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU"},"externalReference":%q}`, number, ref))
			return stringAt(t, r, "order", "from", "accountNumber")
		}},
		{"order delivered by mobile money", func(t *testing.T, number, ref string) string {
			r := created(t, st, "/v1/orders", st.key, fmt.Sprintf(
				`{"from":{"code":"usdt_tron","currency":"USDT","amount":20},"to":{"code":"gh_mtn","currency":"GHS","accountNumber":%q},"externalReference":%q}`, number, ref))
			return stringAt(t, r, "order", "to", "accountNumber")
		}},
		{"recipient", func(t *testing.T, number, ref string) string {
			r := created(t, st, "/v1/recipients", st.key, fmt.Sprintf(
				`{"code":"gh_mtn","accountNumber":%q,"label":%q}`, number, ref))
			return stringAt(t, r, "recipient", "accountNumber")
		}},
		{"validation", func(t *testing.T, number, _ string) string {
			// The rail is asked about the stored form: the same holder.
			if name := validatedName(t, st, number); name != wantName {
				t.Fatalf("%s resolves to %q, %s to %q", number, name, stored, wantName)
			}
			return stored
		}},
		{"checkout session through the API", func(t *testing.T, number, _ string) string {
			link := st.plCreate("40.00", `["mobile_money"]`)
			r := created(t, st, "/v1/payment-links/"+link+"/sessions", st.key, fmt.Sprintf(
				`{"method":"mobile_money","code":"gh_mtn","accountNumber":%q}`, number))
			return stringAt(t, r, "checkoutSession", "instructions", "accountNumber")
		}},
		{"checkout session through the hosted checkout", func(t *testing.T, number, ref string) string {
			link := st.plCreate("40.00", `["mobile_money"]`)
			created(t, st, "/v1/checkout/"+link+"/sessions", "", fmt.Sprintf(
				`{"method":"mobile_money","code":"gh_mtn","accountNumber":%q,"attempt":"attempt-%s"}`, number, ref))
			s := st.plGet(link)["sessions"].([]any)[0].(map[string]any)
			return stringAt(t, s, "instructions", "accountNumber")
		}},
	} {
		for j, number := range []string{stored, "+" + stored} {
			t.Run(tc.name+"/"+number, func(t *testing.T) {
				if got := tc.send(t, number, fmt.Sprintf("phone-%02d-%d", i, j)); got != stored {
					t.Fatalf("%s stored as %q, want %q", number, got, stored)
				}
			})
		}
	}
}

// created sends a create that must succeed and returns its response.
func created(t *testing.T, st *stack, path, key, body string) map[string]any {
	t.Helper()
	r := st.do("POST", path, key, body)
	if r.status != 201 {
		t.Fatalf("POST %s: status %d, want 201: %s", path, r.status, r.body)
	}
	return r.json(t)
}

// stringAt reads the string at a path of object keys.
func stringAt(t *testing.T, v map[string]any, path ...string) string {
	t.Helper()
	for _, k := range path[:len(path)-1] {
		next, ok := v[k].(map[string]any)
		if !ok {
			t.Fatalf("no %v in %v", path, v)
		}
		v = next
	}
	s, ok := v[path[len(path)-1]].(string)
	if !ok {
		t.Fatalf("no string at %v in %v", path, v)
	}
	return s
}

// validatedName validates a gh_mtn number that must be valid and returns
// its holder's name.
func validatedName(t *testing.T, st *stack, number string) string {
	t.Helper()
	r := st.do("POST", "/v1/validate", st.key, fmt.Sprintf(`{"code":"gh_mtn","accountNumber":%q}`, number))
	if r.status != 200 {
		t.Fatalf("validate %s: status %d: %s", number, r.status, r.body)
	}
	v := r.json(t)["validation"].(map[string]any)
	if v["valid"] != true {
		t.Fatalf("validate %s: %v", number, v)
	}
	return v["accountName"].(string)
}
