package dashsite

import (
	"encoding/json"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/actors/app"
	"payments/http/admin"
	"payments/http/core"
	"payments/http/dashboard"
	"payments/http/money"
	"payments/ledger"
	"payments/ledger/webhooks"
)

// The dashboard's pages (package dashboard renders them). A page knows no
// business rule. Its forms act as the signed-in member, with the scopes of
// the member's role: each is put in the shape of its API route's body,
// checked as that route checks it, and handed to the same operation of the
// application API (actors/app) the route calls. Its views are the API's
// renderings of what it reads: keys and webhooks read the published state
// directly; the other views (balances, money movements, the ledger, the
// request log, deposit details) and the deposit simulation still call
// their API handler in-process (dashboardRequest.api) until those areas
// offer their reads and operations apart from their handlers. The
// sign-in, sign-out, setup, invitation, reset and team routes are
// dashboard_auth.go's and dashboard_team.go's; the Account page's password
// change is dashboard_account.go's.

// dashboardRoutes registers the pages.
func dashboardRoutes(s *core.Server) {
	r := s.Router()
	r.GET(dashboard.Base+"/assets/{name}", func(a0 *fasthttp.RequestCtx) { dashboardAsset(s, a0) })
	r.GET(dashboard.Base, dashboardPage(s, (*dashboardRequest).home))
	r.GET(dashboard.Base+"/keys", dashboardPage(s, (*dashboardRequest).keys))
	r.POST(dashboard.Base+"/keys", dashboardPage(s, (*dashboardRequest).createKey))
	r.GET(dashboard.Base+"/keys/{id}", dashboardPage(s, (*dashboardRequest).keyDetail))
	r.POST(dashboard.Base+"/keys/{id}", dashboardPage(s, (*dashboardRequest).updateKey))
	r.POST(dashboard.Base+"/keys/{id}/revoke", dashboardPage(s, (*dashboardRequest).revokeKey))
	r.GET(dashboard.Base+"/requests", dashboardPage(s, (*dashboardRequest).requests))
	r.GET(dashboard.Base+"/requests/{requestId}", dashboardPage(s, (*dashboardRequest).request))
	r.GET(dashboard.Base+"/ledger", dashboardPage(s, (*dashboardRequest).ledgerPage))
	r.GET(dashboard.Base+"/ledger/export.csv", dashboardPage(s, (*dashboardRequest).ledgerExport))
	r.GET(dashboard.Base+"/sandbox", dashboardPage(s, (*dashboardRequest).sandbox))
	r.POST(dashboard.Base+"/sandbox/{tool}", dashboardPage(s, (*dashboardRequest).sandboxTool))
	r.GET(dashboard.Base+"/account", dashboardPage(s, (*dashboardRequest).account))
	r.POST(dashboard.Base+"/account/password", dashboardPage(s, (*dashboardRequest).changePassword))
	r.GET(dashboard.Base+"/webhooks", dashboardPage(s, (*dashboardRequest).webhooks))
	r.POST(dashboard.Base+"/webhooks", dashboardPage(s, (*dashboardRequest).createEndpoint))
	r.POST(dashboard.Base+"/webhooks/endpoints/{id}", dashboardPage(s, (*dashboardRequest).updateEndpoint))
	r.POST(dashboard.Base+"/webhooks/endpoints/{id}/test", dashboardPage(s, (*dashboardRequest).testEndpoint))
	r.POST(dashboard.Base+"/webhooks/endpoints/{id}/rotate", dashboardPage(s, (*dashboardRequest).rotateSecret))
	r.POST(dashboard.Base+"/webhooks/endpoints/{id}/status", dashboardPage(s, (*dashboardRequest).endpointStatus))
	r.GET(dashboard.Base+"/webhooks/deliveries/{id}", dashboardPage(s, (*dashboardRequest).delivery))
	r.POST(dashboard.Base+"/webhooks/deliveries/{id}/replay", dashboardPage(s, (*dashboardRequest).replayDelivery))
	for _, k := range dashboard.MoneyKinds {
		r.GET(dashboard.Base+"/"+k.Slug, dashboardPage(s, func(d *dashboardRequest) { d.moneyList(k) }))
		r.GET(dashboard.Base+"/"+k.Slug+"/{id}", dashboardPage(s, func(d *dashboardRequest) { d.moneyItem(k) }))
	}
}

// dashboardRequest is one request of a signed-in member to a page.
type dashboardRequest struct {
	s   *core.Server
	ctx *fasthttp.RequestCtx
	m   dashboardMember
	// key is what the page's API calls act as: the member's organization
	// and role's scopes, named by the member's id.
	key ledger.APIKey
}

// dashboardPage wraps a page: the member's session (dashboardAuth, which
// first runs the dashboard's gate: a request id, the limit per client
// address, the cross-site check on forms, the relay to the leader, whose
// state the handlers read and write), and the CSRF token of every form.
func dashboardPage(s *core.Server, h func(d *dashboardRequest)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		m, ok := dashboardAuth(s, ctx)
		if !ok {
			return
		}
		core.NoteMember(ctx, m.ID, m.OrgID)
		d := &dashboardRequest{s: s, ctx: ctx, m: m,
			key: ledger.APIKey{ID: m.ID, OrgID: m.OrgID, Name: m.Email, Scopes: dashboardScopes(m.Role)}}
		if !ctx.IsGet() && !dashboardCheckCSRF(s, ctx, m) {
			d.render(fasthttp.StatusForbidden, &dashboard.Page{Name: "error", Title: "Form expired",
				Problem: &dashboard.Problem{Code: string(ledger.CodeForbidden),
					Message: "This form carries no valid CSRF token: reload the page and send it again"}})
			return
		}
		h(d)
	}
}

