package checkout

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html/template"
	"strings"
	"time"

	"payments/http/webassets"
)

//go:embed templates
var templateFiles embed.FS

// Page is one rendering of the checkout page: the view, and what belongs to
// this request.
type Page struct {
	View
	Base      string // the prefix the page was asked under ("/checkout")
	API       string // the link's public endpoints ("/v1/checkout/pl_…")
	Nonce     string // the Content-Security-Policy nonce of the page's style
	Attempt   string // the payment form's idempotency key
	RequestID string
	Form      Form // what a form sent without JavaScript held, to show it again
	// ShowPicker shows the methods over an open session ("choose another
	// method" without JavaScript).
	ShowPicker bool
}

// Form is a payment form as the payer sent it, with what was wrong.
type Form struct {
	Method        string
	MobileNetwork string
	Phone         string
	CryptoNetwork string
	Custom        map[string]string
	Errors        map[string]string // field → message; "form" for the whole form
}

// ErrorPage is the page of a request that has no checkout to show.
type ErrorPage struct {
	Status    int
	Title     string
	Message   string
	RequestID string
	Base      string
	Nonce     string
}

var (
	pageTemplate  = parse("templates/layout.html", "templates/page.html")
	errorTemplate = parse("templates/layout.html", "templates/error.html")
)

func parse(files ...string) *template.Template {
	return webassets.Head(template.Must(template.New("layout.html").Funcs(template.FuncMap{
		"asset":     assetPath,
		"countdown": countdown,
		"datetime":  datetime,
		"step":      step,
		"split":     func(s string) []string { return strings.SplitN(s, "|", 2) },
	}).ParseFS(templateFiles, files...)))
}

// countdown shows seconds as m:ss.
func countdown(seconds int64) string {
	return fmt.Sprintf("%d:%02d", seconds/60, seconds%60)
}

// datetime shows an API timestamp for a person; the page's script shows it
// in the payer's time zone.
func datetime(ts string) string {
	t, err := time.Parse(timeLayout, ts)
	if err != nil {
		return ts
	}
	return t.Format("2 Jan 2006, 15:04 UTC")
}

// step is where a stage stands on the awaiting → confirming → paid steps.
func step(stage string) string {
	switch stage {
	case StageConfirming:
		return "confirming"
	case StageComplete:
		return "paid"
	default:
		return "awaiting"
	}
}

// S is the page's session, empty when it has none.
func (p *Page) S() Session {
	if p.Session == nil {
		return Session{}
	}
	return *p.Session
}

// R is the page's receipt, empty when it has none.
func (p *Page) R() Receipt {
	if p.Receipt == nil {
		return Receipt{}
	}
	return *p.Receipt
}

// Shown is the screen the page shows: the view's, or the methods when the
// payer asked to switch away from an open session.
func (p *Page) Shown() string {
	if p.ShowPicker && p.sessionScreen() {
		return ScreenPick
	}
	return p.Screen
}

func (p *Page) sessionScreen() bool {
	return p.Screen == ScreenMobileMoney || p.Screen == ScreenBankTransfer || p.Screen == ScreenCrypto
}

// Refreshes reports whether the page, without JavaScript, reloads itself to
// follow an open session.
func (p *Page) Refreshes() bool { return p.sessionScreen() && !p.ShowPicker }

// MethodChecked reports whether the method's choice starts checked: the
// one the payer sent, else the first.
func (p *Page) MethodChecked(method string, i int) bool {
	if p.Form.Method != "" {
		return p.Form.Method == method
	}
	return i == 0
}

// PhoneExample is a phone number of the first country whose wallets the
// page offers, for the hint.
func (p *Page) PhoneExample() string {
	for _, g := range p.MobileMoneyNetworks {
		for _, n := range g.Networks {
			if n.DialCode != nil {
				return *n.DialCode + "241234567"
			}
		}
	}
	return "233241234567"
}

// NewNonce returns a fresh Content-Security-Policy nonce.
func NewNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewAttempt returns a fresh attempt key for the payment form sent without
// JavaScript: the payer's own idempotency key, which the page's script
// draws in the browser the same way (16 random bytes in hex) and the page
// draws on its behalf when the script does not run.
func NewAttempt() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Render renders the page.
func (p *Page) Render() ([]byte, error) {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Render renders the error page.
func (e *ErrorPage) Render() ([]byte, error) {
	var b bytes.Buffer
	if err := errorTemplate.Execute(&b, e); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// CSP is the page's Content-Security-Policy: its own scripts, styles and
// requests only, the one style element with the nonce (the merchant's
// colours), images from itself and the logo's origin, forms posted only to
// itself, and no framing.
func (p *Page) CSP() string { return csp(p.Nonce, p.Branding.LogoOrigin) }

// CSP is the error page's Content-Security-Policy.
func (e *ErrorPage) CSP() string { return csp(e.Nonce, "") }

func csp(nonce, imageOrigin string) string {
	img := "'self'"
	if imageOrigin != "" {
		img += " " + imageOrigin
	}
	return "default-src 'none'; script-src 'self'; style-src 'self' 'nonce-" + nonce + "'; img-src " + img +
		"; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}

// Value returns what the payer typed in a custom field.
func (f Form) Value(name string) string { return f.Custom[name] }

// Error returns the message of a field ("" when it is fine).
func (f Form) Error(field string) string { return f.Errors[field] }
