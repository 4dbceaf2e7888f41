package checkout

import (
	"encoding/json"
	"strings"
	"time"
	"unicode"

	"payments/ledger"
	"payments/ledger/paymentlinks"
	"payments/rails"
)

// Screens: what the page shows of a link, one at a time.
const (
	ScreenPick         = "pick"          // choose a method (and the notice of an attempt that ended)
	ScreenMobileMoney  = "mobile_money"  // approve the prompt on the phone
	ScreenBankTransfer = "bank_transfer" // the account to transfer to
	ScreenCrypto       = "crypto"        // the address to send to
	ScreenPaid         = "paid"          // the receipt
	ScreenExpired      = "expired"       // the link expired
	ScreenClosed       = "closed"        // the merchant closed the link
)

// Stages of a session as the page shows them.
const (
	StageAwaitingApproval = "awaiting_approval" // mobile money: the prompt is on the payer's phone
	StageAwaitingPayment  = "awaiting_payment"  // bank transfer, stablecoins: nothing received yet
	StageConfirming       = "confirming"        // a deposit is on its way and not yet credited
	StagePartiallyPaid    = "partially_paid"    // less than asked has arrived; the rest is still owed
	StageComplete         = "complete"
	StageFailed           = "failed"
	StageExpired          = "expired"
)

// PooledAccountName holds the pooled account bank-transfer sessions are
// paid into; the API's session instructions name it too.
const PooledAccountName = "Payments Checkout Collections"

const timeLayout = "2006-01-02T15:04:05.000Z"

// View is what the hosted checkout shows of one payment link, and all the
// public endpoints tell of it: the page renders it, the endpoints send it
// as JSON. It holds nothing the page does not show: no email, metadata,
// customer reference, balance or organization.
type View struct {
	PaymentLinkID     string   `json:"paymentLinkId"`
	Screen            string   `json:"screen"`
	Status            string   `json:"status"`
	Title             string   `json:"title"`
	Description       *string  `json:"description"`
	Amount            string   `json:"amount"`
	Currency          string   `json:"currency"`
	TotalReceived     string   `json:"totalReceived"`
	Remaining         string   `json:"remaining"`
	OverpaymentAmount *string  `json:"overpaymentAmount"`
	Branding          Branding `json:"branding"`
	// Methods are the allowed methods the payer can use here: mobile
	// money only where a network of the link's currency takes the amount,
	// stablecoins only where an accepted asset has a network.
	Methods             []Method       `json:"allowedMethods"`
	MobileMoneyNetworks []NetworkGroup `json:"mobileMoneyNetworks"` // by country
	CryptoNetworks      []NetworkGroup `json:"cryptoNetworks"`      // by asset
	CustomFields        []CustomField  `json:"customFields"`
	RedirectURL         *string        `json:"redirectUrl"` // http or https only
	ExpiresAt           *string        `json:"expiresAt"`
	PaidAt              *string        `json:"paidAt"`
	TestMode            bool           `json:"testMode"`
	// TestOutcome says, on the sandbox, what the simulated mobile money
	// rail does with this amount (its cents pick the outcome).
	TestOutcome *string `json:"testOutcome"`
	// Notice says why the payer's last attempt ended, when it did.
	Notice  *string  `json:"notice"`
	Session *Session `json:"session"` // the latest attempt, or the one that paid
	Receipt *Receipt `json:"receipt"` // once paid
}

// Method is a way to pay the page offers.
type Method struct {
	Method string `json:"method"` // mobile_money, bank_transfer, crypto
	Label  string `json:"label"`
}

// NetworkGroup is a group of networks: a country's mobile money wallets,
// or an asset's chains.
type NetworkGroup struct {
	Label    string    `json:"label"`
	Networks []Network `json:"networks"`
}

// Network is a mobile money wallet or a stablecoin network.
type Network struct {
	Code     string  `json:"code"`
	Name     string  `json:"name"`
	DialCode *string `json:"dialCode,omitempty"` // mobile money: the country's calling code
}

// CustomField is an input the merchant asks the payer for.
type CustomField struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Label    string `json:"label"`     // the name in words
	Input    string `json:"inputType"` // the HTML input type
}