// apiAnswer is what an API handler answered a page's call.
type apiAnswer struct {
	status  int
	body    map[string]any
	problem *dashboard.Problem // set when status ≥ 400
	// response is the handler's whole answer, for one that is not JSON
	// (the CSV export).
	response *fasthttp.Response
}

func (a apiAnswer) ok() bool { return a.problem == nil }

// api calls the API's handler of method and route (a path of the route
// table, such as "/v1/keys/{id}") with the path parameters params (name,
// value, …), the query and a JSON body (nil: none), as the member.
func (d *dashboardRequest) api(method, route string, params []string, query string, body any) apiAnswer {
	return d.apiWith(d.key, method, route, params, query, body)
}

func (d *dashboardRequest) apiWith(key ledger.APIKey, method, route string, params []string, query string, body any) apiAnswer {
	var ep *core.Endpoint
	for i := range d.s.Endpoints {
		if e := &d.s.Endpoints[i]; e.Method == method && e.Path == route {
			ep = e
			break
		}
	}
	if ep == nil {
		return d.failed(&ledger.Error{Code: ledger.CodeInternal, Message: "No API route " + method + " " + route})
	}
	if ep.Scope != 0 && !key.Scopes.Has(ep.Scope) {
		return d.failed(&ledger.Error{Code: ledger.CodeForbidden,
			Message: "Your role (" + d.m.Role + ") does not have the scope " + ledger.ScopeName(ep.Scope)})
	}
	path := route
	for i := 0; i+1 < len(params); i += 2 {
		path = strings.Replace(path, "{"+params[i]+"}", url.PathEscape(params[i+1]), 1)
	}
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	req.URI().SetQueryString(query)
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return d.failed(&ledger.Error{Code: ledger.CodeInternal, Message: "Internal error"})
		}
		req.Header.SetContentType("application/json")
		req.SetBody(b)
	}
	inner := new(fasthttp.RequestCtx)
	inner.Init(&req, d.ctx.RemoteAddr(), nil)
	inner.SetUserValue(core.BodyReadKey, true)
	for i := 0; i+1 < len(params); i += 2 {
		inner.SetUserValue(params[i], url.PathEscape(params[i+1]))
	}
	inner.Response.Header.Set("x-request-id", core.RequestIDOf(d.ctx))
	ep.H(&core.Call{Server: d.s, Ctx: inner, Key: key, Org: key.OrgID})
	a := apiAnswer{status: inner.Response.StatusCode(), response: &inner.Response}
	a.body, _ = dashboard.Decode(inner.Response.Body())
	if a.status >= 400 {
		a.problem = problemOf(a.status, a.body)
	}
	return a
}

// allowed refuses an action the member's role has not the scope of, as the
// API refuses a key without it.
func (d *dashboardRequest) allowed(scope ledger.Scopes) *ledger.Error {
	if d.key.Scopes.Has(scope) {
		return nil
	}
	return &ledger.Error{Code: ledger.CodeForbidden,
		Message: "Your role (" + d.m.Role + ") does not have the scope " + ledger.ScopeName(scope)}
}

// apiBody fills req, one of the API's request bodies, from body, a form
// put in the API's shape; the checks that follow are the API's own.
func (d *dashboardRequest) apiBody(body map[string]any, req any) *ledger.Error {
	b, err := json.Marshal(body)
	if err != nil {
		return &ledger.Error{Code: ledger.CodeInternal, Message: "Internal error"}
	}
	return core.DecodeBody(b, req)
}

// formInput is a form's change as the API checks it: refused unless the
// member's role has scope, then body (the form in the API's shape) read
// into the API's request body Req and checked by the API's input.
func formInput[Req, In any](d *dashboardRequest, scope ledger.Scopes, body map[string]any, input func(*Req) (In, *ledger.Error)) (in In, e *ledger.Error) {
	if e = d.allowed(scope); e != nil {
		return in, e
	}
	var req Req
	if e = d.apiBody(body, &req); e != nil {
		return in, e
	}
	return input(&req)
}

// view is v, a response body of the API's, as the pages' templates read
// the API's JSON.
func view(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	m, _ := dashboard.Decode(b)
	return m
}

// failed is an answer the page gives itself, as the API would.
func (d *dashboardRequest) failed(e *ledger.Error) apiAnswer {
	return apiAnswer{status: core.HTTPStatus(e.Code), problem: problemOfError(e)}
}

// problemOfError is a refusal as a page shows it: what the API's error
// envelope says of it.
func problemOfError(e *ledger.Error) *dashboard.Problem {
	p := &dashboard.Problem{Status: core.HTTPStatus(e.Code), Code: string(e.Code), Message: e.Message}
	for _, f := range e.Fields {
		p.Details = append(p.Details, dashboard.Detail{Field: f.Field, Message: f.Message})
	}
	return p
}

// problemOf reads the API's error envelope.
func problemOf(status int, body map[string]any) *dashboard.Problem {
	p := &dashboard.Problem{Status: status, Code: dashboard.Show(body["error"]), Message: dashboard.Show(body["message"])}
	if fields, ok := dashboard.Get(body, "details.fields").([]any); ok {
		for _, f := range fields {
			p.Details = append(p.Details, dashboard.Detail{Field: dashboard.Show(dashboard.Get(f, "field")), Message: dashboard.Show(dashboard.Get(f, "message"))})
		}
	}
	return p
}

