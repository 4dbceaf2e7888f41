package links

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/goccy/go-json/jsontext"
	json "github.com/goccy/go-json/v2"
	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/checkout"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/paymentlinks"
	"payments/rails"
)

// Payment links, payment pages and checkout sessions.
//
// A repeated POST /v1/payment-links with a customerReference already used
// returns the existing link (200, idempotent-replayed) when the request is
// the same, and 409 duplicate with details.existingId when it differs,
// which is the API's convention for every idempotency key.
//
// POST /v1/payment-pages/{id}/payment-links gives a payer of a page their
// own child link, and POST /v1/payment-links/{id}/sessions opens a checkout
// session on a link for the method the payer chose. The hosted checkout
// (checkout_public.go) opens sessions through the same parse
// (parseCheckoutSession) and operation (App.OpenCheckoutSession).

func init() {
	core.RegisterRoutes(core.Resource("/v1/payment-pages", ledger.ScopePaymentLinksRead, ledger.ScopePaymentLinksWrite,
		core.Handlers{Create: createPaymentPage, List: listPaymentPages, Get: getPaymentPage, Update: updatePaymentPage})...)
	core.RegisterRoutes(core.Resource("/v1/payment-links", ledger.ScopePaymentLinksRead, ledger.ScopePaymentLinksWrite,
		core.Handlers{Create: createPaymentLink, List: listPaymentLinks, Get: getPaymentLink, Update: updatePaymentLink})...)
	core.RegisterEventRenderer(paymentlinks.SubjectLink, core.RenderAs(renderPaymentLink))
	core.RegisterEventRenderer(paymentlinks.SubjectPage, core.RenderAs(renderPaymentPage))
	core.RegisterEventRenderer(paymentlinks.SubjectSession, core.RenderAs(renderCheckoutSession))
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/payment-links/{id}/sessions", Scope: ledger.ScopePaymentLinksWrite, H: createCheckoutSession},
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/payment-pages/{id}/payment-links", Scope: ledger.ScopePaymentLinksWrite, H: createPageLink},
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/simulations/checkout-deposit", Scope: ledger.ScopeSimulationsWrite, H: checkoutDeposit, Sim: &core.SimulationDoc{
			Operation: "checkout_deposit",
			Description: "Pays a bank-transfer or stablecoin checkout session as the payer's transfer would: a completed collection credits the balance " +
				"(collection.completed, account.credited) and the session's payment link counts it. `amount` (in the session's originCurrency) defaults " +
				"to what the session has left to pay; pass less to leave the session open for the rest, or more to overpay. Same `externalReference` " +
				"replays with 200; reused for another deposit it is 409 conflict. Mobile money sessions are paid through their collection instead " +
				"(sandbox amount triggers apply).",
		}},
	)
}

// List kinds of the feature's cursors.
const (
	listPaymentLinksKind core.ListKind = 'L'
	listPaymentPagesKind core.ListKind = 'G'
)

// Limits of payment link fields.
const (
	titleLenMax        = 255
	descriptionLenMax  = 1000
	emailLenMax        = 254
	urlLenMax          = 2048
	customFieldsMax    = 20
	customFieldNameMax = 64
	customFieldTypeMax = 32
	brandingTextMax    = 100
	cryptoAssetsMax    = 10
)

// Request bodies.

type customFieldBody struct {
	Name     *string `json:"name"`
	Type     *string `json:"type"`
	Required *bool   `json:"required"`
}

type brandingBody struct {
	LogoURL      *string `json:"logoUrl"`
	AccentColor  *string `json:"accentColor"`
	BusinessName *string `json:"businessName"`
}

// linkPatch is an update field that may be absent, null (clear it) or a
// value.
type linkPatch[T any] struct {
	set, null bool
	v         T
}

func (n *linkPatch[T]) UnmarshalJSON(b []byte) error {
	n.set = true
	if string(b) == "null" {
		n.null = true
		return nil
	}
	if err := json.Unmarshal(b, &n.v, core.DecodeOptions); err != nil {
		if e := core.DecodeError(err); len(e.Fields) > 0 {
			return core.FieldMessage(e.Fields[0].Field + " " + e.Fields[0].Message)
		}
		var zero T
		return core.FieldMessage("must be " + core.DescribeGoType(fmt.Sprintf("%T", zero)) + " or null")
	}
	return nil
}