// Session is one attempt to pay, as the payer sees it.
type Session struct {
	ID             string  `json:"id"`
	Method         string  `json:"method"`
	MethodLabel    string  `json:"methodLabel"`
	Status         string  `json:"status"` // the ledger's
	Stage          string  `json:"stage"`
	StatusMessage  *string `json:"statusMessage"`
	Network        *string `json:"network"` // the wallet or stablecoin network
	Asset          *string `json:"asset"`
	Chain          *string `json:"chain"`
	Amount         string  `json:"amount"` // still to send, in Currency
	Currency       string  `json:"currency"`
	AmountReceived string  `json:"amountReceived"`
	PhoneEnding    *string `json:"phoneEnding"` // mobile money: the last digits of the payer's number
	Bank           *string `json:"bank"`
	AccountNumber  *string `json:"accountNumber"`
	AccountName    *string `json:"accountName"`
	Reference      *string `json:"reference"`
	Address        *string `json:"address"`
	Tag            *string `json:"tag"`
	QRURL          *string `json:"qrUrl"`
	ExpiresAt      string  `json:"expiresAt"`
	// ExpiresInSeconds counts on the organization's clock (which the
	// sandbox can advance), so the page counts down from it, not from
	// ExpiresAt and its own clock.
	ExpiresInSeconds int64 `json:"expiresInSeconds"`
	// Simulations are the deposits the sandbox page offers to simulate.
	Simulations []Simulation `json:"simulations"`
}

// Simulation is a test-mode deposit into the session.
type Simulation struct {
	Label  string `json:"label"`
	Amount string `json:"amount"` // in the session's currency
}

// Receipt is what the payer keeps of a paid link.
type Receipt struct {
	Amount      string  `json:"amount"`
	Currency    string  `json:"currency"`
	Method      string  `json:"method"`
	PaidAt      string  `json:"paidAt"`
	Reference   string  `json:"reference"`
	Overpayment *string `json:"overpayment"`
}

// Input is what a view is built from.
type Input struct {
	Link     paymentlinks.Link
	Sessions []paymentlinks.Session // newest first
	Now      int64                  // unix ms on the link's organization's clock
	// Base is where the checkout's pages are served ("/checkout"); QR
	// code URLs are under it.
	Base      string
	Catalogue *rails.Catalogue
	TestMode  bool
	// Confirming reports whether a simulated deposit into a session is on
	// its way (sandbox); nil: none is.
	Confirming func(sessionID string) bool
}

var methodLabels = map[paymentlinks.Method]string{
	paymentlinks.MobileMoney:  "Mobile money",
	paymentlinks.BankTransfer: "Bank transfer",
	paymentlinks.Crypto:       "Stablecoins",
}

// Build makes the view of a link.
func Build(in Input) View {
	l := in.Link
	cur := currency(l.Spec.Currency)
	v := View{
		PaymentLinkID:  l.ID,
		Status:         l.Status.String(),
		Title:          l.Current.Title,
		Description:    optional(l.Current.Description),
		Amount:         ledger.FormatMinor(l.Spec.Amount, cur),
		Currency:       cur.Code,
		TotalReceived:  ledger.FormatMinor(l.TotalReceived, cur),
		Remaining:      ledger.FormatMinor(l.Remaining(), cur),
		Branding:       ParseBranding(l.Current.Branding),
		CustomFields:   ParseCustomFields(l.Current.CustomFields),
		RedirectURL:    redirectURL(l.Current.RedirectURL),
		ExpiresAt:      optionalTime(l.Current.ExpiresAt),
		PaidAt:         optionalTime(l.PaidAt),
		TestMode:       in.TestMode,
		Methods:        []Method{},
		CryptoNetworks: []NetworkGroup{},
	}
	if over := l.Overpayment(); over > 0 {
		v.OverpaymentAmount = optional(ledger.FormatMinor(over, cur))
	}
	v.MobileMoneyNetworks = mobileNetworks(in.Catalogue, cur.Code, l.Remaining())
	v.CryptoNetworks = cryptoNetworks(in.Catalogue, l.Current)
	for _, m := range l.Current.Methods.Methods() {
		if (m == paymentlinks.MobileMoney && len(v.MobileMoneyNetworks) == 0) || (m == paymentlinks.Crypto && len(v.CryptoNetworks) == 0) {
			continue
		}
		v.Methods = append(v.Methods, Method{m.String(), methodLabels[m]})
	}
	if in.TestMode && l.Current.Methods.Has(paymentlinks.MobileMoney) {
		v.TestOutcome = optional(testOutcome(rails.CollectionTrigger.Select(l.Remaining(), cur.Code)))
	}

	switch l.Status {
	case paymentlinks.LinkPaid:
		v.Screen = ScreenPaid
		for i := range in.Sessions {
			if in.Sessions[i].Status == paymentlinks.SessionComplete {
				s := BuildSession(in, &in.Sessions[i])
				v.Session = &s
				break
			}
		}
		v.Receipt = &Receipt{Amount: v.TotalReceived, Currency: cur.Code, Overpayment: v.OverpaymentAmount}
		if v.PaidAt != nil {
			v.Receipt.PaidAt = *v.PaidAt
		}
		if v.Session != nil {
			v.Receipt.Method, v.Receipt.Reference = v.Session.MethodLabel, v.Session.ID
		}
		return v
	case paymentlinks.LinkExpired:
		v.Screen = ScreenExpired
		return v
	case paymentlinks.LinkClosed:
		v.Screen = ScreenClosed
		return v
	}
	v.Screen = ScreenPick
	if len(in.Sessions) == 0 {
		return v
	}
	s := BuildSession(in, &in.Sessions[0])
	v.Session = &s
	if !in.Sessions[0].Status.Terminal() {
		v.Screen = s.Method
		return v
	}
	v.Notice = optional(notice(&s))
	return v
}