// render answers with a page: never cached, framed or sniffed, under its
// Content-Security-Policy.
func (d *dashboardRequest) render(status int, p *dashboard.Page) {
	p.Member = dashboard.Member{Email: d.m.Email, Role: d.m.Role}
	p.Live = d.s.Config.Live
	p.CSRF = dashboardCSRF(d.s, d.ctx, d.m)
	p.RequestID = core.RequestIDOf(d.ctx)
	if p.Notice == "" {
		p.Notice = dashboardNotices[string(d.ctx.QueryArgs().Peek("done"))]
	}
	body, err := p.Render()
	if err != nil {
		d.s.Logger.Error("rendering a dashboard page", "page", p.Name, "err", err)
		writeDashboardMessage(d.s, d.ctx, fasthttp.StatusInternalServerError, "Something went wrong", "Internal error")
		return
	}
	core.WriteHTML(d.ctx, status, p.CSP(), body)
}

// dashboardNotices are the lines a page shows after a form sent it there
// (?done=…): fixed texts, never the query's own.
var dashboardNotices = map[string]string{
	"saved":    "Saved.",
	"revoked":  "The key is revoked: requests made with it are refused.",
	"created":  "Created.",
	"replayed": "The delivery is sent again; its new attempt shows once its outcome is known.",
	"status":   "The endpoint's status is changed.",
	"password": "Your password is changed. Your other sessions are signed out; this one goes on.",
}

// seeOther sends the browser to path after a form (post, redirect, get).
func (d *dashboardRequest) seeOther(path string) {
	d.ctx.Response.Header.Set("Location", path) // relative: holds behind a proxy
	d.ctx.SetStatusCode(fasthttp.StatusSeeOther)
}

// dashboardAsset: GET /dashboard/assets/{name}, cached for a year (its
// name changes with its bytes).
func dashboardAsset(s *core.Server, ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.Set("x-request-id", s.RequestID(ctx))
	if e := s.LimitAddress(ctx); e != nil {
		core.WriteError(ctx, e)
		return
	}
	core.ServeAsset(ctx, dashboard.Assets)
}

// form reads a trimmed field of the page's form.
func (d *dashboardRequest) form(name string) string {
	return strings.TrimSpace(string(d.ctx.PostArgs().Peek(name)))
}

