//go:build mpesa_live

package mpesa_test

// The contract tests against Safaricom's Daraja sandbox. They run with
// `go test -tags mpesa_live ./rails/mpesa/` and these variables set:
//
//	MPESA_LIVE_CONSUMER_KEY, MPESA_LIVE_CONSUMER_SECRET   an app's credentials
//	MPESA_LIVE_PASSKEY                                    the sandbox Lipa na M-Pesa passkey
//	MPESA_LIVE_INITIATOR_PASSWORD, MPESA_LIVE_CERTIFICATE_FILE   the sandbox initiator's
//	MPESA_LIVE_CALLBACK_URL   a public https URL (Daraja needs one; the tests read no callback)
//	optional: MPESA_LIVE_BASE_URL (https://sandbox.safaricom.co.ke), MPESA_LIVE_SHORT_CODE (174379),
//	MPESA_LIVE_B2C_SHORT_CODE (600000), MPESA_LIVE_INITIATOR_NAME (testapi), MPESA_LIVE_PHONE (254708374149)
//
// Without them every test is skipped. Callbacks cannot reach a test run, so
// the suite checks the synchronous contract: tokens, the STK password, the
// security credential, the duplicate refusal and the queries.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"payments/rails/mpesa"
	"payments/rails/provider"
)

func liveConfig(t *testing.T) mpesa.Config {
	t.Helper()
	need := func(k string) string {
		v := os.Getenv("MPESA_LIVE_" + k)
		if v == "" {
			t.Skipf("MPESA_LIVE_%s is not set", k)
		}
		return v
	}
	or := func(k, def string) string {
		if v := os.Getenv("MPESA_LIVE_" + k); v != "" {
			return v
		}
		return def
	}
	cert, err := os.ReadFile(need("CERTIFICATE_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	return mpesa.Config{
		Name: "mpesa_live", BaseURL: or("BASE_URL", "https://sandbox.safaricom.co.ke"), CallbackURL: need("CALLBACK_URL"),
		ConsumerKey: provider.NewSecret(need("CONSUMER_KEY")), ConsumerSecret: provider.NewSecret(need("CONSUMER_SECRET")),
		ShortCode: or("SHORT_CODE", "174379"), Passkey: provider.NewSecret(need("PASSKEY")),
		B2CShortCode: or("B2C_SHORT_CODE", "600000"), InitiatorName: or("INITIATOR_NAME", "testapi"),
		InitiatorPassword: provider.NewSecret(need("INITIATOR_PASSWORD")), Certificate: cert,
	}
}

func TestLiveContract(t *testing.T) {
	cfg := liveConfig(t)
	a, err := mpesa.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	phone := os.Getenv("MPESA_LIVE_PHONE")
	if phone == "" {
		phone = "254708374149"
	}
	id := fmt.Sprintf("live%d", time.Now().UnixNano())
	in := provider.Instruction{ID: id, Currency: "KES", AmountMinor: 10_00, Exponent: 2, AccountNumber: phone, Narration: "contract test"}

	t.Run("stk push is accepted and queried", func(t *testing.T) {
		c := in
		c.ID = "col_" + id
		p, err := a.PrepareCollection(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		out, err := a.SubmitCollection(ctx, c, p)
		if err != nil || out.ProviderRef == "" {
			t.Fatalf("%+v %v", out, err)
		}
		c.ProviderRef = out.ProviderRef
		if _, err := a.CollectionStatus(ctx, c, p); err != nil && !errors.Is(err, provider.ErrRateLimited) {
			t.Fatal(err)
		}
	})
	t.Run("an unknown CheckoutRequestID is not found", func(t *testing.T) {
		c := in
		c.ProviderRef = "ws_CO_000000000000000000000"
		p, _ := a.PrepareCollection(ctx, c)
		if _, err := a.CollectionStatus(ctx, c, p); !errors.Is(err, provider.ErrNotFound) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("b2c is accepted once, and a duplicate is already taken", func(t *testing.T) {
		p, err := a.PreparePayout(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if out, err := a.SubmitPayout(ctx, in, p); err != nil || out.State != provider.StateProcessing {
			t.Fatalf("%+v %v", out, err)
		}
		other, _ := mpesa.New(cfg)
		again, err := other.SubmitPayout(ctx, in, p)
		if err != nil || again.Message != "already submitted" {
			t.Fatalf("duplicate: %+v %v", again, err)
		}
		if out, err := a.PayoutStatus(ctx, in, p); err != nil || out.State != provider.StateUnknown {
			t.Fatalf("status query: %+v %v", out, err)
		}
	})
}
