package momo

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"payments/rails/internal/railtest"
	"payments/rails/provider"
)

// stub answers the token endpoint with tokenStatus and every other request
// with status and body; it counts the requests that were not for a token.
func stub(t *testing.T, tokenStatus, status int, body string) (*Adapter, *atomic.Int32) {
	t.Helper()
	isToken := func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/token/") }
	url, calls := railtest.Stub(t, isToken, tokenStatus, `{"access_token":"tok","token_type":"access_token","expires_in":3600}`, status, body)
	c := &Credentials{APIUser: secret("u"), APIKey: secret("k"), SubscriptionKey: secret("s")}
	a, err := New(Config{Name: "t", BaseURL: url, TargetEnvironment: "sandbox", Currency: "EUR", Exponent: 2, Collection: c, Disbursement: c})
	if err != nil {
		t.Fatal(err)
	}
	return a, calls
}

var in = provider.Instruction{ID: "pay_x", Currency: "EUR", AmountMinor: 100, Exponent: 2, AccountNumber: "233241234567"}

func TestSubmitAnswers(t *testing.T) {
	cases := []struct {
		name        string
		tokenStatus int
		status      int
		body        string
		wantState   provider.State
		wantKind    error
		wantCalls   int32
	}{
		{"accepted", 200, 202, "", provider.StateProcessing, nil, 1},
		{"reference taken", 200, 409, `{"code":"RESOURCE_ALREADY_EXIST","message":"Duplicated reference id."}`, provider.StateProcessing, nil, 1},
		{"bad request", 200, 400, `{"code":"PAYEE_NOT_FOUND","message":"x"}`, 0, provider.ErrRejected, 1},
		{"token refused twice", 200, 401, `{"statusCode":401}`, 0, provider.ErrAuthentication, 2},
		{"forbidden ip", 200, 403, `{"code":"FORBIDDEN_IP"}`, 0, provider.ErrAuthentication, 1},
		{"wrong route", 200, 404, ``, 0, provider.ErrUnavailable, 1},
		{"rate limited", 200, 429, ``, 0, provider.ErrRateLimited, 1},
		{"wrong environment", 200, 500, `{"code":"NOT_ALLOWED_TARGET_ENVIRONMENT"}`, 0, provider.ErrRejected, 1},
		{"wrong currency", 200, 500, `{"code":"INVALID_CURRENCY"}`, 0, provider.ErrRejected, 1},
		{"callback host", 200, 500, `{"code":"INVALID_CALLBACK_URL_HOST"}`, 0, provider.ErrRejected, 1},
		{"internal error", 200, 500, `{"code":"INTERNAL_PROCESSING_ERROR"}`, 0, provider.ErrUnknownOutcome, 1},
		{"gateway timeout", 200, 504, ``, 0, provider.ErrUnknownOutcome, 1},
		{"token credentials refused", 401, 202, ``, 0, provider.ErrAuthentication, 0},
		{"token endpoint down", 503, 202, ``, 0, provider.ErrUnavailable, 0},
		{"token rate limited", 429, 202, ``, 0, provider.ErrRateLimited, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, calls := stub(t, c.tokenStatus, c.status, c.body)
			p, err := a.PreparePayout(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			out, err := a.SubmitPayout(context.Background(), in, p)
			railtest.CheckOutcome(t, out, err, c.wantState, c.wantKind)
			if calls.Load() != c.wantCalls {
				t.Fatalf("%d requests, want %d", calls.Load(), c.wantCalls)
			}
		})
	}
}

func TestStatusAnswers(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		body     string
		want     provider.State
		wantMsg  string
		wantKind error
	}{
		{"successful", 200, `{"amount":"1","currency":"EUR","financialTransactionId":"9","status":"SUCCESSFUL"}`, provider.StateCompleted, "", nil},
		{"numbers for strings", 200, `{"amount":1,"currency":"EUR","financialTransactionId":9,"status":"SUCCESSFUL"}`, provider.StateCompleted, "", nil},
		{"another amount", 200, `{"amount":"2","currency":"EUR","status":"SUCCESSFUL"}`, 0, "", provider.ErrUnknownOutcome},
		{"another currency", 200, `{"amount":"1","currency":"GHS","status":"SUCCESSFUL"}`, 0, "", provider.ErrUnknownOutcome},
		{"failed with an object", 200, `{"status":"FAILED","reason":{"code":"PAYEE_NOT_FOUND","message":"Payee not found"}}`, provider.StateFailed, "PAYEE_NOT_FOUND: Payee not found", nil},
		{"failed with a code", 200, `{"status":"FAILED","reason":"NOT_ENOUGH_FUNDS"}`, provider.StateFailed, "NOT_ENOUGH_FUNDS: insufficient funds", nil},
		{"failed without reason", 200, `{"status":"FAILED"}`, provider.StateFailed, "failed", nil},
		{"pending", 200, `{"status":"PENDING"}`, provider.StateProcessing, "", nil},
		{"a status we do not know", 200, `{"status":"WEIRD"}`, provider.StateUnknown, "WEIRD", nil},
		{"unknown reference", 404, `{"code":"RESOURCE_NOT_FOUND"}`, 0, "", provider.ErrNotFound},
		{"server error", 500, ``, 0, "", provider.ErrUnavailable},
		{"garbage", 200, `<html>`, 0, "", provider.ErrUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, _ := stub(t, 200, c.status, c.body)
			p, _ := a.PreparePayout(context.Background(), in)
			out, err := a.PayoutStatus(context.Background(), in, p)
			if c.wantKind != nil {
				if !errors.Is(err, c.wantKind) {
					t.Fatalf("err %v, want %v", err, c.wantKind)
				}
				return
			}
			if err != nil || out.State != c.want || !strings.Contains(out.Message, c.wantMsg) {
				t.Fatalf("%+v %v; want %v with %q", out, err, c.want, c.wantMsg)
			}
			if !out.State.Final() && out.CheckAfter <= 0 {
				t.Fatal("a pending outcome without CheckAfter")
			}
		})
	}
}