type appearanceBody struct {
	Title               *string            `json:"title"`
	Description         *string            `json:"description"`
	AllowedMethods      *[]string          `json:"allowedMethods"`
	AllowedCryptoAssets *[]string          `json:"allowedCryptoAssets"`
	CustomFields        *[]customFieldBody `json:"customFields"`
	RedirectURL         *string            `json:"redirectUrl"`
	Branding            *brandingBody      `json:"branding"`
	Metadata            core.JSONObject    `json:"metadata"`
	ExpiresAt           *string            `json:"expiresAt"`
}

type paymentLinkRequestBody struct {
	Email *string `json:"email"`
	core.MoneyBody
	CustomerReference *string `json:"customerReference"`
	appearanceBody
}

type paymentPageRequestBody struct {
	core.MoneyBody
	appearanceBody
}

type pageLinkRequestBody struct {
	Email             *string         `json:"email"`
	Amount            core.Amount     `json:"amount"`
	CustomerReference *string         `json:"customerReference"`
	Metadata          core.JSONObject `json:"metadata"`
}

// updateLinkRequestBody is a PATCH of a link: what a PATCH of a page
// changes too.
type updateLinkRequestBody struct {
	Status      *string                 `json:"status"`
	ExpiresAt   linkPatch[string]       `json:"expiresAt"`
	RedirectURL linkPatch[string]       `json:"redirectUrl"`
	Branding    linkPatch[brandingBody] `json:"branding"`
}

type updatePageRequestBody struct {
	AllowedMethods      *[]string          `json:"allowedMethods"`
	AllowedCryptoAssets *[]string          `json:"allowedCryptoAssets"`
	CustomFields        *[]customFieldBody `json:"customFields"`
	updateLinkRequestBody
}

type checkoutSessionRequestBody struct {
	Method        *string `json:"method"`
	Code          *string `json:"code"`
	AccountNumber *string `json:"accountNumber"`
}

type checkoutDepositRequestBody struct {
	CheckoutSessionID *string     `json:"checkoutSessionId"`
	Amount            core.Amount `json:"amount"`
	ExternalReference *string     `json:"externalReference"`
}

// Validation.

func checkoutEmail(p *core.Problems, field string, v *string) string {
	s := p.Text(field, v, true, emailLenMax)
	if s == "" {
		return ""
	}
	local, domain, ok := strings.Cut(s, "@")
	if !ok || local == "" || strings.Contains(domain, "@") || !strings.Contains(domain, ".") ||
		strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") || strings.ContainsAny(s, " \t") {
		p.Add(field, "must be an email address such as ama@example.com")
		return ""
	}
	return s
}

func checkoutURLField(p *core.Problems, field string, v *string) string {
	s := p.Text(field, v, false, urlLenMax)
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		p.Add(field, "must be an absolute http or https URL")
		return ""
	}
	return s
}

// expiresAt parses a timestamp; null or absent is 0.
func checkoutDeadline(p *core.Problems, field string, v *string) int64 {
	if v == nil {
		return 0
	}
	t, err := time.Parse(time.RFC3339Nano, *v)
	if err != nil {
		p.Add(field, "must be an ISO 8601 timestamp such as 2026-08-01T00:00:00Z")
		return 0
	}
	if t.UnixMilli() <= 0 {
		p.Add(field, "must be after 1970")
		return 0
	}
	return t.UnixMilli()
}

func checkoutMethods(p *core.Problems, field string, v *[]string, required bool) paymentlinks.MethodSet {
	if v == nil {
		if required {
			p.Add(field, "is required")
		}
		return 0
	}
	if len(*v) == 0 {
		p.Add(field, "must name at least one method")
		return 0
	}
	var set paymentlinks.MethodSet
	for _, name := range *v {
		m, ok := paymentlinks.ParseMethod(name)
		switch {
		case !ok:
			p.Add(field, fmt.Sprintf("%q is not one of mobile_money, bank_transfer, crypto", name))
			return 0
		case set.Has(m):
			p.Add(field, fmt.Sprintf("lists %s twice", name))
			return 0
		}
		set = set.With(m)
	}
	return set
}

func checkoutAssets(p *core.Problems, field string, v *[]string) (string, bool) {
	if v == nil {
		return "", false
	}
	if len(*v) == 0 || len(*v) > cryptoAssetsMax {
		p.Add(field, fmt.Sprintf("must list 1 to %d stablecoins, or be omitted to accept any", cryptoAssetsMax))
		return "", false
	}
	seen := map[string]bool{}
	for _, a := range *v {
		cur, ok := ledger.LookupCurrency(a)
		if !ok || !cur.Crypto {
			p.Add(field, fmt.Sprintf("%q is not a supported stablecoin (USDT, USDC, EURC)", a))
			return "", false
		}
		if seen[a] {
			p.Add(field, fmt.Sprintf("lists %s twice", a))
			return "", false
		}
		seen[a] = true
	}
	return strings.Join(*v, ","), true
}