// param is a path parameter of the page's route.
func (d *dashboardRequest) param(name string) string {
	v, _ := d.ctx.UserValue(name).(string)
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

// home: GET /dashboard. Balances and the latest money movements.
func (d *dashboardRequest) home() {
	view := map[string]any{}
	var problem *dashboard.Problem
	if a := d.api(fasthttp.MethodGet, "/v1/accounts", nil, "", nil); a.ok() {
		view["accounts"] = a.body
	} else {
		problem = a.problem
	}
	var recent []dashboard.MoneyList
	for _, k := range dashboard.MoneyKinds[:3] {
		if a := d.api(fasthttp.MethodGet, "/v1/"+k.Slug, nil, "limit=5", nil); a.ok() {
			recent = append(recent, dashboard.MoneyList{Kind: k, List: a.body})
		}
	}
	view["recent"] = recent
	view["charts"] = d.charts()
	d.render(fasthttp.StatusOK, &dashboard.Page{Name: "home", Title: "Home", Section: "home", View: view, Problem: problem})
}

// keyControlsForm is the caps and allowlist part of a key's form, as typed.
func (d *dashboardRequest) keyControlsForm() map[string]string {
	return map[string]string{"perTransaction": d.form("capPerTransaction"), "daily": d.form("capDaily"),
		"monthly": d.form("capMonthly"), "ipAllowlist": d.form("ipAllowlist")}
}

// keyControlsBody turns the typed caps and allowlist into the API's body
// members: an empty cap is null (no cap) when every cap is sent.
func keyControlsJSON(f map[string]string, sendEmpty bool) map[string]any {
	body := map[string]any{}
	caps := map[string]any{}
	for _, name := range []string{"perTransaction", "daily", "monthly"} {
		switch {
		case f[name] != "":
			caps[name] = f[name]
		case sendEmpty:
			caps[name] = nil
		}
	}
	if len(caps) > 0 {
		body["spendCaps"] = caps
	}
	list := strings.FieldsFunc(f["ipAllowlist"], func(r rune) bool { return r == ',' || r == '\n' || r == '\r' || r == ' ' || r == '\t' })
	if len(list) > 0 || sendEmpty {
		if list == nil {
			list = []string{}
		}
		body["ipAllowlist"] = list
	}
	return body
}

// keys: GET /dashboard/keys. The keys, and the form to create one.
func (d *dashboardRequest) keys() { d.keysPage(fasthttp.StatusOK, nil, nil, emptyControls()) }

func emptyControls() map[string]string {
	return map[string]string{"perTransaction": "", "daily": "", "monthly": "", "ipAllowlist": ""}
}

func (d *dashboardRequest) keysPage(status int, created any, problem *dashboard.Problem, controls map[string]string) {
	// Every role sees the keys (never a secret); only keys:admin (owners)
	// creates, changes or revokes one.
	v := map[string]any{"scopes": d.key.Scopes.Names(), "controls": controls, "created": created,
		"keys": view(admin.KeyList(d.s, d.m.OrgID))}
	d.render(status, &dashboard.Page{Name: "keys", Title: "API keys", Section: "keys", View: v, Problem: problem})
}

// createKey: POST /dashboard/keys: app.CreateKey, with the form checked as
// POST /v1/keys checks its body. The answer shows the secret, this once.
func (d *dashboardRequest) createKey() {
	controls := d.keyControlsForm()
	body := keyControlsJSON(controls, false)
	body["name"] = d.form("name")
	var scopes []string
	d.ctx.PostArgs().VisitAll(func(k, v []byte) {
		if string(k) == "scopes" {
			scopes = append(scopes, string(v))
		}
	})
	if len(scopes) > 0 {
		body["scopes"] = scopes
	}
	in, e := formInput(d, ledger.ScopeKeysAdmin, body, admin.NewKeyInput)
	var r app.KeyCreated
	if e == nil {
		r = d.s.Config.App.CreateKey(d.m.caller(), in)
		e = core.ReplyError(r.Reply)
	}
	if e != nil {
		d.keysPage(core.HTTPStatus(e.Code), nil, problemOfError(e), controls)
		return
	}
	d.keysPage(fasthttp.StatusCreated, view(admin.RenderKeyNow(d.s, r.Result.APIKey, r.Secret)), nil, emptyControls())
}

// keyDetail: GET /dashboard/keys/{id}. Its caps, its use against them, its
// allowlist; the forms to change them and to revoke it.
func (d *dashboardRequest) keyDetail() { d.keyPage(fasthttp.StatusOK, nil, nil) }

func (d *dashboardRequest) keyPage(status int, problem *dashboard.Problem, typed map[string]string) {
	key, found := d.s.Config.Actors.Reader().APIKey(d.m.OrgID, d.param("id"))
	if !found {
		e := core.NotFound("API key")
		d.render(core.HTTPStatus(e.Code), &dashboard.Page{Name: "error", Title: "API key", Section: "keys", Problem: problemOfError(e)})
		return
	}
	k := view(admin.RenderKeyNow(d.s, &key, ""))
	controls := typed
	if controls == nil {
		controls = map[string]string{}
		for _, name := range []string{"perTransaction", "daily", "monthly"} {
			if v, ok := dashboard.Get(k, "spendCaps."+name).(string); ok {
				controls[name] = v
			} else {
				controls[name] = ""
			}
		}
		list, _ := dashboard.Get(k, "ipAllowlist").([]any)
		var lines []string
		for _, e := range list {
			lines = append(lines, dashboard.Show(e))
		}
		controls["ipAllowlist"] = strings.Join(lines, "\n")
	}
	d.render(status, &dashboard.Page{Name: "key", Title: "API key " + dashboard.Show(dashboard.Get(k, "name")), Section: "keys",
		View: map[string]any{"key": k, "controls": controls}, Problem: problem})
}

// updateKey: POST /dashboard/keys/{id}: app.SetKeyControls, with the form
// checked as PATCH /v1/keys/{id} checks its body.
func (d *dashboardRequest) updateKey() {
	id := d.param("id")
	controls := d.keyControlsForm()
	in, e := formInput(d, ledger.ScopeKeysAdmin, keyControlsJSON(controls, true), func(req *admin.UpdateKeyBody) (app.KeyControlsChange, *ledger.Error) {
		return admin.KeyControlsInput(id, req)
	})
	if e == nil {
		e = core.ReplyError(d.s.Config.App.SetKeyControls(d.m.caller(), in))
	}
	d.keyDone(id, e, controls, "saved")
}

// keyDone goes back to key id's page saying a form is done, or shows its
// refusal there with the controls the member gave (nil: the key's own).
func (d *dashboardRequest) keyDone(id string, e *ledger.Error, controls map[string]string, done string) {
	if e != nil {
		d.keyPage(core.HTTPStatus(e.Code), problemOfError(e), controls)
		return
	}
	d.seeOther(dashboard.Base + "/keys/" + url.PathEscape(id) + "?done=" + done)
}

// revokeKey: POST /dashboard/keys/{id}/revoke: app.RevokeKey, once the
// member ticked the confirmation.
func (d *dashboardRequest) revokeKey() {
	id := d.param("id")
	if d.form("confirm") != "yes" {
		d.keyPage(fasthttp.StatusBadRequest, &dashboard.Problem{Code: string(ledger.CodeValidation),
			Message: "Tick the confirmation to revoke the key"}, nil)
		return
	}
	e := d.allowed(ledger.ScopeKeysAdmin)
	if e == nil {
		e = core.ReplyError(d.s.Config.App.RevokeKey(d.m.caller(), id))
	}
	d.keyDone(id, e, nil, "revoked")
}

// requestFilters are the request log's filters the page passes on.
var requestFilters = []string{"status", "method", "path", "keyId", "from", "to"}

// requests: GET /dashboard/requests, through GET /v1/requests with the
// same filters and cursor; ?id= goes to that request's page.
func (d *dashboardRequest) requests() {
	args := d.ctx.QueryArgs()
	if id := strings.TrimSpace(string(args.Peek("id"))); id != "" {
		d.seeOther(dashboard.Base + "/requests/" + url.PathEscape(id))
		return
	}
	filters, filtered, query := d.listQuery(requestFilters)
	view := map[string]any{"filters": filters, "methods": append([]string{""}, core.KnownMethods[:]...)}
	a := d.api(fasthttp.MethodGet, "/v1/requests", nil, query, nil)
	if a.ok() {
		view["list"] = a.body
		view["next"] = dashboard.NextHref(dashboard.Base+"/requests", filtered, a.body)
	}
	d.render(okStatus(a), &dashboard.Page{Name: "requests", Title: "Request log", Section: "requests", View: view, Problem: a.problem})
}

// listQuery reads a list page's filters (names) from its query: each as
// given, for the form; those set, which the next page's link keeps; and the
// API's query, those with the cursor.
func (d *dashboardRequest) listQuery(names []string) (filters map[string]string, filtered url.Values, query string) {
	args := d.ctx.QueryArgs()
	filters, filtered = map[string]string{}, url.Values{}
	for _, f := range names {
		v := strings.TrimSpace(string(args.Peek(f)))
		filters[f] = v
		if v != "" {
			filtered.Set(f, v)
		}
	}
	q := url.Values{}
	for k, v := range filtered {
		q[k] = v
	}
	if c := string(args.Peek("cursor")); c != "" {
		q.Set("cursor", c)
	}
	return filters, filtered, q.Encode()
}

// okStatus is the page's status for the answer it shows.
func okStatus(a apiAnswer) int {
	if a.ok() {
		return fasthttp.StatusOK
	}
	return a.status
}

// request: GET /dashboard/requests/{requestId}, through GET
// /v1/requests/{requestId}: the record and its redacted body.
func (d *dashboardRequest) request() {
	id := d.param("requestId")
	a := d.api(fasthttp.MethodGet, "/v1/requests/{requestId}", []string{"requestId", id}, "", nil)
	view := map[string]any{}
	if a.ok() {
		view["request"] = a.body
		if r, ok := a.body["request"]; ok { // the answer may wrap the record
			view["request"] = r
		}
		d.render(fasthttp.StatusOK, &dashboard.Page{Name: "request", Title: "Request " + id, Section: "requests", View: view})
		return
	}
	d.render(a.status, &dashboard.Page{Name: "error", Title: "Request " + id, Section: "requests", Problem: a.problem})
}

// webhooks: GET /dashboard/webhooks. Endpoints and deliveries.
func (d *dashboardRequest) webhooks() { d.webhooksPage(fasthttp.StatusOK, nil, nil) }

func (d *dashboardRequest) webhooksPage(status int, problem *dashboard.Problem, view map[string]any) {
	if view == nil {
		view = map[string]any{}
	}
	if p := d.webhookLists(view, true); problem == nil {
		problem = p
	}
	d.render(status, &dashboard.Page{Name: "webhooks", Title: "Webhooks", Section: "webhooks", View: view, Problem: problem})
}

// webhookLists puts the organization's endpoints and a page of its
// deliveries (the page's cursor's, when paged) in view, as the API lists
// them; it returns why it could not.
func (d *dashboardRequest) webhookLists(v map[string]any, paged bool) *dashboard.Problem {
	if e := d.allowed(ledger.ScopeWebhooksRead); e != nil {
		return problemOfError(e)
	}
	v["endpoints"] = view(admin.WebhookEndpointList(d.s, d.m.OrgID, ledger.CursorStart, 100))
	before := ledger.CursorStart
	if c := d.ctx.QueryArgs().Peek("cursor"); paged && c != nil {
		var ok bool
		if before, ok = core.DecodeCursor(admin.ListDeliveries, string(c)); !ok {
			return problemOfError(ledger.FieldInvalid("cursor", "is not a cursor from this list; pass the nextCursor of the previous page"))
		}
	}
	deliveries := view(admin.DeliveryList(d.s, d.m.OrgID, webhooks.DeliveryFilter{}, before, 20))
	v["deliveries"] = deliveries
	if paged {
		v["next"] = dashboard.NextHref(dashboard.Base+"/webhooks", nil, deliveries)
	}
	return nil
}

// createEndpoint: POST /dashboard/webhooks: app.CreateWebhookEndpoint,
// with the form checked as POST /v1/webhooks/endpoints checks its body.
func (d *dashboardRequest) createEndpoint() {
	body := map[string]any{"url": d.form("url"), "events": strings.FieldsFunc(d.form("events"), func(r rune) bool { return r == ',' || r == ' ' })}
	if desc := d.form("description"); desc != "" {
		body["description"] = desc
	}
	in, e := formInput(d, ledger.ScopeWebhooksWrite, body, func(req *admin.CreateWebhookEndpointBody) (app.NewWebhookEndpoint, *ledger.Error) {
		return admin.NewWebhookEndpointInput(d.s, req)
	})
	if e == nil {
		e = core.ReplyError(d.s.Config.App.CreateWebhookEndpoint(d.m.caller(), in))
	}
	d.webhookDone(e, "created")
}

// updateEndpoint: POST /dashboard/webhooks/endpoints/{id}: its URL,
// description (empty: none) and events.
func (d *dashboardRequest) updateEndpoint() {
	var desc any // null removes it
	if v := d.form("description"); v != "" {
		desc = v
	}
	d.changeEndpoint(map[string]any{"url": d.form("url"), "description": desc,
		"events": strings.FieldsFunc(d.form("events"), func(r rune) bool { return r == ',' || r == ' ' })}, "saved")
}

// endpointStatus: POST /dashboard/webhooks/endpoints/{id}/status (disable
// or enable).
func (d *dashboardRequest) endpointStatus() {
	d.changeEndpoint(map[string]any{"status": d.form("status")}, "status")
}

// changeEndpoint changes the endpoint of the page's route with
// app.UpdateWebhookEndpoint, the change (in the API's shape) checked as
// PATCH /v1/webhooks/endpoints/{id} checks its body.
func (d *dashboardRequest) changeEndpoint(body map[string]any, done string) {
	in, e := formInput(d, ledger.ScopeWebhooksWrite, body, func(req *admin.UpdateWebhookEndpointBody) (app.WebhookEndpointChange, *ledger.Error) {
		return admin.WebhookEndpointChange(d.s, d.param("id"), req)
	})
	if e == nil {
		e = core.ReplyError(d.s.Config.App.UpdateWebhookEndpoint(d.m.caller(), in))
	}
	d.webhookDone(e, done)
}

// webhookDone goes back to the webhooks page saying a form is done, or
// shows its refusal there.
func (d *dashboardRequest) webhookDone(e *ledger.Error, done string) {
	if e != nil {
		d.webhooksPage(core.HTTPStatus(e.Code), problemOfError(e), nil)
		return
	}
	d.seeOther(dashboard.Base + "/webhooks?done=" + done)
}

// testEndpoint: POST /dashboard/webhooks/endpoints/{id}/test:
// app.TestWebhookEndpoint; the page says how it went.
func (d *dashboardRequest) testEndpoint() {
	e := d.allowed(ledger.ScopeWebhooksWrite)
	var delivery webhooks.Delivery
	if e == nil {
		var err error
		if delivery, err = d.s.Config.App.TestWebhookEndpoint(d.m.caller(), d.param("id")); err != nil {
			e = core.ErrorOf(err)
		}
	}
	if e != nil {
		d.webhooksPage(core.HTTPStatus(e.Code), problemOfError(e), nil)
		return
	}
	test := admin.RenderWebhookTest(d.s, &delivery)
	notice := "The test event was delivered"
	if !test.Success {
		notice = "The test event was not delivered: " + dashboard.Show(orNil(test.Error))
	}
	if test.StatusCode != nil {
		notice += " (the endpoint answered " + strconv.FormatInt(*test.StatusCode, 10) + ")"
	}
	d.render(fasthttp.StatusOK, d.webhooksView(notice+".", nil))
}

// orNil is *s, or nil for none (which dashboard.Show shows as nothing).
func orNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// webhooksView is the webhooks page with a notice and more of the view.
func (d *dashboardRequest) webhooksView(notice string, extra map[string]any) *dashboard.Page {
	view := map[string]any{}
	for k, v := range extra {
		view[k] = v
	}
	d.webhookLists(view, false)
	return &dashboard.Page{Name: "webhooks", Title: "Webhooks", Section: "webhooks", View: view, Notice: notice}
}

// rotateSecret: POST /dashboard/webhooks/endpoints/{id}/rotate:
// app.RotateWebhookSecret; the new secret is shown this once.
func (d *dashboardRequest) rotateSecret() {
	e := d.allowed(ledger.ScopeWebhooksWrite)
	var r actors.Reply
	if e == nil {
		r = d.s.Config.App.RotateWebhookSecret(d.m.caller(), d.param("id"))
		e = core.ReplyError(r)
	}
	if e != nil {
		d.webhooksPage(core.HTTPStatus(e.Code), problemOfError(e), nil)
		return
	}
	// Deliveries carry a signature by the previous secret too for the
	// ledger's overlap after the rotation (on real time, as deliveries are).
	until := core.Timestamp(d.s.Config.Actors.Now().UnixMilli() + webhooks.SecretOverlapMillis)
	d.render(fasthttp.StatusOK, d.webhooksView("The signing secret is rotated.",
		map[string]any{"secret": webhooks.EndpointOf(r.Result).Secret, "previousExpires": until}))
}

// delivery: GET /dashboard/webhooks/deliveries/{id}, through GET
// /v1/webhooks/deliveries/{id}: the delivery and its attempts.
func (d *dashboardRequest) delivery() { d.deliveryPage(d.param("id"), fasthttp.StatusOK, nil) }

func (d *dashboardRequest) deliveryPage(id string, status int, problem *dashboard.Problem) {
	title := "Delivery " + id
	e := d.allowed(ledger.ScopeWebhooksRead)
	delivery, found := webhooks.GetDelivery(d.s.Config.Actors.Reader(), d.m.OrgID, id)
	if e == nil && !found {
		e = core.NotFound("Webhook delivery")
	}
	if e != nil {
		d.render(core.HTTPStatus(e.Code), &dashboard.Page{Name: "error", Title: title, Section: "webhooks", Problem: problemOfError(e)})
		return
	}
	d.render(status, &dashboard.Page{Name: "delivery", Title: title, Section: "webhooks",
		View: map[string]any{"delivery": view(&admin.DeliveryDetailBody{Delivery: admin.RenderWebhookDeliveryDetail(d.s.PublicIDs(), &delivery)})["delivery"]}, Problem: problem})
}

// replayDelivery: POST /dashboard/webhooks/deliveries/{id}/replay:
// app.RetryWebhookDelivery. From the delivery's own page (from=delivery)
// it goes back to that page, or to the new delivery's when a success was
// sent again as a new one.
func (d *dashboardRequest) replayDelivery() {
	id := d.param("id")
	e := d.allowed(ledger.ScopeWebhooksWrite)
	var r actors.Reply
	if e == nil {
		r = d.s.Config.App.RetryWebhookDelivery(d.m.caller(), id)
		e = core.ReplyError(r)
	}
	if d.form("from") != "delivery" {
		d.webhookDone(e, "replayed")
		return
	}
	if e != nil {
		d.deliveryPage(id, core.HTTPStatus(e.Code), problemOfError(e))
		return
	}
	if next := webhooks.DeliveryOf(r.Result).ID; next != "" {
		id = next
	}
	d.seeOther(dashboard.Base + "/webhooks/deliveries/" + url.PathEscape(id) + "?done=replayed")
}

// moneyList: GET /dashboard/{payouts,…}, through the API's list with the
// same filters and cursor.
func (d *dashboardRequest) moneyList(k dashboard.MoneyKind) {
	filters, filtered, query := d.listQuery(k.Filters)
	a := d.api(fasthttp.MethodGet, "/v1/"+k.Slug, nil, query, nil)
	view := struct {
		dashboard.MoneyList
		Filters map[string]string
		Next    template.URL
	}{dashboard.MoneyList{Kind: k, List: a.body}, filters, ""}
	if a.ok() {
		view.Next = dashboard.NextHref(dashboard.Base+"/"+k.Slug, filtered, a.body)
	} else {
		view.List = nil
	}
	d.render(okStatus(a), &dashboard.Page{Name: "money", Title: k.Title, Section: k.Slug, View: view, Problem: a.problem})
}

// moneyItem: GET /dashboard/{payouts,…}/{id}, through the API's read of
// one, with its timeline.
func (d *dashboardRequest) moneyItem(k dashboard.MoneyKind) {
	id := d.param("id")
	a := d.api(fasthttp.MethodGet, "/v1/"+k.Slug+"/{id}", []string{"id", id}, "", nil)
	if !a.ok() {
		d.render(a.status, &dashboard.Page{Name: "error", Title: k.Title, Section: k.Slug, Problem: a.problem})
		return
	}
	d.render(fasthttp.StatusOK, &dashboard.Page{Name: "item", Title: id, Section: k.Slug,
		View: map[string]any{"item": a.body[k.Field], "kind": k}})
}

// ledgerFilters are the transactions' filters the ledger page passes on.
var ledgerFilters = []string{"currency", "from", "to"}

// ledgerPage: GET /dashboard/ledger, through GET /v1/transactions: each
// transaction with the running balance of its account, cursor paging.
func (d *dashboardRequest) ledgerPage() {
	filters, filtered, query := d.listQuery(ledgerFilters)
	view := map[string]any{"filters": filters}
	a := d.api(fasthttp.MethodGet, "/v1/transactions", nil, query, nil)
	if a.ok() {
		view["list"] = a.body
		view["next"] = dashboard.NextHref(dashboard.Base+"/ledger", filtered, a.body)
	}
	d.render(okStatus(a), &dashboard.Page{Name: "ledger", Title: "Ledger", Section: "ledger", View: view, Problem: a.problem})
}

// ledgerExport: GET /dashboard/ledger/export.csv, the answer of GET
// /v1/transactions/export?format=csv as a download.
func (d *dashboardRequest) ledgerExport() {
	args := d.ctx.QueryArgs()
	q := url.Values{"format": {"csv"}}
	for _, f := range ledgerFilters {
		if v := strings.TrimSpace(string(args.Peek(f))); v != "" {
			q.Set(f, v)
		}
	}
	a := d.api(fasthttp.MethodGet, "/v1/transactions/export", nil, q.Encode(), nil)
	if !a.ok() {
		view := map[string]any{"filters": map[string]string{"currency": q.Get("currency"), "from": q.Get("from"), "to": q.Get("to")}}
		d.render(a.status, &dashboard.Page{Name: "ledger", Title: "Ledger", Section: "ledger", View: view, Problem: a.problem})
		return
	}
	h := &d.ctx.Response.Header
	h.Set("Content-Disposition", string(a.response.Header.Peek("Content-Disposition")))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	d.ctx.SetContentType(string(a.response.Header.ContentType()))
	d.ctx.SetStatusCode(a.status)
	d.ctx.SetBody(a.response.Body())
}

// sandbox: GET /dashboard/sandbox, the sandbox's tools (fund a balance,
// advance the clock, simulate a deposit); on production it says there are
// none. Each form carries a fresh externalReference, so a form sent twice
// is one simulation.
func (d *dashboardRequest) sandbox() { d.sandboxPage(fasthttp.StatusOK, "", nil) }

func (d *dashboardRequest) sandboxPage(status int, notice string, problem *dashboard.Problem) {
	view := map[string]any{"reference": "dash_" + dashboard.NewNonce()}
	if !d.s.Config.Live {
		if a := d.api(fasthttp.MethodGet, "/v1/virtual-accounts", nil, "limit=100", nil); a.ok() {
			view["virtualAccounts"] = a.body
		}
		if a := d.api(fasthttp.MethodGet, "/v1/crypto-addresses", nil, "limit=100", nil); a.ok() {
			view["cryptoAddresses"] = a.body
		}
	}
	d.render(status, &dashboard.Page{Name: "sandbox", Title: "Sandbox tools", Section: "sandbox", View: view, Notice: notice, Problem: problem})
}

// sandboxTool: POST /dashboard/sandbox/{fund,clock,deposit}: the
// simulation of the same name (app.FundBalance, app.AdvanceClock, a
// deposit), the form checked as its API route checks its body.
func (d *dashboardRequest) sandboxTool() {
	var e *ledger.Error
	var notice string
	ref := d.form("externalReference")
	switch tool := d.param("tool"); {
	case tool != "fund" && tool != "clock" && tool != "deposit":
		d.render(fasthttp.StatusNotFound, &dashboard.Page{Name: "error", Title: "Sandbox tools", Section: "sandbox",
			Problem: &dashboard.Problem{Code: string(ledger.CodeNotFound), Message: "No such sandbox tool"}})
		return
	case d.s.Config.Live:
		e = core.ErrSandboxOnly
	default:
		e = d.allowed(ledger.ScopeSimulationsWrite)
	}
	switch {
	case e != nil:
	case d.param("tool") == "fund":
		body := map[string]any{"amount": d.form("amount"), "currency": d.form("currency"), "externalReference": ref}
		var in admin.FundBalanceRequest
		in, e = formInput(d, ledger.ScopeSimulationsWrite, body, admin.FundBalanceInput)
		if e == nil {
			e = core.ReplyError(d.s.Config.App.FundBalance(d.m.caller(), in.Currency, in.Amount, in.Ref))
		}
		notice = "The balance is funded with " + d.form("amount") + " " + d.form("currency") + "."
	case d.param("tool") == "clock":
		seconds, err := strconv.ParseInt(d.form("seconds"), 10, 64)
		if err != nil {
			d.sandboxPage(fasthttp.StatusBadRequest, "", &dashboard.Problem{Code: string(ledger.CodeValidation),
				Details: []dashboard.Detail{{Field: "seconds", Message: "must be a whole number of seconds"}}, Message: "Invalid request"})
			return
		}
		by, e2 := admin.AdvanceClockInput(&admin.AdvanceClockBody{Seconds: &seconds})
		e = e2
		if e == nil {
			r := d.s.Config.App.AdvanceClock(d.m.caller(), by)
			if e = core.ReplyError(r.Reply); e == nil {
				notice = "The clock now reads " + admin.RenderClock(&r).Now + "."
			}
		}
	default:
		// The API's checks of a simulation body, then its operation.
		target := d.form("target")
		crypto := strings.HasPrefix(target, "crypto:")
		body := map[string]any{"amount": d.form("amount"), "outcome": d.form("outcome"), "externalReference": ref}
		if crypto {
			body["cryptoAddressId"] = strings.TrimPrefix(target, "crypto:")
		} else {
			body["virtualAccountId"] = strings.TrimPrefix(target, "va:")
		}
		input := func(req *money.DepositRequestBody) (app.DepositInput, *ledger.Error) {
			return money.DepositInput(req, crypto)
		}
		var in app.DepositInput
		in, e = formInput(d, ledger.ScopeSimulationsWrite, body, input)
		if e == nil {
			simulate := d.s.Config.App.SimulateVirtualAccountDeposit
			if crypto {
				simulate = d.s.Config.App.SimulateCryptoDeposit
			}
			r := simulate(d.m.caller(), in)
			if e = core.ReplyError(r.Reply); e == nil {
				notice = "Deposit simulated: collection " + money.DepositCollectionID(&r.Result) + "."
			}
		}
	}
	if e != nil {
		d.sandboxPage(core.HTTPStatus(e.Code), "", problemOfError(e))
		return
	}
	d.sandboxPage(fasthttp.StatusOK, notice, nil)
}

// chartDays is how far back the home page's charts look.
const chartDays = 30

// chartPagesMax bounds the list pages (of 100) a chart reads per kind.
const chartPagesMax = 10

// charts are the home page's: payouts and collections per day over the
// last chartDays days, and the share of finished ones that succeeded per
// method (the payout's rail, the collection's), counted from the API's
// lists.
func (d *dashboardRequest) charts() []dashboard.Chart {
	// The organization's clock, which the sandbox may have moved on: the
	// resources' times are on it.
	now := time.UnixMilli(d.s.Config.Actors.Reader().OrgNow(d.m.OrgID, d.s.Config.Actors.Now().UnixMilli()))
	since := now.AddDate(0, 0, -chartDays)
	payouts, cutP := d.listSince("/v1/payouts", since)
	collections, cutC := d.listSince("/v1/collections", since)
	var outcomes []dashboard.Outcome
	add := func(items []map[string]any, methodField, fallback string) {
		for _, it := range items {
			status := dashboard.Show(it["status"])
			if status != "completed" && status != "failed" {
				continue
			}
			m, _ := dashboard.Get(it, methodField).(string)
			if m == "" {
				m, _ = dashboard.Get(it, fallback).(string)
			}
			outcomes = append(outcomes, dashboard.Outcome{Method: m, Succeeded: status == "completed"})
		}
	}
	add(payouts, "to.code", "to.code")
	add(collections, "from.code", "type")
	note := ""
	if cutP || cutC {
		note = "Counted from the latest " + strconv.Itoa(chartPagesMax*100) + " payouts and collections."
	}
	volume := dashboard.VolumePerDay("volume", "Payouts and collections per day, last 30 days", append(payouts, collections...), now, chartDays)
	volume.Note = note
	rates := dashboard.SuccessRates("success", "Success rate per method, last 30 days", outcomes)
	rates.Note = note
	return []dashboard.Chart{volume, rates}
}

// listSince reads a list, newest first, down to since or chartPagesMax
// pages; true when it stopped at the bound.
func (d *dashboardRequest) listSince(route string, since time.Time) ([]map[string]any, bool) {
	var out []map[string]any
	q := url.Values{"limit": {"100"}}
	for page := 0; page < chartPagesMax; page++ {
		a := d.api(fasthttp.MethodGet, route, nil, q.Encode(), nil)
		if !a.ok() {
			return out, false
		}
		rows, _ := a.body["data"].([]any)
		for _, r := range rows {
			m, _ := r.(map[string]any)
			created, _ := m["createdAt"].(string)
			if t, err := time.Parse(time.RFC3339Nano, created); err == nil && t.Before(since) {
				return out, false
			}
			out = append(out, m)
		}
		next, _ := a.body["nextCursor"].(string)
		if next == "" {
			return out, false
		}
		q.Set("cursor", next)
	}
	return out, true
}
