package checkout

import (
	"encoding/json"
	"encoding/xml"
	"regexp"
	"slices"
	"strings"
	"testing"

	"payments/ledger/paymentlinks"
	"payments/rails"
)

func TestParseBranding(t *testing.T) {
	for _, tc := range []struct {
		name, raw          string
		accent, logo, orig string
		business           string
	}{
		{"none", ``, DefaultAccent, "", "", ""},
		{"short colour", `{"accentColor":"#FA0"}`, "#ffaa00", "", "", ""},
		{"long colour", `{"accentColor":"#6642D1","businessName":" Zouk "}`, "#6642d1", "", "", "Zouk"},
		{"a name is not a colour", `{"accentColor":"red"}`, DefaultAccent, "", "", ""},
		{"css injection", `{"accentColor":"#fff;}</style><script>x()</script>"}`, DefaultAccent, "", "", ""},
		{"five digits", `{"accentColor":"#12345"}`, DefaultAccent, "", "", ""},
		{"not hex", `{"accentColor":"#gggggg"}`, DefaultAccent, "", "", ""},
		{"https logo", `{"logoUrl":"https://Zouk.example:8443/logo.png"}`, DefaultAccent, "https://Zouk.example:8443/logo.png", "https://zouk.example:8443", ""},
		{"quotes are escaped", `{"logoUrl":"https://zouk.example/a\"b"}`, DefaultAccent, "https://zouk.example/a%22b", "https://zouk.example", ""},
		{"javascript logo", `{"logoUrl":"javascript:alert(1)"}`, DefaultAccent, "", "", ""},
		{"data logo", `{"logoUrl":"data:image/svg+xml,<svg onload=x()>"}`, DefaultAccent, "", "", ""},
		{"user info", `{"logoUrl":"https://me:pw@zouk.example/l.png"}`, DefaultAccent, "", "", ""},
		{"csp injection in host", `{"logoUrl":"https://zouk.example;script-src*/l.png"}`, DefaultAccent, "", "", ""},
		{"not json", `{`, DefaultAccent, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := ParseBranding(tc.raw)
			if b.AccentColor != tc.accent || deref(b.LogoURL) != tc.logo || b.LogoOrigin != tc.orig || deref(b.BusinessName) != tc.business {
				t.Fatalf("got accent %s logo %q origin %q name %q", b.AccentColor, deref(b.LogoURL), b.LogoOrigin, deref(b.BusinessName))
			}
		})
	}
}

// Whatever the accent, the text on it and the accent as text on white
// reach WCAG AA's 4.5:1.
func TestBrandingContrast(t *testing.T) {
	for _, accent := range []string{"#000000", "#ffffff", "#777777", "#f5c400", "#ffff00", "#00ff00", "#6642d1", "#1e56b3", "#ff0000", "#0000ff", "#00ffff"} {
		b := ParseBranding(`{"accentColor":"` + accent + `"}`)
		a, _ := parseColor(b.AccentColor)
		on, _ := parseColor(b.OnAccent)
		text, _ := parseColor(b.AccentText)
		if c := contrast(a, on); c < contrastMin {
			t.Errorf("%s: text %s on it has contrast %.2f", accent, b.OnAccent, c)
		}
		if c := contrast(text, white); c < contrastMin {
			t.Errorf("%s: as text %s on white has contrast %.2f", accent, b.AccentText, c)
		}
		if !regexp.MustCompile(`^:root\{--accent:#[0-9a-f]{6};--on-accent:#[0-9a-f]{6};--accent-text:#[0-9a-f]{6}\}$`).MatchString(string(b.Style())) {
			t.Errorf("%s: style %s", accent, b.Style())
		}
	}
}

