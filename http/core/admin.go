package core

import (
	"errors"
	"strings"

	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/actors/app"
	"payments/ledger"
)

func init() {
	registerRoutes(
		endpoint{fasthttp.MethodPost, "/v1/organizations", ledger.ScopeOrganizationsAdmin, (*call).createOrganization, nil},
		endpoint{fasthttp.MethodGet, "/v1/keys", ledger.ScopeKeysAdmin, (*call).listKeys, nil},
		endpoint{fasthttp.MethodPost, "/v1/keys", ledger.ScopeKeysAdmin, (*call).createKey, nil},
		endpoint{fasthttp.MethodDelete, "/v1/keys/{id}", ledger.ScopeKeysAdmin, (*call).revokeKey, nil},
	)
}

// Organizations and keys: the operator's and merchants' administration.
// Creating an organization needs organizations:admin, which only the key
// bootstrapped with the cluster holds; managing an organization's own keys
// needs keys:admin.

type createOrganizationBody struct {
	Name            *string `json:"name"`
	Country         *string `json:"country"`
	Timezone        *string `json:"timezone"`
	DefaultCurrency *string `json:"defaultCurrency"`
}

type organizationCreatedBody struct {
	Organization organizationJSON `json:"organization"`
	Key          keyJSON          `json:"key"`
}

// createOrganization: POST /v1/organizations. The response carries the new
// organization's first key; its secret is shown this once.
func (c *call) createOrganization() {
	c.noStore()
	var req createOrganizationBody
	if !c.decode(&req) {
		return
	}
	var p problems
	name := p.text("name", req.Name, true, nameLenMax)
	country := strings.ToUpper(p.text("country", req.Country, false, 2))
	if country != "" && (len(country) != 2 || country[0] < 'A' || country[0] > 'Z' || country[1] < 'A' || country[1] > 'Z') {
		p.add("country", "must be an ISO 3166-1 alpha-2 code such as GH")
	}
	timezone := p.text("timezone", req.Timezone, false, 64)
	if timezone != "" && !knownTimezone(timezone) {
		// Spend caps count calendar days in it (keycontrols.go).
		p.add("timezone", "is not an IANA timezone name such as Africa/Accra")
	}
	var defaultCurrency string
	if cur, ok := p.currency("defaultCurrency", req.DefaultCurrency, false); ok {
		defaultCurrency = cur.Code
	}
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.CreateOrganization(c.caller(), app.NewOrganization{
		Name: name, Country: country, Timezone: timezone, DefaultCurrency: defaultCurrency,
	})
	c.created(r.Reply, func(res *ledger.Result) any {
		return &organizationCreatedBody{renderOrganization(res.Organization), c.s.renderKeyNow(res.APIKey, r.Secret)}
	})
}

type createKeyBody struct {
	Name   *string  `json:"name"`
	Scopes []string `json:"scopes"`
	keyControlsBody
}

type keyBody struct {
	Key keyJSON `json:"key"`
}

// createKey: POST /v1/keys. A key can grant no scope its creator lacks.
func (c *call) createKey() {
	var req createKeyBody
	if !c.decode(&req) {
		return
	}
	in, e := newKeyInput(&req)
	if e != nil {
		c.fail(e)
		return
	}
	c.noStore()
	r := c.s.cfg.App.CreateKey(c.caller(), in)
	c.created(r.Reply, func(res *ledger.Result) any { return &keyBody{c.s.renderKeyNow(res.APIKey, r.Secret)} })
}

// newKeyInput checks a key's create request (the API's, or the
// dashboard's form in its shape).
func newKeyInput(req *createKeyBody) (app.NewKey, *ledger.Error) {
	var p problems
	in := app.NewKey{Name: p.text("name", req.Name, false, 100), ScopesGiven: req.Scopes != nil}
	for i, n := range req.Scopes {
		s, ok := ledger.ParseScope(n)
		if !ok {
			p.add("scopes."+itoa(i), "is not a scope: "+strings.Join(ledger.ScopesAll.Names(), ", "))
			continue
		}
		in.Scopes |= s
	}
	in.Controls, _ = p.keyControls(&req.keyControlsBody)
	return in, p.err()
}

// listKeys: GET /v1/keys, without secrets.
func (c *call) listKeys() { c.ok(fasthttp.StatusOK, c.s.keyList(c.org)) }

// keyList is an organization's keys as GET /v1/keys lists them, newest
// first, each with its spend in the organization's current day and month.
func (s *Server) keyList(org string) listBody[keyJSON] {
	keys := s.cfg.Actors.Reader().APIKeys(org)
	for i, j := 0, len(keys)-1; i < j; i, j = i+1, j-1 {
		keys[i], keys[j] = keys[j], keys[i]
	}
	now := actors.SpendPeriodAt(s.cfg.Actors.Reader(), org, s.cfg.Actors.Now().UnixMilli())
	return newList(0, ledger.Page[ledger.APIKey]{Items: keys}, func(k *ledger.APIKey) keyJSON {
		return renderKeyAt(k, "", now)
	})
}

// revokeKey: DELETE /v1/keys/{id}.
func (c *call) revokeKey() {
	id, e := pathParam(c.ctx, "id")
	if e != nil {
		c.fail(e)
		return
	}
	c.reply(c.s.cfg.App.RevokeKey(c.caller(), id), fasthttp.StatusOK, func(res *ledger.Result) any {
		return &keyBody{c.s.renderKeyNow(res.APIKey, "")}
	})
}

// errorOf is the error a client sees for an operation's: the ledger's
// refusal as it is, a failure of the write path as errorFromActors says.
func errorOf(err error) *ledger.Error {
	var e *ledger.Error
	if errors.As(err, &e) {
		return e
	}
	return errorFromActors(err)
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
