//go:build momo_live

package momo_test

// The contract tests against MTN's real sandbox. They run with
// `go test -tags momo_live ./rails/momo/` and these variables set (the
// sandbox's API users and keys are created with its provisioning API):
//
//	MOMO_LIVE_BASE_URL                       default https://sandbox.momodeveloper.mtn.com
//	MOMO_LIVE_COLLECTION_API_USER, _API_KEY, _SUBSCRIPTION_KEY
//	MOMO_LIVE_DISBURSEMENT_API_USER, _API_KEY, _SUBSCRIPTION_KEY
//
// Without them every test is skipped.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"payments/rails/momo"
	"payments/rails/provider"
)

func liveAdapter(t *testing.T) *momo.Adapter {
	t.Helper()
	get := func(product, what string) provider.Secret {
		v := os.Getenv("MOMO_LIVE_" + product + "_" + what)
		if v == "" {
			t.Skipf("MOMO_LIVE_%s_%s is not set", product, what)
		}
		return provider.NewSecret(v)
	}
	base := os.Getenv("MOMO_LIVE_BASE_URL")
	if base == "" {
		base = "https://sandbox.momodeveloper.mtn.com"
	}
	cred := func(p string) *momo.Credentials {
		return &momo.Credentials{APIUser: get(p, "API_USER"), APIKey: get(p, "API_KEY"), SubscriptionKey: get(p, "SUBSCRIPTION_KEY")}
	}
	a, err := momo.New(momo.Config{Name: "momo_live", BaseURL: base, TargetEnvironment: "sandbox", Currency: "EUR", Exponent: 2,
		Collection: cred("COLLECTION"), Disbursement: cred("DISBURSEMENT")})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// await polls the sandbox (its clock, not ours) until status is final.
func await(t *testing.T, status func() (provider.Outcome, error)) provider.Outcome {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := status()
		if err != nil {
			t.Fatal(err)
		}
		if out.State.Final() {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %v after two minutes", out.State)
		}
		time.Sleep(3 * time.Second)
	}
}

func TestLiveContract(t *testing.T) {
	a := liveAdapter(t)
	ctx := context.Background()
	id := fmt.Sprintf("live_%d", time.Now().UnixNano())
	in := provider.Instruction{ID: id, Currency: "EUR", AmountMinor: 100, Exponent: 2, AccountNumber: "46733123459", Narration: "contract test"}

	t.Run("transfer completes and a re-submit is already taken", func(t *testing.T) {
		p, err := a.PreparePayout(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.SubmitPayout(ctx, in, p); err != nil {
			t.Fatal(err)
		}
		if out := await(t, func() (provider.Outcome, error) { return a.PayoutStatus(ctx, in, p) }); out.State != provider.StateCompleted {
			t.Fatalf("%+v", out)
		}
		again, err := a.SubmitPayout(ctx, in, p)
		if err != nil || again.Message != "already submitted" {
			t.Fatalf("re-submit: %+v %v", again, err)
		}
	})
	t.Run("a declined request to pay fails", func(t *testing.T) {
		d := in
		d.ID, d.AccountNumber = id+"_d", "46733123451"
		p, _ := a.PrepareCollection(ctx, d)
		if _, err := a.SubmitCollection(ctx, d, p); err != nil {
			t.Fatal(err)
		}
		if out := await(t, func() (provider.Outcome, error) { return a.CollectionStatus(ctx, d, p) }); out.State != provider.StateFailed {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("an unknown reference is not found", func(t *testing.T) {
		u := in
		u.ID = id + "_never"
		p, _ := a.PreparePayout(ctx, u)
		if _, err := a.PayoutStatus(ctx, u, p); !errors.Is(err, provider.ErrNotFound) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("balances", func(t *testing.T) {
		if _, err := a.Balances(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