func TestUnreachableIsUnavailable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := &Credentials{APIUser: secret("u"), APIKey: secret("k"), SubscriptionKey: secret("s")}
	a, _ := New(Config{Name: "t", BaseURL: url, TargetEnvironment: "sandbox", Currency: "EUR", Exponent: 2, Disbursement: c, RequestTimeout: time.Second})
	p, _ := a.PreparePayout(context.Background(), in)
	if _, err := a.SubmitPayout(context.Background(), in, p); !errors.Is(err, provider.ErrUnavailable) {
		t.Fatalf("err %v", err)
	}
	if _, err := a.PrepareCollection(context.Background(), in); !errors.Is(err, ErrNotConfigured) {
		t.Fatalf("collections without credentials: %v", err)
	}
}

func TestInstructionChecks(t *testing.T) {
	a, calls := stub(t, 200, 202, "")
	cases := []struct {
		name string
		edit func(*provider.Instruction)
	}{
		{"another currency", func(i *provider.Instruction) { i.Currency = "GHS" }},
		{"another exponent", func(i *provider.Instruction) { i.Exponent = 0 }},
		{"zero amount", func(i *provider.Instruction) { i.AmountMinor = 0 }},
		{"malformed number", func(i *provider.Instruction) { i.AccountNumber = "+233-24-123" }},
		{"no id", func(i *provider.Instruction) { i.ID = "" }},
	}
	for _, c := range cases {
		i := in
		c.edit(&i)
		if _, err := a.PreparePayout(context.Background(), i); !errors.Is(err, provider.ErrRejected) {
			t.Errorf("%s: %v", c.name, err)
		} else if strings.Contains(err.Error(), "233-24-123") {
			t.Errorf("%s: the number is in the error: %v", c.name, err)
		}
	}
	if calls.Load() != 0 {
		t.Fatal("a refused instruction was sent")
	}
}

func TestFactory(t *testing.T) {
	env := map[string]string{"CU": "u", "CK": "k", "CS": "s", "DU": "u2", "DK": "k2", "DS": "s2"}
	getenv := func(k string) string { return env[k] }
	all := `"secrets":{"collectionApiUser":{"env":"CU"},"collectionApiKey":{"env":"CK"},"collectionSubscriptionKey":{"env":"CS"},
		"disbursementApiUser":{"env":"DU"},"disbursementApiKey":{"env":"DK"},"disbursementSubscriptionKey":{"env":"DS"}}`
	cases := []struct {
		name, config, wantErr string
	}{
		{"both products", `{"providers":[{"name":"momo_gh","kind":"mtn_momo","methods":[{"code":"gh_mtn","directions":["payouts","collections"]}],
			"settings":{"baseUrl":"https://momo.example","targetEnvironment":"mtnghana","currency":"GHS","callbackBaseUrl":"https://pay.example/"},` + all + `}]}`, ""},
		{"payouts without disbursement secrets", `{"providers":[{"name":"m","kind":"mtn_momo","methods":[{"code":"gh_mtn","directions":["payouts"]}],
			"settings":{"baseUrl":"https://momo.example","targetEnvironment":"sandbox","currency":"EUR"},
			"secrets":{"collectionApiUser":{"env":"CU"},"collectionApiKey":{"env":"CK"},"collectionSubscriptionKey":{"env":"CS"}}}]}`, `"disbursementApiUser" is not configured`},
		{"misspelt setting", `{"providers":[{"name":"m","kind":"mtn_momo","methods":[{"code":"gh_mtn","directions":["payouts"]}],
			"settings":{"baseUri":"https://momo.example"},` + all + `}]}`, "unknown field"},
		{"no environment", `{"providers":[{"name":"m","kind":"mtn_momo","methods":[{"code":"gh_mtn","directions":["payouts"]}],
			"settings":{"baseUrl":"https://momo.example","currency":"EUR"},` + all + `}]}`, "targetEnvironment is required"},
		{"bad duration", `{"providers":[{"name":"m","kind":"mtn_momo","methods":[{"code":"gh_mtn","directions":["payouts"]}],
			"settings":{"baseUrl":"https://momo.example","targetEnvironment":"sandbox","currency":"EUR","checkAfter":"soon"},` + all + `}]}`, "not a positive duration"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := railtest.Build(t, c.config, Kind, Factory, getenv, c.wantErr)
			if r == nil {
				return
			}
			pay, inst, ok := r.Payouter("gh_mtn")
			if !ok || inst.Name != "momo_gh" {
				t.Fatal("gh_mtn payouts not served")
			}
			a := pay.(*Adapter)
			if a.cfg.CallbackURL != "https://pay.example/v1/providers/momo_gh/callbacks" || a.cfg.Exponent != 2 || a.disbursement.creds.APIKey.Reveal() != "k2" {
				t.Fatalf("config %+v", a.cfg)
			}
		})
	}
}
