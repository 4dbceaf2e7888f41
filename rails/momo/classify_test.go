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
	cases := []railtest.QueryCase{
		{Name: "successful", Status: 200, Body: `{"amount":"1","currency":"EUR","financialTransactionId":"9","status":"SUCCESSFUL"}`, Want: provider.StateCompleted},
		{Name: "numbers for strings", Status: 200, Body: `{"amount":1,"currency":"EUR","financialTransactionId":9,"status":"SUCCESSFUL"}`, Want: provider.StateCompleted},
		{Name: "another amount", Status: 200, Body: `{"amount":"2","currency":"EUR","status":"SUCCESSFUL"}`, WantKind: provider.ErrUnknownOutcome},
		{Name: "another currency", Status: 200, Body: `{"amount":"1","currency":"GHS","status":"SUCCESSFUL"}`, WantKind: provider.ErrUnknownOutcome},
		{Name: "failed with an object", Status: 200, Body: `{"status":"FAILED","reason":{"code":"PAYEE_NOT_FOUND","message":"Payee not found"}}`, Want: provider.StateFailed, WantMsg: "PAYEE_NOT_FOUND: Payee not found"},
		{Name: "failed with a code", Status: 200, Body: `{"status":"FAILED","reason":"NOT_ENOUGH_FUNDS"}`, Want: provider.StateFailed, WantMsg: "NOT_ENOUGH_FUNDS: insufficient funds"},
		{Name: "failed without reason", Status: 200, Body: `{"status":"FAILED"}`, Want: provider.StateFailed, WantMsg: "failed"},
		{Name: "pending", Status: 200, Body: `{"status":"PENDING"}`, Want: provider.StateProcessing},
		{Name: "a status we do not know", Status: 200, Body: `{"status":"WEIRD"}`, Want: provider.StateUnknown, WantMsg: "WEIRD"},
		{Name: "unknown reference", Status: 404, Body: `{"code":"RESOURCE_NOT_FOUND"}`, WantKind: provider.ErrNotFound},
		{Name: "server error", Status: 500, WantKind: provider.ErrUnavailable},
		{Name: "garbage", Status: 200, Body: `<html>`, WantKind: provider.ErrUnavailable},
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			a, _ := stub(t, 200, c.Status, c.Body)
			p, _ := a.PreparePayout(context.Background(), in)
			out, err := a.PayoutStatus(context.Background(), in, p)
			if c.Check(t, out, err) && !out.State.Final() && out.CheckAfter <= 0 {
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
	cases := []railtest.FactoryCase{
		{Name: "both products", Config: `{"providers":[{"name":"momo_gh","kind":"mtn_momo","methods":[{"code":"gh_mtn","directions":["payouts","collections"]}],
			"settings":{"baseUrl":"https://momo.example","targetEnvironment":"mtnghana","currency":"GHS","callbackBaseUrl":"https://pay.example/"},` + all + `}]}`},
		{Name: "payouts without disbursement secrets", Config: `{"providers":[{"name":"m","kind":"mtn_momo","methods":[{"code":"gh_mtn","directions":["payouts"]}],
			"settings":{"baseUrl":"https://momo.example","targetEnvironment":"sandbox","currency":"EUR"},
			"secrets":{"collectionApiUser":{"env":"CU"},"collectionApiKey":{"env":"CK"},"collectionSubscriptionKey":{"env":"CS"}}}]}`, WantErr: `"disbursementApiUser" is not configured`},
		{Name: "misspelt setting", Config: `{"providers":[{"name":"m","kind":"mtn_momo","methods":[{"code":"gh_mtn","directions":["payouts"]}],
			"settings":{"baseUri":"https://momo.example"},` + all + `}]}`, WantErr: "unknown field"},
		{Name: "no environment", Config: `{"providers":[{"name":"m","kind":"mtn_momo","methods":[{"code":"gh_mtn","directions":["payouts"]}],
			"settings":{"baseUrl":"https://momo.example","currency":"EUR"},` + all + `}]}`, WantErr: "targetEnvironment is required"},
		{Name: "bad duration", Config: `{"providers":[{"name":"m","kind":"mtn_momo","methods":[{"code":"gh_mtn","directions":["payouts"]}],
			"settings":{"baseUrl":"https://momo.example","targetEnvironment":"sandbox","currency":"EUR","checkAfter":"soon"},` + all + `}]}`, WantErr: "not a positive duration"},
	}
	railtest.RunFactoryCases(t, cases, Kind, Factory, getenv, func(t *testing.T, r *provider.Registry) {
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
