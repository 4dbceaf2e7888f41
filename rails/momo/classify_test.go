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
	c := &Credentials{APIUser: secret("u"), APIKey: secret("k"), SubscriptionKey: secret("s")}
	return railtest.Stub(t, "/token/", tokenStatus, `{"access_token":"tok","token_type":"access_token","expires_in":3600}`, status, body, func(url string) (*Adapter, error) {
		return New(Config{Name: "t", BaseURL: url, TargetEnvironment: "sandbox", Currency: "EUR", Exponent: 2, Collection: c, Disbursement: c})
	})
}

var in = provider.Instruction{ID: "pay_x", Currency: "EUR", AmountMinor: 100, Exponent: 2, AccountNumber: "233241234567"}

func TestSubmitAnswers(t *testing.T) {
	cases := []struct {
		railtest.QueryCase
		tokenStatus int   // the token endpoint's
		wantCalls   int32 // the requests not for a token
	}{
		{railtest.QueryCase{Name: "accepted", Status: 202, Want: provider.StateProcessing}, 200, 1},
		{railtest.QueryCase{Name: "reference taken", Status: 409, Body: `{"code":"RESOURCE_ALREADY_EXIST","message":"Duplicated reference id."}`, Want: provider.StateProcessing}, 200, 1},
		{railtest.QueryCase{Name: "bad request", Status: 400, Body: `{"code":"PAYEE_NOT_FOUND","message":"x"}`, WantKind: provider.ErrRejected}, 200, 1},
		{railtest.QueryCase{Name: "token refused twice", Status: 401, Body: `{"statusCode":401}`, WantKind: provider.ErrAuthentication}, 200, 2},
		{railtest.QueryCase{Name: "forbidden ip", Status: 403, Body: `{"code":"FORBIDDEN_IP"}`, WantKind: provider.ErrAuthentication}, 200, 1},
		{railtest.QueryCase{Name: "wrong route", Status: 404, WantKind: provider.ErrUnavailable}, 200, 1},
		{railtest.QueryCase{Name: "rate limited", Status: 429, WantKind: provider.ErrRateLimited}, 200, 1},
		{railtest.QueryCase{Name: "wrong environment", Status: 500, Body: `{"code":"NOT_ALLOWED_TARGET_ENVIRONMENT"}`, WantKind: provider.ErrRejected}, 200, 1},
		{railtest.QueryCase{Name: "wrong currency", Status: 500, Body: `{"code":"INVALID_CURRENCY"}`, WantKind: provider.ErrRejected}, 200, 1},
		{railtest.QueryCase{Name: "callback host", Status: 500, Body: `{"code":"INVALID_CALLBACK_URL_HOST"}`, WantKind: provider.ErrRejected}, 200, 1},
		{railtest.QueryCase{Name: "internal error", Status: 500, Body: `{"code":"INTERNAL_PROCESSING_ERROR"}`, WantKind: provider.ErrUnknownOutcome}, 200, 1},
		{railtest.QueryCase{Name: "gateway timeout", Status: 504, WantKind: provider.ErrUnknownOutcome}, 200, 1},
		{railtest.QueryCase{Name: "token credentials refused", Status: 202, WantKind: provider.ErrAuthentication}, 401, 0},
		{railtest.QueryCase{Name: "token endpoint down", Status: 202, WantKind: provider.ErrUnavailable}, 503, 0},
		{railtest.QueryCase{Name: "token rate limited", Status: 202, WantKind: provider.ErrRateLimited}, 429, 0},
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			a, calls := stub(t, c.tokenStatus, c.Status, c.Body)
			p, err := a.PreparePayout(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			out, err := a.SubmitPayout(context.Background(), in, p)
			c.Check(t, out, err)
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