// BuildSession makes the view of one of the link's sessions.
func BuildSession(in Input, c *paymentlinks.Session) Session {
	cur := currency(c.OriginCurrency)
	owed := max(0, c.OriginAmount-c.OriginReceived)
	s := Session{
		ID:               c.ID,
		Method:           c.Method.String(),
		MethodLabel:      methodLabels[c.Method],
		Status:           c.Status.String(),
		StatusMessage:    optional(c.StatusMessage),
		Amount:           ledger.FormatMinor(owed, cur),
		Currency:         cur.Code,
		AmountReceived:   ledger.FormatMinor(c.OriginReceived, cur),
		ExpiresAt:        time.UnixMilli(c.ExpiresAt).UTC().Format(timeLayout),
		ExpiresInSeconds: max(0, (c.ExpiresAt-in.Now)/1000),
		Simulations:      []Simulation{},
	}
	if m, ok := in.Catalogue.Method(c.MethodCode); ok {
		s.Network = &m.Name
	}
	switch c.Method {
	case paymentlinks.MobileMoney:
		if n := len(c.PayerNumber); n >= 4 {
			s.PhoneEnding = optional(c.PayerNumber[n-4:])
		}
	case paymentlinks.BankTransfer:
		s.Bank, s.AccountNumber, s.AccountName, s.Reference = optional(c.DepositBank), optional(c.DepositAccount), optional(PooledAccountName), optional(c.ID)
	case paymentlinks.Crypto:
		s.Asset, s.Address = optional(c.OriginCurrency), optional(c.DepositAccount)
		s.Chain = optional(rails.ChainName(c.Chain))
		if c.DepositAccount != "" {
			s.QRURL = optional(in.Base + "/" + c.LinkID + "/sessions/" + c.ID + "/qr.svg")
		}
	}
	switch {
	case c.Status == paymentlinks.SessionComplete:
		s.Stage = StageComplete
	case c.Status == paymentlinks.SessionFailed:
		s.Stage = StageFailed
	case c.Status == paymentlinks.SessionExpired:
		s.Stage = StageExpired
	case c.Method == paymentlinks.MobileMoney:
		s.Stage = StageAwaitingApproval
	case in.Confirming != nil && in.Confirming(c.ID):
		s.Stage = StageConfirming
	case c.OriginReceived > 0:
		s.Stage = StagePartiallyPaid
	default:
		s.Stage = StageAwaitingPayment
	}
	if in.TestMode && c.Method != paymentlinks.MobileMoney && !c.Status.Terminal() && owed > 0 {
		s.Simulations = append(s.Simulations, Simulation{"Pay in full", ledger.FormatMinor(owed, cur)})
		if half := owed / 2; half > 0 {
			s.Simulations = append(s.Simulations, Simulation{"Pay half", ledger.FormatMinor(half, cur)})
		}
		s.Simulations = append(s.Simulations, Simulation{"Pay 10% too much", ledger.FormatMinor(owed+max(1, owed/10), cur)})
	}
	return s
}

