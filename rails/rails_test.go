package rails

import (
	"errors"
	"strings"
	"testing"

	"payments/ledger"
)

// The embedded catalogue parses, and every method is well formed: code
// prefixed by its country (or token), a known type and currency, limits in
// order, input fields.
func TestCatalogue(t *testing.T) {
	c := DefaultCatalogue()
	if len(c.Countries()) < 12 {
		t.Errorf("%d countries; the catalogue covers at least a dozen", len(c.Countries()))
	}
	for _, country := range c.Countries() {
		for _, m := range country.Methods {
			if !strings.HasPrefix(m.Code, strings.ToLower(country.Code)+"_") {
				t.Errorf("method %s is not prefixed by its country %s", m.Code, country.Code)
			}
			if m.Currency != country.Currency || m.Min <= 0 || m.Max < m.Min || len(m.Fields) == 0 {
				t.Errorf("method %s is malformed: %+v", m.Code, m)
			}
		}
	}
	for _, m := range c.Networks() {
		if m.Type != ledger.MethodCrypto || m.Chain == "" || !strings.HasPrefix(m.Code, strings.ToLower(m.Currency)+"_") {
			t.Errorf("network %s is malformed: %+v", m.Code, m)
		}
	}
}

func TestCatalogueCheck(t *testing.T) {
	c := DefaultCatalogue()
	tests := []struct {
		name     string
		dir      Direction
		code     string
		currency string
		amount   ledger.Minor
		wantErr  string // substring of the field message; "" for success
	}{
		{"payout ok", Payout, "gh_mtn", "GHS", 10_000, ""},
		{"collection ok", Collection, "ke_mpesa", "KES", 10_000, ""},
		{"unknown", Payout, "gh_nope", "GHS", 10_000, "not a known payment method"},
		{"bank cannot collect", Collection, "gh_ghipss", "GHS", 10_000, "does not support collections"},
		{"maintenance", Payout, "ng_paga", "NGN", 100_000, "not operational"},
		{"wrong currency", Payout, "gh_mtn", "KES", 10_000, "moves GHS, not KES"},
		{"below min", Payout, "gh_mtn", "GHS", 99, "between 1.00 and 50000.00"},
		{"above max", Payout, "gh_mtn", "GHS", 5_000_001, "between 1.00 and 50000.00"},
		{"at max", Payout, "gh_mtn", "GHS", 5_000_000, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Check(tt.dir, "to.code", "to.amount", tt.code, tt.currency, tt.amount)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ledger.ErrValidation) || !strings.Contains(err.Fields[0].Message, tt.wantErr) {
				t.Fatalf("got %v, want a validation error containing %q", err, tt.wantErr)
			}
		})
	}
}

// The cents pick the scenario; currencies without two decimals use the
// amount's last two digits, and six-decimal tokens their first two decimals.
func TestTriggerSelect(t *testing.T) {
	tests := []struct {
		trigger  Trigger
		amount   ledger.Minor
		currency string
		want     Outcome
	}{
		{PayoutTrigger, 10_001, "GHS", OutcomeRejected},
		{PayoutTrigger, 10_003, "GHS", OutcomeTimeoutThenReconciled},
		{PayoutTrigger, 10_000, "GHS", OutcomeCompleted},
		{PayoutTrigger, 10_050, "GHS", OutcomeCompleted}, // 50 is a collection scenario only
		{PayoutTrigger, 1_501, "XOF", OutcomeRejected},
		{PayoutTrigger, 1_010_000, "USDT", OutcomeRejected},  // 1.010000
		{PayoutTrigger, 1_000_001, "USDT", OutcomeCompleted}, // 1.000001: cents 00
		{CollectionTrigger, 10_050, "GHS", OutcomeDelayedCompletion},
		{CollectionTrigger, 10_051, "GHS", OutcomeFailed},
		{CollectionTrigger, 10_052, "GHS", OutcomeCustomerTimeout},
		{CollectionTrigger, 10_099, "GHS", OutcomeTransientErrorThenReconciled},
		{CollectionTrigger, 10_042, "GHS", OutcomeCompleted},
	}
	for _, tt := range tests {
		if got := tt.trigger.Select(tt.amount, tt.currency); got != tt.want {
			t.Errorf("%s %d %s: %s, want %s", tt.trigger.Operation, tt.amount, tt.currency, got, tt.want)
		}
	}
}

// The catalogue's reference data: currencies have names, countries calling
// codes (which the phone placeholders carry), select fields their options,
// and every network a chain with address rules.
func TestCatalogueReferenceData(t *testing.T) {
	c := DefaultCatalogue()
	for _, country := range c.Countries() {
		if country.CurrencyName == "" || country.DialCode == "" || country.Flag == "" {
			t.Errorf("country %s is incomplete: %+v", country.Code, country)
		}
		for _, m := range country.Methods {
			for _, f := range m.Fields {
				if strings.Contains(f.Placeholder, "{dial}") {
					t.Errorf("%s: field %s placeholder not expanded", m.Code, f.Key)
				}
				if f.Type == "select" && len(f.Options) == 0 {
					t.Errorf("%s: select field %s without options", m.Code, f.Key)
				}
			}
			if m.Type == ledger.MethodMobileMoney {
				f, _ := m.Field("accountNumber")
				if !strings.HasPrefix(f.Placeholder, country.DialCode) {
					t.Errorf("%s: phone placeholder %q lacks the calling code %s", m.Code, f.Placeholder, country.DialCode)
				}
			}
		}
	}
	if got, ok := c.Country("gh"); !ok || got.Code != "GH" {
		t.Errorf("country lookup is not case-insensitive: %+v %v", got, ok)
	}
	if _, ok := c.Country("XX"); ok {
		t.Error("unknown country found")
	}
	for _, m := range c.Networks() {
		ch, ok := c.Chain(m.Chain)
		if !ok || ch.SandboxNetwork == "" || ch.ProductionNetwork == "" {
			t.Errorf("network %s: chain %q not described", m.Code, m.Chain)
		}
		if _, ok := addressRules[m.Chain]; !ok {
			t.Errorf("network %s: no address rules for %s", m.Code, m.Chain)
		}
	}
}

// The suffix of the account number picks the sandbox's answer, and a valid
// number always gets the same name.
func TestSandboxNames(t *testing.T) {
	gh, _ := DefaultCatalogue().Method("gh_mtn")
	tests := []struct {
		number string
		want   Outcome
	}{
		{"233241000000", OutcomeAccountNotFound},
		{"233241000001", OutcomeAccountClosed},
		{"233241000002", OutcomeTimeout},
		{"233241000003", OutcomeValid},
		{"233241234567", OutcomeValid},
	}
	for _, tt := range tests {
		r, err := SandboxNames{}.ResolveName(t.Context(), gh, tt.number)
		if err != nil || r.Outcome != tt.want || (r.AccountName != "") != (tt.want == OutcomeValid) {
			t.Errorf("%s: %+v %v, want %s", tt.number, r, err, tt.want)
		}
	}
	a, _ := SandboxNames{}.ResolveName(t.Context(), gh, "233241234567")
	b, _ := SandboxNames{}.ResolveName(t.Context(), gh, "233241234567")
	if a.AccountName != b.AccountName {
		t.Errorf("names differ: %q, %q", a.AccountName, b.AccountName)
	}
	if _, err := (NoProvider{}).ResolveName(t.Context(), gh, "233241234567"); !errors.Is(err, ErrNoProvider) {
		t.Errorf("NoProvider: %v", err)
	}
}
