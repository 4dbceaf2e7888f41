package http

import (
	"strings"

	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/ledger"
)

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
	now := c.s.cfg.Actors.Now().UnixMilli()
	secret := actors.NewKeySecret(c.s.cfg.Live)
	orgID := actors.NewID("org_")
	cmd := &ledger.CreateOrganization{
		At: now, ID: orgID, Name: name, Country: country, Timezone: timezone, DefaultCurrency: defaultCurrency,
		Key: ledger.CreateAPIKey{
			At: now, ID: actors.NewID("key_"), OrgID: orgID, Name: "Default key",
			Hash: actors.HashKey(secret), Hint: actors.KeyHint(secret), Scopes: ledger.ScopesMerchant,
		},
	}
	ctx, cancel := c.commitContext()
	defer cancel()
	r := c.s.cfg.Actors.Propose(ctx, cmd)
	c.created(r, func(res *ledger.Result) any {
		return &organizationCreatedBody{renderOrganization(res.Organization), c.renderKey(res.APIKey, secret)}
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
	var p problems
	name := p.text("name", req.Name, false, 100)
	scopes := c.key.Scopes & ledger.ScopesMerchant
	if req.Scopes != nil {
		scopes = 0
		for i, n := range req.Scopes {
			s, ok := ledger.ParseScope(n)
			if !ok {
				p.add("scopes."+itoa(i), "is not a scope: "+strings.Join(ledger.ScopesAll.Names(), ", "))
				continue
			}
			scopes |= s
		}
	}
	controls, _ := p.keyControls(&req.keyControlsBody)
	if e := p.err(); e != nil {
		c.fail(e)
		return
	}
	if !c.key.Scopes.Has(scopes) {
		missing := scopes &^ c.key.Scopes
		c.fail(&ledger.Error{Code: ledger.CodeForbidden,
			Message: "A key cannot grant scopes it does not hold: " + strings.Join(missing.Names(), ", ")})
		return
	}
	if controls.Allowlist != "" && !c.ensureForwardKey() {
		return
	}
	secret := actors.NewKeySecret(c.s.cfg.Live)
	c.noStore()
	var cmd ledger.Command = &ledger.CreateAPIKey{
		At: c.s.cfg.Actors.Now().UnixMilli(), ID: actors.NewID("key_"), OrgID: c.org, Name: name,
		Hash: actors.HashKey(secret), Hint: actors.KeyHint(secret), Scopes: scopes,
	}
	if controls != (ledger.KeyControls{}) {
		cmd = &ledger.CreateControlledKey{Key: *cmd.(*ledger.CreateAPIKey), Controls: controls}
	}
	ctx, cancel := c.commitContext()
	defer cancel()
	r := c.s.cfg.Actors.Propose(ctx, cmd)
	c.created(r, func(res *ledger.Result) any { return &keyBody{c.renderKey(res.APIKey, secret)} })
}

// listKeys: GET /v1/keys, without secrets.
func (c *call) listKeys() {
	var keys []ledger.APIKey
	keys = c.s.cfg.Actors.Reader().APIKeys(c.org)
	// Newest first, like every list.
	for i, j := 0, len(keys)-1; i < j; i, j = i+1, j-1 {
		keys[i], keys[j] = keys[j], keys[i]
	}
	now := actors.SpendPeriodAt(c.s.cfg.Actors.Reader(), c.org, c.s.cfg.Actors.Now().UnixMilli())
	c.ok(fasthttp.StatusOK, newList(0, ledger.Page[ledger.APIKey]{Items: keys}, func(k *ledger.APIKey) keyJSON {
		return renderKeyAt(k, "", now)
	}))
}

// revokeKey: DELETE /v1/keys/{id}.
func (c *call) revokeKey() {
	id, e := pathParam(c.ctx, "id")
	if e != nil {
		c.fail(e)
		return
	}
	ctx, cancel := c.commitContext()
	defer cancel()
	r := c.s.cfg.Actors.Propose(ctx, &ledger.RevokeAPIKey{At: c.s.cfg.Actors.Now().UnixMilli(), ID: id, OrgID: c.org})
	switch {
	case r.Err != nil:
		c.fail(errorFromActors(r.Err))
	case r.Result.Err != nil:
		c.fail(r.Result.Err)
	default:
		c.ok(fasthttp.StatusOK, &keyBody{c.renderKey(r.Result.APIKey, "")})
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
