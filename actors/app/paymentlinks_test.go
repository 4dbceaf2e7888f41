package app

import (
	"strings"
	"testing"

	"payments/actors"
	"payments/ledger"
	"payments/ledger/paymentlinks"
)

var (
	bankOnly    = paymentlinks.MethodSet(0).With(paymentlinks.BankTransfer)
	bankAndCoin = bankOnly.With(paymentlinks.Crypto)
	everyMethod = bankAndCoin.With(paymentlinks.MobileMoney)
)

// wantRefusal checks that r is a refusal with code (and, for a validation
// error, on field); "" code wants a result.
func wantRefusal(t *testing.T, r actors.Reply, code ledger.Code, field string) {
	t.Helper()
	switch {
	case r.Err != nil:
		t.Fatalf("transport error %v", r.Err)
	case code == "" && r.Result.Err != nil:
		t.Fatalf("refused: %v", r.Result.Err)
	case code == "":
	case r.Result.Err == nil:
		t.Fatalf("got a result, want %s", code)
	case r.Result.Err.Code != code:
		t.Fatalf("refused %s (%s), want %s", r.Result.Err.Code, r.Result.Err.Message, code)
	case field != "" && (len(r.Result.Err.Fields) != 1 || r.Result.Err.Fields[0].Field != field):
		t.Fatalf("refused on %v, want %s", r.Result.Err.Fields, field)
	}
}

// applied is r's result, which must not be a refusal.
func applied(t *testing.T, r actors.Reply) ledger.Result {
	t.Helper()
	wantRefusal(t, r, "", "")
	return r.Result
}

func linkSpec(amount ledger.Minor, methods paymentlinks.MethodSet) paymentlinks.LinkSpec {
	return paymentlinks.LinkSpec{Email: "ama@example.com", Currency: "GHS", Amount: amount,
		Appearance: paymentlinks.Appearance{Title: "Invoice", Methods: methods}}
}

func TestCreatePaymentLink(t *testing.T) {
	ta := startApp(t, Config{})
	withAssets := linkSpec(25000, bankAndCoin)
	withAssets.Appearance.CryptoAssets, withAssets.Appearance.CryptoAssetsSet = "USDT", true
	assetsNoCrypto := linkSpec(25000, bankOnly)
	assetsNoCrypto.Appearance.CryptoAssets, assetsNoCrypto.Appearance.CryptoAssetsSet = "USDT", true

	l := paymentlinks.LinkOf(applied(t, ta.CreatePaymentLink(ta.caller(), PaymentLinkRequest{CustomerReference: "inv-1", Spec: linkSpec(25000, everyMethod)})))
	if !strings.HasPrefix(l.ID, "pl_") || l.OrgID != ta.org || l.Status != paymentlinks.LinkActive {
		t.Fatalf("created %+v", l)
	}
	for _, tc := range []struct {
		name     string
		in       PaymentLinkRequest
		code     ledger.Code
		field    string
		replayed bool
	}{
		{name: "the same request again is the same link", in: PaymentLinkRequest{CustomerReference: "inv-1", Spec: linkSpec(25000, everyMethod)}, replayed: true},
		{name: "another request under the reference", in: PaymentLinkRequest{CustomerReference: "inv-1", Spec: linkSpec(26000, everyMethod)}, code: ledger.CodeDuplicate},
		{name: "stablecoins where crypto is accepted", in: PaymentLinkRequest{Spec: withAssets}},
		{name: "stablecoins where no crypto is accepted", in: PaymentLinkRequest{Spec: assetsNoCrypto}, code: ledger.CodeValidation, field: "allowedCryptoAssets"},
		{name: "the ledger's own checks", in: PaymentLinkRequest{Spec: linkSpec(0, bankOnly)}, code: ledger.CodeValidation, field: "amount"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ta.CreatePaymentLink(ta.caller(), tc.in)
			wantRefusal(t, r, tc.code, tc.field)
			if tc.code != "" {
				return
			}
			if r.Result.Replayed != tc.replayed {
				t.Fatalf("replayed %v, want %v", r.Result.Replayed, tc.replayed)
			}
			if tc.replayed && paymentlinks.LinkOf(r.Result).ID != l.ID {
				t.Fatalf("replayed %s, want %s", paymentlinks.LinkOf(r.Result).ID, l.ID)
			}
		})
	}
}

func TestCreatePageLink(t *testing.T) {
	ta := startApp(t, Config{})
	page := func(amount ledger.Minor) string {
		return paymentlinks.PageOf(applied(t, ta.CreatePaymentPage(ta.caller(), PaymentPageRequest{Currency: "GHS", Amount: amount,
			Appearance: paymentlinks.Appearance{Title: "Donations", Methods: bankOnly, Metadata: `{"campaign":"2026"}`}}))).ID
	}
	open, fixed := page(0), page(5000)
	for _, tc := range []struct {
		name   string
		in     PageLinkRequest
		code   ledger.Code
		field  string
		amount ledger.Minor
	}{
		{name: "the payer's amount, in the page's currency", in: PageLinkRequest{PageID: open, Email: "kwame@example.com", Amount: ptr("50")}, amount: 5000},
		{name: "the page's fixed amount", in: PageLinkRequest{PageID: fixed, Email: "kwame@example.com"}, amount: 5000},
		{name: "an open amount left out", in: PageLinkRequest{PageID: open, Email: "kwame@example.com"}, code: ledger.CodeValidation, field: "amount"},
		{name: "more decimals than the page's currency has", in: PageLinkRequest{PageID: open, Email: "kwame@example.com", Amount: ptr("1.001")}, code: ledger.CodeValidation, field: "amount"},
		{name: "another amount than the page's fixed one", in: PageLinkRequest{PageID: fixed, Email: "kwame@example.com", Amount: ptr("51")}, code: ledger.CodeValidation, field: "amount"},
		{name: "no such page", in: PageLinkRequest{PageID: "pp_doesnotexist", Email: "kwame@example.com", Amount: ptr("50")}, code: ledger.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ta.CreatePageLink(ta.caller(), tc.in)
			wantRefusal(t, r, tc.code, tc.field)
			if tc.code != "" {
				return
			}
			l := paymentlinks.LinkOf(r.Result)
			if l.ParentID != tc.in.PageID || l.Spec.Amount != tc.amount || l.Spec.Currency != "GHS" || l.Current.Title != "Donations" {
				t.Fatalf("created %+v", l)
			}
		})
	}
}