// notice tells the payer why an attempt ended.
func notice(s *Session) string {
	switch s.Stage {
	case StageExpired:
		return "Your " + strings.ToLower(s.MethodLabel) + " payment timed out before it arrived. Choose a method to try again."
	case StageFailed:
		msg := "Your " + strings.ToLower(s.MethodLabel) + " payment did not go through. "
		if s.StatusMessage != nil {
			msg += strings.TrimSuffix(*s.StatusMessage, ".") + ". "
		}
		return msg + "Choose a method to try again."
	case StageComplete:
		return "We received part of the amount. Choose a method to pay the rest."
	}
	return ""
}

// testOutcome says in words what the sandbox's mobile money rail does.
func testOutcome(o rails.Outcome) string {
	switch o {
	case rails.OutcomeFailed, rails.OutcomeRejected:
		return "the prompt is declined"
	case rails.OutcomeCustomerTimeout:
		return "the payer never approves the prompt"
	case rails.OutcomeDelayedCompletion:
		return "the prompt is approved after a delay"
	default:
		return "the prompt is approved"
	}
}

// mobileNetworks lists the mobile money wallets that collect currency and
// take amount, by country.
func mobileNetworks(cat *rails.Catalogue, currency string, amount ledger.Minor) []NetworkGroup {
	out := []NetworkGroup{}
	for _, c := range cat.Countries() {
		g := NetworkGroup{Label: c.Name}
		for _, m := range c.Methods {
			if m.Type != ledger.MethodMobileMoney {
				continue
			}
			if _, e := cat.Check(rails.Collection, "code", "amount", m.Code, currency, amount); e != nil {
				continue
			}
			dial := c.DialCode
			g.Networks = append(g.Networks, Network{Code: m.Code, Name: m.Name, DialCode: &dial})
		}
		if len(g.Networks) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// cryptoNetworks lists the stablecoin networks the link accepts, by asset.
func cryptoNetworks(cat *rails.Catalogue, a paymentlinks.Appearance) []NetworkGroup {
	out := []NetworkGroup{}
	for _, m := range cat.Networks() {
		if !m.Collections || m.Status != "operational" || !a.AllowsAsset(m.Currency) {
			continue
		}
		i := 0
		for i < len(out) && out[i].Label != m.Currency {
			i++
		}
		if i == len(out) {
			out = append(out, NetworkGroup{Label: m.Currency})
		}
		out[i].Networks = append(out[i].Networks, Network{Code: m.Code, Name: m.Name})
	}
	return out
}

// ParseCustomFields reads a link's custom fields, the canonical JSON array
// the ledger keeps ("" for none).
func ParseCustomFields(raw string) []CustomField {
	out := []CustomField{}
	if raw == "" {
		return out
	}
	var fields []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Required bool   `json:"required"`
	}
	_ = json.Unmarshal([]byte(raw), &fields) // the ledger keeps what the API checked
	for _, f := range fields {
		out = append(out, CustomField{Name: f.Name, Type: f.Type, Required: f.Required, Label: label(f.Name), Input: inputType(f.Type)})
	}
	return out
}

// label turns a field name (orderNumber, order_number) into words.
func label(name string) string {
	var b strings.Builder
	prevLower := false
	for i, r := range name {
		switch {
		case r == '_' || r == '-':
			b.WriteRune(' ')
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			b.WriteRune(' ')
			r = unicode.ToLower(r)
		case i == 0:
			r = unicode.ToUpper(r)
		}
		b.WriteRune(r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

func inputType(t string) string {
	switch strings.ToLower(t) {
	case "email":
		return "email"
	case "phone", "tel":
		return "tel"
	case "url":
		return "url"
	case "date":
		return "date"
	default:
		return "text"
	}
}

// redirectURL is the link's redirect when it is an absolute http or https
// URL, whatever the API accepted.
func redirectURL(s string) *string {
	if s == "" {
		return nil
	}
	lower := strings.ToLower(s)
	if !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "http://") {
		return nil
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) {
			return nil
		}
	}
	return &s
}

func currency(code string) ledger.Currency {
	c, _ := ledger.LookupCurrency(code)
	return c
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optionalTime(ms int64) *string {
	if ms == 0 {
		return nil
	}
	return optional(time.UnixMilli(ms).UTC().Format(timeLayout))
}
