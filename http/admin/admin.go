package admin

import (
	"strings"

	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
)

func init() {
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/organization", H: getOrganization},
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/organizations", Scope: ledger.ScopeOrganizationsAdmin, H: createOrganization},
	)
	core.RegisterRoutes(core.Resource("/v1/keys", ledger.ScopeKeysAdmin, ledger.ScopeKeysAdmin, core.Handlers{
		Create: createKey, List: listKeys, Get: getKey, Update: updateKey, Delete: revokeKey,
	})...)
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
	Organization OrganizationJSON `json:"organization"`
	Key          keyJSON          `json:"key"`
}

// createOrganization: POST /v1/organizations. The response carries the new
// organization's first key; its secret is shown this once.
func createOrganization(c *core.Call) {
	c.NoStore()
	in, ok := core.Input(c, organizationInput)
	if !ok {
		return
	}
	r := c.Server.Config.App.CreateOrganization(c.Caller(), in)
	c.Created(r.Reply, func(res *ledger.Result) any {
		return &organizationCreatedBody{RenderOrganization(res.Organization), RenderKeyNow(c.Server, res.APIKey, r.Secret)}
	})
}

// organizationInput checks an organization request's shape, reporting
// every problem at once.
func organizationInput(req *createOrganizationBody) (app.NewOrganization, *ledger.Error) {
	var p core.Problems
	var in app.NewOrganization
	in.Name = p.Text("name", req.Name, true, core.NameLenMax)
	in.Country = strings.ToUpper(p.Text("country", req.Country, false, 2))
	if c := in.Country; c != "" && (len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z') {
		p.Add("country", "must be an ISO 3166-1 alpha-2 code such as GH")
	}
	in.Timezone = p.Text("timezone", req.Timezone, false, 64)
	if in.Timezone != "" && !knownTimezone(in.Timezone) {
		// Spend caps count calendar days in it (keycontrols.go).
		p.Add("timezone", "is not an IANA timezone name such as Africa/Accra")
	}
	if cur, ok := p.Currency("defaultCurrency", req.DefaultCurrency, false); ok {
		in.DefaultCurrency = cur.Code
	}
	return in, p.Err()
}

type CreateKeyBody struct {
	Name   *string  `json:"name"`
	Scopes []string `json:"scopes"`
	keyControlsBody
}

type keyBody struct {
	Key keyJSON `json:"key"`
}

// createKey: POST /v1/keys. A key can grant no scope its creator lacks.
func createKey(c *core.Call) {
	in, ok := core.Input(c, NewKeyInput)
	if !ok {
		return
	}
	c.NoStore()
	r := c.Server.Config.App.CreateKey(c.Caller(), in)
	c.Created(r.Reply, func(res *ledger.Result) any { return &keyBody{RenderKeyNow(c.Server, res.APIKey, r.Secret)} })
}

// newKeyInput checks a key's create request (the API's, or the
// dashboard's form in its shape).
func NewKeyInput(req *CreateKeyBody) (app.NewKey, *ledger.Error) {
	var p core.Problems
	in := app.NewKey{Name: p.Text("name", req.Name, false, 100), ScopesGiven: req.Scopes != nil}
	for i, n := range req.Scopes {
		s, ok := ledger.ParseScope(n)
		if !ok {
			p.Add("scopes."+core.Itoa(i), "is not a scope: "+strings.Join(ledger.ScopesAll.Names(), ", "))
			continue
		}
		in.Scopes |= s
	}
	in.Controls, _ = keyControls(&p, &req.keyControlsBody)
	return in, p.Err()
}

// listKeys: GET /v1/keys, without secrets.
func listKeys(c *core.Call) { c.OK(fasthttp.StatusOK, KeyList(c.Server, c.Org)) }

// keyList is an organization's keys as GET /v1/keys lists them, newest
// first, each with its spend in the organization's current day and month,
// read from one pinned view (see core.List).
func KeyList(s *core.Server, org string) core.ListBody[keyJSON] {
	st, release := s.Config.Actors.Reader().Pinned()
	keys := st.APIKeys(org)
	release()
	for i, j := 0, len(keys)-1; i < j; i, j = i+1, j-1 {
		keys[i], keys[j] = keys[j], keys[i]
	}
	now := actors.SpendPeriodAt(s.Config.Actors.Reader(), org, s.Config.Actors.Now().UnixMilli())
	return core.NewList(0, ledger.Page[ledger.APIKey]{Items: keys}, func(k *ledger.APIKey) keyJSON {
		return renderKeyAt(k, "", now)
	})
}

// revokeKey: DELETE /v1/keys/{id}.
func revokeKey(c *core.Call) {
	core.Act(c, "id", c.Server.Config.App.RevokeKey, func(res *ledger.Result) any {
		return &keyBody{RenderKeyNow(c.Server, res.APIKey, "")}
	})
}

type organizationBody struct {
	Organization OrganizationJSON `json:"organization"`
}

// getOrganization: GET /v1/organization, the caller's own organization.
func getOrganization(c *core.Call) {
	var o ledger.Organization
	var found bool
	o, found = c.Server.Config.Actors.Reader().Organization(c.Org)
	if !found {
		c.Fail(core.NotFound("Organization"))
		return
	}
	c.OK(fasthttp.StatusOK, &organizationBody{RenderOrganization(&o)})
}