type customFieldJSON struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

func checkoutFields(p *core.Problems, field string, v *[]customFieldBody) string {
	if v == nil || len(*v) == 0 {
		return ""
	}
	if len(*v) > customFieldsMax {
		p.Add(field, fmt.Sprintf("must have at most %d fields", customFieldsMax))
		return ""
	}
	out := make([]customFieldJSON, 0, len(*v))
	for i, f := range *v {
		at := fmt.Sprintf("%s.%d", field, i)
		name := p.Text(at+".name", f.Name, true, customFieldNameMax)
		typ := p.Text(at+".type", f.Type, true, customFieldTypeMax)
		if f.Required == nil {
			p.Add(at+".required", "is required")
			continue
		}
		out = append(out, customFieldJSON{name, typ, *f.Required})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

type brandingJSON struct {
	LogoURL      string `json:"logoUrl,omitempty"`
	AccentColor  string `json:"accentColor,omitempty"`
	BusinessName string `json:"businessName,omitempty"`
}

func checkoutBranding(p *core.Problems, field string, b *brandingBody) string {
	if b == nil {
		return ""
	}
	v := brandingJSON{
		LogoURL:      checkoutURLField(p, field+".logoUrl", b.LogoURL),
		AccentColor:  p.Text(field+".accentColor", b.AccentColor, false, brandingTextMax),
		BusinessName: p.Text(field+".businessName", b.BusinessName, false, brandingTextMax),
	}
	if v == (brandingJSON{}) {
		return ""
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func checkoutAppearance(p *core.Problems, req *appearanceBody) paymentlinks.Appearance {
	var a paymentlinks.Appearance
	a.Title = p.Text("title", req.Title, true, titleLenMax)
	a.Description = p.Text("description", req.Description, false, descriptionLenMax)
	a.Methods = checkoutMethods(p, "allowedMethods", req.AllowedMethods, true)
	a.CryptoAssets, a.CryptoAssetsSet = checkoutAssets(p, "allowedCryptoAssets", req.AllowedCryptoAssets)
	a.CustomFields = checkoutFields(p, "customFields", req.CustomFields)
	a.RedirectURL = checkoutURLField(p, "redirectUrl", req.RedirectURL)
	a.Branding = checkoutBranding(p, "branding", req.Branding)
	a.Metadata = p.Metadata("metadata", req.Metadata)
	a.ExpiresAt = checkoutDeadline(p, "expiresAt", req.ExpiresAt)
	return a
}

// Renderers.

type paymentLinkJSON struct {
	ID         string  `json:"id"`
	URL        string  `json:"url"`
	ParentType *string `json:"parentType"`
	ParentID   *string `json:"parentId"`
	Email      string  `json:"email"`
	core.MoneyJSON
	Title             string  `json:"title"`
	Description       *string `json:"description"`
	Status            string  `json:"status"`
	StatusMessage     *string `json:"statusMessage"`
	TotalReceived     string  `json:"totalReceived"`
	Remaining         string  `json:"remaining"`
	OverpaymentAmount *string `json:"overpaymentAmount"`
	appearanceJSON
	PaidAt            *string               `json:"paidAt"`
	CreatedAt         string                `json:"createdAt"`
	UpdatedAt         string                `json:"updatedAt"`
	CustomerReference *string               `json:"customerReference"`
	Sessions          []checkoutSessionJSON `json:"sessions,omitzero"` // the get-one response only
}

// appearanceJSON is what a link and a page show alike of their
// appearance, after its title, description and status.
type appearanceJSON struct {
	AllowedMethods      []string        `json:"allowedMethods"`
	AllowedCryptoAssets *[]string       `json:"allowedCryptoAssets"`
	CustomFields        jsontext.Value  `json:"customFields"`
	Branding            *jsontext.Value `json:"branding"`
	RedirectURL         *string         `json:"redirectUrl"`
	Metadata            jsontext.Value  `json:"metadata"`
	ExpiresAt           *string         `json:"expiresAt"`
}

func renderAppearance(a paymentlinks.Appearance) appearanceJSON {
	return appearanceJSON{
		AllowedMethods:      methodNames(a.Methods),
		AllowedCryptoAssets: cryptoAssetList(a),
		CustomFields:        arrayOrEmpty(a.CustomFields),
		Branding:            optionalObject(a.Branding),
		RedirectURL:         core.Optional(a.RedirectURL),
		Metadata:            core.ObjectOrEmpty(a.Metadata),
		ExpiresAt:           core.OptionalTimestamp(a.ExpiresAt),
	}
}

func methodNames(s paymentlinks.MethodSet) []string {
	out := []string{}
	for _, m := range s.Methods() {
		out = append(out, m.String())
	}
	return out
}

// cryptoAssetList is the accepted stablecoins, or nil (rendered null) for
// any.
func cryptoAssetList(a paymentlinks.Appearance) *[]string {
	if !a.CryptoAssetsSet {
		return nil
	}
	l := strings.Split(a.CryptoAssets, ",")
	return &l
}

func optionalObject(raw string) *jsontext.Value {
	if raw == "" {
		return nil
	}
	v := jsontext.Value(raw)
	return &v
}

func arrayOrEmpty(raw string) jsontext.Value {
	if raw == "" {
		return jsontext.Value("[]")
	}
	return jsontext.Value(raw)
}

func renderPaymentLink(l *paymentlinks.Link) paymentLinkJSON {
	cur := l.Spec.Currency
	out := paymentLinkJSON{
		ID:                l.ID,
		URL:               core.CheckoutBase() + "/" + l.ID,
		Email:             l.Spec.Email,
		MoneyJSON:         core.MoneyOf(l.Spec.Amount, cur),
		Title:             l.Current.Title,
		Description:       core.Optional(l.Current.Description),
		Status:            l.Status.String(),
		StatusMessage:     core.Optional(l.StatusMessage),
		TotalReceived:     core.Money(l.TotalReceived, cur),
		Remaining:         core.Money(l.Remaining(), cur),
		appearanceJSON:    renderAppearance(l.Current),
		PaidAt:            core.OptionalTimestamp(l.PaidAt),
		CreatedAt:         core.Timestamp(l.CreatedAt),
		UpdatedAt:         core.Timestamp(l.UpdatedAt),
		CustomerReference: core.Optional(l.CustomerReference),
	}
	if l.ParentID != "" {
		out.ParentType, out.ParentID = core.Optional("payment_page"), core.Optional(l.ParentID)
	}
	if over := l.Overpayment(); over > 0 {
		out.OverpaymentAmount = core.Optional(core.Money(over, cur))
	}
	return out
}

type paymentPageJSON struct {
	ID          string  `json:"id"`
	URL         string  `json:"url"`
	Amount      *string `json:"amount"`
	Currency    string  `json:"currency"`
	Title       string  `json:"title"`
	Description *string `json:"description"`
	Status      string  `json:"status"`
	appearanceJSON
	CreatedAt      string `json:"createdAt"`
	UpdatedAt      string `json:"updatedAt"`
	PaymentCount   int64  `json:"paymentCount"`
	TotalCollected string `json:"totalCollected"`
}

func renderPaymentPage(p *paymentlinks.Page) paymentPageJSON {
	out := paymentPageJSON{
		ID:             p.ID,
		URL:            core.CheckoutBase() + "/" + p.ID,
		Currency:       p.Currency,
		Title:          p.Current.Title,
		Description:    core.Optional(p.Current.Description),
		Status:         p.Status.String(),
		appearanceJSON: renderAppearance(p.Current),
		CreatedAt:      core.Timestamp(p.CreatedAt),
		UpdatedAt:      core.Timestamp(p.UpdatedAt),
		PaymentCount:   p.PaymentCount,
		TotalCollected: core.Money(p.TotalCollected, p.Currency),
	}
	if p.Amount > 0 {
		out.Amount = core.Optional(core.Money(p.Amount, p.Currency))
	}
	return out
}

type checkoutSessionJSON struct {
	ID                  string                `json:"id"`
	PaymentLinkID       string                `json:"paymentLinkId"`
	Status              string                `json:"status"`
	StatusMessage       *string               `json:"statusMessage"`
	Method              string                `json:"method"`
	Code                *string               `json:"code"`
	Chain               *string               `json:"chain"`
	OriginAmount        string                `json:"originAmount"`
	OriginCurrency      string                `json:"originCurrency"`
	DestinationAmount   string                `json:"destinationAmount"`
	DestinationCurrency string                `json:"destinationCurrency"`
	Rate                string                `json:"rate"`
	AmountReceived      string                `json:"amountReceived"`
	CollectionID        *string               `json:"collectionId"`
	Instructions        *checkoutInstructions `json:"instructions"` // null once the session has ended
	ExpiresAt           string                `json:"expiresAt"`
	CreatedAt           string                `json:"createdAt"`
	UpdatedAt           string                `json:"updatedAt"`
}

// checkoutInstructions tell the payer what to do: approve the prompt, or
// where to send how much.
type checkoutInstructions struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	core.MoneyJSON
	Bank          *string `json:"bank"`
	AccountNumber *string `json:"accountNumber"`
	AccountName   *string `json:"accountName"`
	Reference     *string `json:"reference"`
	Address       *string `json:"address"`
	Chain         *string `json:"chain"`
}

func renderCheckoutSession(c *paymentlinks.Session) checkoutSessionJSON {
	owed := max(0, c.OriginAmount-c.OriginReceived)
	chain := rails.ChainName(c.Chain) // the name the API shows: "Base" for "base"; "" for none
	in := checkoutInstructions{
		Type:      c.Method.String(),
		MoneyJSON: core.MoneyOf(owed, c.OriginCurrency),
	}
	switch c.Method {
	case paymentlinks.MobileMoney:
		in.Message = "Approve the prompt sent to " + c.PayerNumber + " to pay " + in.Amount + " " + in.Currency
		in.AccountNumber = core.Optional(c.PayerNumber)
	case paymentlinks.BankTransfer:
		in.Message = "Transfer " + in.Amount + " " + in.Currency + " to the account below, quoting the reference"
		in.Bank, in.AccountNumber, in.AccountName, in.Reference = core.Optional(c.DepositBank), core.Optional(c.DepositAccount), core.Optional(checkout.PooledAccountName), core.Optional(c.ID)
	case paymentlinks.Crypto:
		in.Message = "Send " + in.Amount + " " + in.Currency + " on " + chain + " to the address below"
		in.Address, in.Chain = core.Optional(c.DepositAccount), core.Optional(chain)
	}
	out := checkoutSessionJSON{
		ID:                  c.ID,
		PaymentLinkID:       c.LinkID,
		Status:              c.Status.String(),
		StatusMessage:       core.Optional(c.StatusMessage),
		Method:              c.Method.String(),
		Code:                core.Optional(c.MethodCode),
		Chain:               core.Optional(chain),
		OriginAmount:        core.Money(c.OriginAmount, c.OriginCurrency),
		OriginCurrency:      c.OriginCurrency,
		DestinationAmount:   core.Money(c.DestAmount, c.DestCurrency),
		DestinationCurrency: c.DestCurrency,
		Rate:                c.Rate,
		AmountReceived:      core.Money(c.Received, c.DestCurrency),
		CollectionID:        core.Optional(c.CollectionID),
		ExpiresAt:           core.Timestamp(c.ExpiresAt),
		CreatedAt:           core.Timestamp(c.CreatedAt),
		UpdatedAt:           core.Timestamp(c.UpdatedAt),
	}
	if !c.Status.Terminal() {
		out.Instructions = &in
	}
	return out
}

type paymentLinkBody struct {
	PaymentLink paymentLinkJSON `json:"paymentLink"`
}

// Handlers.

// createPaymentLink: POST /v1/payment-links.
func createPaymentLink(c *core.Call) {
	if in, ok := core.Input(c, paymentLinkInput); ok {
		c.Created(c.Server.Config.App.CreatePaymentLink(app.Caller{OrgID: c.Org}, in), paymentLinkResult)
	}
}

// paymentLinkInput checks a payment link request's shape, reporting every
// problem at once.
func paymentLinkInput(req *paymentLinkRequestBody) (app.PaymentLinkRequest, *ledger.Error) {
	var p core.Problems
	spec := paymentlinks.LinkSpec{Email: checkoutEmail(&p, "email", req.Email)}
	ref := p.Text("customerReference", req.CustomerReference, false, core.ReferenceLenMax)
	cur, curOK := p.Currency("currency", req.Currency, true)
	spec.Currency = cur.Code
	spec.Amount = p.RequiredAmount("amount", req.Amount, cur, curOK)
	spec.Appearance = checkoutAppearance(&p, &req.appearanceBody)
	return app.PaymentLinkRequest{CustomerReference: ref, Spec: spec}, p.Err()
}

// paymentLinkResult is the body of a change to a payment link.
var paymentLinkResult = core.ResultBody(paymentlinks.LinkOf, func(l *paymentlinks.Link) *paymentLinkBody {
	return &paymentLinkBody{renderPaymentLink(l)}
})

// createPageLink: POST /v1/payment-pages/{id}/payment-links. The hosted
// page calls it when a payer starts a checkout: the payer gets a link of
// their own under the page.
func createPageLink(c *core.Call) {
	id, ok := c.Param("id")
	if !ok {
		return
	}
	if in, ok := core.Input(c, pageLinkInput); ok {
		in.PageID = id
		c.Created(c.Server.Config.App.CreatePageLink(app.Caller{OrgID: c.Org}, in), paymentLinkResult)
	}
}

// pageLinkInput checks a page link request's shape, reporting every
// problem at once.
func pageLinkInput(req *pageLinkRequestBody) (app.PageLinkRequest, *ledger.Error) {
	var p core.Problems
	in := app.PageLinkRequest{Email: checkoutEmail(&p, "email", req.Email)}
	in.CustomerReference = p.Text("customerReference", req.CustomerReference, false, core.ReferenceLenMax)
	in.Metadata = p.Metadata("metadata", req.Metadata)
	if req.Amount.Set {
		in.Amount = &req.Amount.Text // in the page's currency, which the operation reads
	}
	return in, p.Err()
}

// getPaymentLink: GET /v1/payment-links/{id}, with its sessions newest
// first.
func getPaymentLink(c *core.Call) {
	core.Get(c, "id", "Payment link", func(st *ledger.Reader, org, id string) (paymentLinkJSON, bool) {
		// The link and its sessions from one view: a payment changes both
		// in one command.
		st, release := st.Pinned()
		defer release()
		l, ok := paymentlinks.GetLink(st, org, id)
		if !ok {
			return paymentLinkJSON{}, false
		}
		out := renderPaymentLink(&l)
		sessions := paymentlinks.LinkSessions(st, org, l.ID)
		out.Sessions = make([]checkoutSessionJSON, 0, len(sessions))
		for i := range sessions {
			out.Sessions = append(out.Sessions, renderCheckoutSession(&sessions[i]))
		}
		return out, true
	}, func(link *paymentLinkJSON) *paymentLinkBody { return &paymentLinkBody{*link} })
}

// listPaymentLinks: GET /v1/payment-links.
func listPaymentLinks(c *core.Call) {
	core.List(c, listPaymentLinksKind, paymentLinkFilter, paymentlinks.Links, renderPaymentLink)
}

// paymentLinkFilter reads GET /v1/payment-links' filters, every problem at
// once.
func paymentLinkFilter(c *core.Call) (paymentlinks.LinkFilter, *ledger.Error) {
	var f paymentlinks.LinkFilter
	var p core.Problems
	f.Status = core.QueryStatus(c, &p, paymentlinks.ParseLinkStatus, "must be one of active, paid, expired, closed")
	if v, ok := core.Query(c.Ctx, "parentType"); ok {
		if v != "payment_page" {
			p.Add("parentType", "must be payment_page")
		}
		f.ChildOnly = true
	}
	f.ParentID, _ = core.Query(c.Ctx, "parentId")
	f.Email, _ = core.Query(c.Ctx, "email")
	f.CustomerReference, _ = core.Query(c.Ctx, "customerReference")
	return f, p.Err()
}

// updatePaymentLink: PATCH /v1/payment-links/{id}.
func updatePaymentLink(c *core.Call) {
	core.Update(c, "id", paymentLinkChange, c.Server.Config.App.UpdatePaymentLink, paymentLinkResult)
}

// paymentLinkChange checks a payment link PATCH's shape, reporting every
// problem at once.
func paymentLinkChange(id string, req *updateLinkRequestBody) (app.CheckoutUpdate, *ledger.Error) {
	return checkoutChange(id, req, "link", "must set at least one of status, expiresAt, redirectUrl, branding", nil)
}

// checkoutChange checks a PATCH of a link or a page (what), reporting every
// problem at once: its status, which may only close, what more reads of a
// page's own fields, then what a link and a page both change
// (patchAppearance). A PATCH that changes nothing is refused with empty.
func checkoutChange(id string, req *updateLinkRequestBody, what, empty string, more func(*core.Problems, *app.CheckoutUpdate)) (app.CheckoutUpdate, *ledger.Error) {
	var p core.Problems
	cmd := app.CheckoutUpdate{ID: id}
	if req.Status != nil {
		if *req.Status != "closed" {
			p.Add("status", "must be closed: the only status a "+what+" can be moved to")
		}
		cmd.Close = true
	}
	if more != nil {
		more(&p, &cmd)
	}
	patchAppearance(&p, &cmd, &req.ExpiresAt, &req.RedirectURL, &req.Branding)
	if !cmd.Close && cmd.Set == 0 && len(p) == 0 {
		p.Add("body", empty)
	}
	return cmd, p.Err()
}

// patchAppearance reads what a PATCH of a link and of a page both change
// (null clears it): expiresAt, redirectUrl and branding.
func patchAppearance(p *core.Problems, cmd *app.CheckoutUpdate, expiresAt, redirectURL *linkPatch[string], branding *linkPatch[brandingBody]) {
	if expiresAt.set {
		cmd.Set |= paymentlinks.AppearanceExpiresAt
		if !expiresAt.null {
			cmd.Appearance.ExpiresAt = checkoutDeadline(p, "expiresAt", &expiresAt.v)
		}
	}
	if redirectURL.set {
		cmd.Set |= paymentlinks.AppearanceRedirectURL
		if !redirectURL.null {
			cmd.Appearance.RedirectURL = checkoutURLField(p, "redirectUrl", &redirectURL.v)
		}
	}
	if branding.set {
		cmd.Set |= paymentlinks.AppearanceBranding
		if !branding.null {
			cmd.Appearance.Branding = checkoutBranding(p, "branding", &branding.v)
		}
	}
}

// createPaymentPage: POST /v1/payment-pages.
func createPaymentPage(c *core.Call) {
	if in, ok := core.Input(c, paymentPageInput); ok {
		c.Created(c.Server.Config.App.CreatePaymentPage(app.Caller{OrgID: c.Org}, in), paymentPageResult)
	}
}

// paymentPageInput checks a payment page request's shape, reporting every
// problem at once.
func paymentPageInput(req *paymentPageRequestBody) (app.PaymentPageRequest, *ledger.Error) {
	var p core.Problems
	cur, curOK := p.Currency("currency", req.Currency, true)
	in := app.PaymentPageRequest{Currency: cur.Code}
	if req.Amount.Set && curOK {
		in.Amount = p.Amount("amount", req.Amount, cur)
	}
	in.Appearance = checkoutAppearance(&p, &req.appearanceBody)
	return in, p.Err()
}

// paymentPageGetBody and paymentPageResult are the bodies of a single
// payment page's GET and of a change to it.
var paymentPageGetBody, paymentPageResult = core.Bodies("paymentPage", paymentlinks.PageOf, renderPaymentPage)

// getPaymentPage: GET /v1/payment-pages/{id}.
func getPaymentPage(c *core.Call) {
	core.Get(c, "id", "Payment page", paymentlinks.GetPage, paymentPageGetBody)
}

// listPaymentPages: GET /v1/payment-pages.
func listPaymentPages(c *core.Call) {
	core.List(c, listPaymentPagesKind, core.StatusFilter(parsePaymentPageStatus, "must be one of active, closed"),
		paymentlinks.Pages, renderPaymentPage)
}

// parsePaymentPageStatus parses a page status a list may filter by.
func parsePaymentPageStatus(v string) (paymentlinks.PageStatus, bool) {
	switch v {
	case "active":
		return paymentlinks.PageActive, true
	case "closed":
		return paymentlinks.PageClosed, true
	}
	return 0, false
}

// updatePaymentPage: PATCH /v1/payment-pages/{id}.
func updatePaymentPage(c *core.Call) {
	core.Update(c, "id", paymentPageChange, c.Server.Config.App.UpdatePaymentPage, paymentPageResult)
}

// paymentPageChange checks a payment page PATCH's shape, reporting every
// problem at once.
func paymentPageChange(id string, req *updatePageRequestBody) (app.CheckoutUpdate, *ledger.Error) {
	return checkoutChange(id, &req.updateLinkRequestBody, "page", "must set at least one field", func(p *core.Problems, cmd *app.CheckoutUpdate) {
		if req.AllowedMethods != nil {
			cmd.Set |= paymentlinks.AppearanceMethods
			cmd.Appearance.Methods = checkoutMethods(p, "allowedMethods", req.AllowedMethods, true)
		}
		if req.AllowedCryptoAssets != nil {
			cmd.Set |= paymentlinks.AppearanceCryptoAssets
			cmd.Appearance.CryptoAssets, cmd.Appearance.CryptoAssetsSet = checkoutAssets(p, "allowedCryptoAssets", req.AllowedCryptoAssets)
		}
		if req.CustomFields != nil {
			cmd.Set |= paymentlinks.AppearanceCustomFields
			cmd.Appearance.CustomFields = checkoutFields(p, "customFields", req.CustomFields)
		}
	})
}

// createCheckoutSession: POST /v1/payment-links/{id}/sessions. The hosted
// checkout calls it when the payer picks a method. It prices the session
// (at the all-in rate for a stablecoin in another currency), fails the
// open session the payer is switching away from, and for mobile money sends
// the charge at once.
func createCheckoutSession(c *core.Call) {
	if !c.RailsAvailable() {
		return
	}
	id, ok := c.Param("id")
	if !ok {
		return
	}
	in, ok := core.Input(c, parseCheckoutSession)
	if !ok {
		return
	}
	in.LinkID = id
	r := c.Server.Config.App.OpenCheckoutSession(app.Caller{OrgID: c.Org}, in)
	c.Created(r, func(res *ledger.Result) any {
		return &struct {
			CheckoutSession checkoutSessionJSON `json:"checkoutSession"`
		}{renderCheckoutSession(paymentlinks.SessionOf(*res))}
	})
}

// parseCheckoutSession validates a request to open a session, for the API
// and the hosted checkout alike.
func parseCheckoutSession(req *checkoutSessionRequestBody) (app.CheckoutSessionRequest, *ledger.Error) {
	var p core.Problems
	var in app.CheckoutSessionRequest
	if name := p.Text("method", req.Method, true, 32); name != "" {
		var ok bool
		if in.Method, ok = paymentlinks.ParseMethod(name); !ok {
			p.Add("method", "must be one of mobile_money, bank_transfer, crypto")
		}
	}
	in.Code = p.Text("code", req.Code, in.Method == paymentlinks.MobileMoney || in.Method == paymentlinks.Crypto, 64)
	in.PayerNumber = p.Text("accountNumber", req.AccountNumber, in.Method == paymentlinks.MobileMoney, 50)
	switch in.Method {
	case paymentlinks.MobileMoney:
		if in.PayerNumber != "" {
			in.PayerNumber = p.Phone("accountNumber", in.PayerNumber)
		}
	case paymentlinks.BankTransfer:
		if in.Code != "" {
			p.Add("code", "must be absent for bank_transfer")
		}
		if in.PayerNumber != "" {
			p.Add("accountNumber", "must be absent for bank_transfer")
		}
	case paymentlinks.Crypto:
		if in.PayerNumber != "" {
			p.Add("accountNumber", "must be absent for crypto")
		}
	}
	return in, p.Err()
}

// pooledVirtualAccountID names the pooled collection account of a currency
// (pooledAccountNumber) where a simulated checkout deposit lands: the
// reference gives every deposit simulation a virtual account id. It is not
// a virtual account of the organization's own.
func pooledVirtualAccountID(currency string) string {
	return "va_pooled_" + strings.ToLower(currency)
}

type checkoutDepositJSON struct {
	DepositID         string `json:"depositId"`
	CollectionID      string `json:"collectionId"`
	VirtualAccountID  string `json:"virtualAccountId"` // the pooled account's id (pooledVirtualAccountID)
	CheckoutSessionID string `json:"checkoutSessionId"`
	PaymentLinkID     string `json:"paymentLinkId"`
	core.MoneyJSON
	CreditedAmount    string `json:"creditedAmount"`
	CreditedCurrency  string `json:"creditedCurrency"`
	ExternalReference string `json:"externalReference"`
	RequestedOutcome  string `json:"requestedOutcome"`
	Replayed          bool   `json:"replayed"`
}

// checkoutDeposit: POST /v1/simulations/checkout-deposit.
func checkoutDeposit(c *core.Call) {
	in, ok := core.SimulationInput(c, checkoutDepositInput)
	if !ok {
		return
	}
	r := c.Server.Config.App.SimulateCheckoutDeposit(app.Caller{OrgID: c.Org}, in)
	sess := r.Session
	c.Created(r.Reply, core.Simulated(func(res *ledger.Result) checkoutDepositJSON {
		d := paymentlinks.DepositOf(*res)
		return checkoutDepositJSON{
			DepositID: d.ID, CollectionID: d.CollectionID, VirtualAccountID: pooledVirtualAccountID(sess.OriginCurrency),
			CheckoutSessionID: d.SessionID, PaymentLinkID: d.LinkID,
			MoneyJSON:      core.MoneyOf(d.Amount, d.Currency),
			CreditedAmount: core.Money(d.Credited, sess.DestCurrency), CreditedCurrency: sess.DestCurrency,
			ExternalReference: d.ExternalReference, RequestedOutcome: "completed", Replayed: res.Replayed,
		}
	}))
}

// checkoutDepositInput checks a checkout deposit simulation's shape,
// reporting every problem at once.
func checkoutDepositInput(req *checkoutDepositRequestBody) (app.CheckoutDepositRequest, *ledger.Error) {
	var p core.Problems
	in := app.CheckoutDepositRequest{
		ExternalReference: p.Text("externalReference", req.ExternalReference, true, core.ReferenceLenMax),
		SessionID:         p.Text("checkoutSessionId", req.CheckoutSessionID, true, 100),
	}
	if req.Amount.Set {
		in.Amount = &req.Amount.Text // in the session's currency, which the operation reads
	}
	return in, p.Err()
}