func TestLabel(t *testing.T) {
	for in, want := range map[string]string{
		"orderNumber": "Order number", "order_number": "Order number", "email": "Email",
		"ID": "ID", "customerEmail2": "Customer email2", "vat-id": "Vat id",
	} {
		if got := label(in); got != want {
			t.Errorf("label(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCheckFieldValues(t *testing.T) {
	fields := ParseCustomFields(`[{"name":"order","type":"text","required":true},{"name":"mail","type":"email","required":false},` +
		`{"name":"phone","type":"phone","required":false},{"name":"site","type":"url","required":false}]`)
	for _, tc := range []struct {
		name   string
		values map[string]string
		want   []string
	}{
		{"required present", map[string]string{"order": "A-1"}, nil},
		{"required missing", map[string]string{}, []string{"customFields.order is required"}},
		{"required blank", map[string]string{"order": "  "}, []string{"customFields.order is required"}},
		{"typed values", map[string]string{"order": "A", "mail": "ama@example.com", "phone": "+233 24-123", "site": "https://a.example"}, nil},
		{"bad email", map[string]string{"order": "A", "mail": "ama"}, []string{"customFields.mail must be an email address such as ama@example.com"}},
		{"bad phone", map[string]string{"order": "A", "phone": "call me"}, []string{"customFields.phone must be a phone number"}},
		{"bad url", map[string]string{"order": "A", "site": "javascript:alert(1)"}, []string{"customFields.site must be an http or https address"}},
		{"too long", map[string]string{"order": strings.Repeat("a", 501)}, []string{"customFields.order must be at most 500 characters of text"}},
		{"control characters", map[string]string{"order": "a\x00b"}, []string{"customFields.order must not contain control characters"}},
		{"unknown, sorted", map[string]string{"order": "A", "z": "1", "b": "2"}, []string{"customFields.b is not a field of this payment link", "customFields.z is not a field of this payment link"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range CheckFieldValues(fields, tc.values) {
				got = append(got, p.Field+" "+p.Message)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func testLink(status paymentlinks.LinkStatus) paymentlinks.Link {
	return paymentlinks.Link{
		ID: "pl_1", OrgID: "org_1", Status: status,
		Spec: paymentlinks.LinkSpec{Currency: "GHS", Amount: 25000},
		Current: paymentlinks.Appearance{Title: "Invoice", Methods: paymentlinks.MethodSet(0).With(paymentlinks.MobileMoney).
			With(paymentlinks.BankTransfer).With(paymentlinks.Crypto), CryptoAssets: "USDT", CryptoAssetsSet: true,
			RedirectURL: "https://zouk.example/thanks", CustomFields: `[{"name":"orderNumber","type":"text","required":true}]`,
			Branding: `{"businessName":"Zouk","logoUrl":"https://zouk.example/l.png"}`},
	}
}

func testInput(l paymentlinks.Link, sessions ...paymentlinks.Session) Input {
	return Input{Link: l, Sessions: sessions, Now: 1_000_000, Base: "/checkout", Catalogue: rails.DefaultCatalogue(), TestMode: true}
}

func TestBuildScreens(t *testing.T) {
	open := func(m paymentlinks.Method, st paymentlinks.SessionStatus) paymentlinks.Session {
		return paymentlinks.Session{ID: "cs_1", LinkID: "pl_1", Method: m, Status: st, OriginCurrency: "GHS", OriginAmount: 25000,
			DestCurrency: "GHS", DestAmount: 25000, ExpiresAt: 1_000_000 + 90_500, DepositAccount: "9900105903", DepositBank: "Bank",
			PayerNumber: "233241234567", MethodCode: "gh_mtn"}
	}
	partial := open(paymentlinks.BankTransfer, paymentlinks.SessionAwaitingTransfer)
	partial.OriginReceived = 10000
	failed := open(paymentlinks.MobileMoney, paymentlinks.SessionFailed)
	failed.StatusMessage = "The payer declined the prompt."
	paidLink := testLink(paymentlinks.LinkPaid)
	paidLink.TotalReceived, paidLink.PaidAt = 26000, 1_000_000
	for _, tc := range []struct {
		name           string
		in             Input
		screen, stage  string
		notice         string
		confirmingSess bool
	}{
		{"fresh", testInput(testLink(paymentlinks.LinkActive)), ScreenPick, "", "", false},
		{"mobile money", testInput(testLink(paymentlinks.LinkActive), open(paymentlinks.MobileMoney, paymentlinks.SessionProcessing)), ScreenMobileMoney, StageAwaitingApproval, "", false},
		{"bank", testInput(testLink(paymentlinks.LinkActive), open(paymentlinks.BankTransfer, paymentlinks.SessionAwaitingTransfer)), ScreenBankTransfer, StageAwaitingPayment, "", false},
		{"confirming", testInput(testLink(paymentlinks.LinkActive), open(paymentlinks.Crypto, paymentlinks.SessionAwaitingPayment)), ScreenCrypto, StageConfirming, "", true},
		{"partial", testInput(testLink(paymentlinks.LinkActive), partial), ScreenBankTransfer, StagePartiallyPaid, "", false},
		{"failed", testInput(testLink(paymentlinks.LinkActive), failed), ScreenPick, StageFailed, "Your mobile money payment did not go through. The payer declined the prompt. Choose a method to try again.", false},
		{"expired session", testInput(testLink(paymentlinks.LinkActive), open(paymentlinks.Crypto, paymentlinks.SessionExpired)), ScreenPick, StageExpired, "Your stablecoins payment timed out before it arrived. Choose a method to try again.", false},
		{"paid", testInput(paidLink, open(paymentlinks.BankTransfer, paymentlinks.SessionComplete)), ScreenPaid, StageComplete, "", false},
		{"expired link", testInput(testLink(paymentlinks.LinkExpired)), ScreenExpired, "", "", false},
		{"closed link", testInput(testLink(paymentlinks.LinkClosed)), ScreenClosed, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.confirmingSess {
				tc.in.Confirming = func(id string) bool { return id == "cs_1" }
			}
			v := Build(tc.in)
			stage := ""
			if v.Session != nil {
				stage = v.Session.Stage
			}
			if v.Screen != tc.screen || stage != tc.stage || deref(v.Notice) != tc.notice {
				t.Fatalf("screen %s stage %s notice %q", v.Screen, stage, deref(v.Notice))
			}
		})
	}
	v := Build(testInput(paidLink, open(paymentlinks.BankTransfer, paymentlinks.SessionComplete)))
	if r := v.Receipt; r == nil || r.Amount != "260.00" || r.Method != "Bank transfer" || r.Reference != "cs_1" || deref(r.Overpayment) != "10.00" {
		t.Fatalf("receipt %+v", v.Receipt)
	}
	v = Build(testInput(testLink(paymentlinks.LinkActive), open(paymentlinks.MobileMoney, paymentlinks.SessionProcessing)))
	if s := v.Session; deref(s.PhoneEnding) != "4567" || deref(s.Network) != "MTN Mobile Money" || s.ExpiresInSeconds != 90 {
		t.Fatalf("mobile money session %+v", s)
	}
	if len(v.CryptoNetworks) != 1 || v.CryptoNetworks[0].Label != "USDT" {
		t.Fatalf("crypto networks beyond the accepted asset: %+v", v.CryptoNetworks)
	}
}

// What the view keeps from the link: never the customer's email, the
// metadata or the customer reference.
func TestViewHidesMerchantData(t *testing.T) {
	l := testLink(paymentlinks.LinkActive)
	l.Spec.Email, l.CustomerReference, l.Current.Metadata = "ama@example.com", "inv-secret-1042", `{"internal":"secret-note"}`
	b, err := json.Marshal(Build(testInput(l)))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"ama@example.com", "inv-secret-1042", "secret-note", "org_1"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the view carries %q", secret)
		}
	}
}

// Every element the script fills (data-bind and friends) names a field the
// JSON view has, so the page and its script show the same things.
func TestTemplateBindsJSONFields(t *testing.T) {
	l := testLink(paymentlinks.LinkPaid)
	l.PaidAt = 1
	sess := paymentlinks.Session{ID: "cs_1", LinkID: "pl_1", Method: paymentlinks.Crypto, Status: paymentlinks.SessionComplete,
		OriginCurrency: "USDT", DestCurrency: "GHS", DepositAccount: "T1"}
	v := Build(testInput(l, sess))
	p := &Page{View: v, Base: "/checkout", API: "/v1/checkout/pl_1", Nonce: "n", Attempt: "a"}
	html, err := p.Render()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(v)
	var doc map[string]any
	json.Unmarshal(raw, &doc)
	binds := regexp.MustCompile(`data-(?:bind|bind-src|bind-href|show-if|copy)="([^"]+)"`).FindAllStringSubmatch(string(html), -1)
	if len(binds) < 20 {
		t.Fatalf("only %d bound elements", len(binds))
	}
	for _, m := range binds {
		var at any = doc
		for _, part := range strings.Split(m[1], ".") {
			obj, ok := at.(map[string]any)
			if !ok {
				t.Fatalf("%s: %v is not an object", m[1], at)
			}
			if at, ok = obj[part]; !ok {
				t.Fatalf("the template binds %s, which the JSON view lacks", m[1])
			}
		}
	}
}

// The templates escape every text of the merchant and the payer.
func TestRenderEscapes(t *testing.T) {
	l := testLink(paymentlinks.LinkActive)
	l.Current.Title = `</title><script>alert(1)</script>`
	l.Current.Description = `"><img src=x onerror=alert(2)>`
	l.Current.Branding = `{"businessName":"<b onmouseover=alert(3)>Zouk</b>","accentColor":"#fff;}</style><script>alert(4)</script>"}`
	l.Current.CustomFields = `[{"name":"x\"><script>alert(5)</script>","type":"text\" onfocus=\"alert(6)","required":true}]`
	p := &Page{View: Build(testInput(l)), Base: "/checkout", API: "/v1/checkout/pl_1", Nonce: "n", Attempt: "a",
		Form: Form{Custom: map[string]string{`x"><script>alert(5)</script>`: `"><script>alert(7)</script>`}}}
	html, err := p.Render()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script>alert", "<img src=x", "<b onmouseover", `onfocus="alert`, "</style><script>"} {
		if strings.Contains(string(html), bad) {
			t.Errorf("rendered page contains %s", bad)
		}
	}
	if n := strings.Count(string(html), "<script"); n != 2 {
		t.Errorf("%d script elements, want the page's and its JSON view", n)
	}
}

func TestErrorPage(t *testing.T) {
	e := &ErrorPage{Status: 404, Title: "Payment link not found", Message: "<b>", RequestID: "req_1", Base: "/checkout", Nonce: "n"}
	html, err := e.Render()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "Payment link not found") || strings.Contains(string(html), "<b>") || !strings.Contains(string(html), "req_1") {
		t.Fatalf("error page:\n%s", html)
	}
	if !strings.Contains(e.CSP(), "'nonce-n'") || !strings.Contains(e.CSP(), "frame-ancestors 'none'") {
		t.Fatalf("CSP %s", e.CSP())
	}
}

func TestCSP(t *testing.T) {
	p := &Page{View: Build(testInput(testLink(paymentlinks.LinkActive))), Nonce: "abc"}
	want := "default-src 'none'; script-src 'self'; style-src 'self' 'nonce-abc'; img-src 'self' https://zouk.example; " +
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
	if got := p.CSP(); got != want {
		t.Fatalf("CSP\n%s\nwant\n%s", got, want)
	}
}

func TestQRSVG(t *testing.T) {
	svg, err := QRSVG("TFnFTXrqPjrfR8b3zNQAQFiEN2qDWeYxNP")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		ViewBox string `xml:"viewBox,attr"`
		Path    struct {
			D string `xml:"d,attr"`
		} `xml:"path"`
	}
	if err := xml.Unmarshal(svg, &doc); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	// Version 3 (29 modules) for 34 characters at medium correction, and
	// a quiet zone of 4 modules each side.
	if doc.ViewBox != "0 0 37 37" || !strings.HasPrefix(doc.Path.D, "M") {
		t.Fatalf("viewBox %q, path %.20q", doc.ViewBox, doc.Path.D)
	}
}

func TestAssets(t *testing.T) {
	for file, ct := range map[string]string{"checkout.css": "text/css; charset=utf-8", "checkout.js": "text/javascript; charset=utf-8", "favicon.svg": "image/svg+xml"} {
		path := assetPath("/checkout", file)
		name := strings.TrimPrefix(path, "/checkout/assets/")
		if !regexp.MustCompile(`^[a-z]+\.[0-9a-f]{8}\.[a-z]+$`).MatchString(name) {
			t.Errorf("%s is served as %s, without a digest", file, name)
		}
		a, ok := Assets.Lookup(name)
		if !ok || a.ContentType != ct || len(a.Body) == 0 {
			t.Errorf("%s: %v %q", name, ok, a.ContentType)
		}
	}
	if _, ok := Assets.Lookup("checkout.css"); ok {
		t.Error("an asset is served under its plain name, which a year of caching would pin")
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