// A page's accepted stablecoins follow its methods as an update leaves
// them.
func TestUpdatePaymentPageCryptoAssets(t *testing.T) {
	ta := startApp(t, Config{})
	id := paymentlinks.PageOf(applied(t, ta.CreatePaymentPage(ta.caller(), PaymentPageRequest{Currency: "GHS",
		Appearance: paymentlinks.Appearance{Title: "Donations", Methods: bankAndCoin, CryptoAssets: "USDC", CryptoAssetsSet: true}}))).ID
	for _, tc := range []struct {
		name       string
		in         CheckoutUpdate
		code       ledger.Code
		methods    paymentlinks.MethodSet
		assets     string
		restricted bool
	}{
		{name: "other stablecoins", in: CheckoutUpdate{ID: id, Set: paymentlinks.AppearanceCryptoAssets, Appearance: paymentlinks.Appearance{CryptoAssets: "USDC,USDT", CryptoAssetsSet: true}},
			methods: bankAndCoin, assets: "USDC,USDT", restricted: true},
		{name: "stablecoins with methods that accept no crypto", in: CheckoutUpdate{ID: id, Set: paymentlinks.AppearanceMethods | paymentlinks.AppearanceCryptoAssets,
			Appearance: paymentlinks.Appearance{Methods: bankOnly, CryptoAssets: "USDT", CryptoAssetsSet: true}}, code: ledger.CodeValidation},
		{name: "no more crypto: the stablecoins are forgotten", in: CheckoutUpdate{ID: id, Set: paymentlinks.AppearanceMethods, Appearance: paymentlinks.Appearance{Methods: bankOnly}},
			methods: bankOnly},
		{name: "stablecoins on a page without crypto", in: CheckoutUpdate{ID: id, Set: paymentlinks.AppearanceCryptoAssets, Appearance: paymentlinks.Appearance{CryptoAssets: "USDC", CryptoAssetsSet: true}},
			code: ledger.CodeValidation},
		{name: "crypto again, any stablecoin", in: CheckoutUpdate{ID: id, Set: paymentlinks.AppearanceMethods, Appearance: paymentlinks.Appearance{Methods: bankAndCoin}},
			methods: bankAndCoin},
		{name: "no such page", in: CheckoutUpdate{ID: "pp_doesnotexist", Set: paymentlinks.AppearanceMethods, Appearance: paymentlinks.Appearance{Methods: bankOnly}}, code: ledger.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ta.UpdatePaymentPage(ta.caller(), tc.in)
			field := ""
			if tc.code == ledger.CodeValidation {
				field = "allowedCryptoAssets"
			}
			wantRefusal(t, r, tc.code, field)
			if tc.code != "" {
				return
			}
			got := paymentlinks.PageOf(r.Result).Current
			if got.Methods != tc.methods || got.CryptoAssets != tc.assets || got.CryptoAssetsSet != tc.restricted {
				t.Fatalf("page accepts %v, stablecoins %q (restricted %v); want %v, %q (%v)",
					got.Methods.Methods(), got.CryptoAssets, got.CryptoAssetsSet, tc.methods.Methods(), tc.assets, tc.restricted)
			}
		})
	}
}

func TestUpdatePaymentLink(t *testing.T) {
	ta := startApp(t, Config{})
	id := paymentlinks.LinkOf(applied(t, ta.CreatePaymentLink(ta.caller(), PaymentLinkRequest{Spec: linkSpec(1000, bankOnly)}))).ID
	for _, tc := range []struct {
		name   string
		in     CheckoutUpdate
		code   ledger.Code
		status paymentlinks.LinkStatus
		url    string
	}{
		{name: "a redirect", in: CheckoutUpdate{ID: id, Set: paymentlinks.AppearanceRedirectURL, Appearance: paymentlinks.Appearance{RedirectURL: "https://zouk.example/thanks"}},
			status: paymentlinks.LinkActive, url: "https://zouk.example/thanks"},
		{name: "closed", in: CheckoutUpdate{ID: id, Close: true}, status: paymentlinks.LinkClosed, url: "https://zouk.example/thanks"},
		{name: "a closed link changes no more", in: CheckoutUpdate{ID: id, Set: paymentlinks.AppearanceRedirectURL}, code: ledger.CodeBadRequest},
		{name: "no such link", in: CheckoutUpdate{ID: "pl_doesnotexist", Close: true}, code: ledger.CodeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ta.UpdatePaymentLink(ta.caller(), tc.in)
			wantRefusal(t, r, tc.code, "")
			if tc.code != "" {
				return
			}
			if l := paymentlinks.LinkOf(r.Result); l.Status != tc.status || l.Current.RedirectURL != tc.url {
				t.Fatalf("link %v, redirect %q; want %v, %q", l.Status, l.Current.RedirectURL, tc.status, tc.url)
			}
		})
	}
}
