package core

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/actors/app"
	"payments/ledger"
)

// Webhook endpoints, their signing secrets, test sends and deliveries. The
// delivery itself runs in package actors, on the leader.

// Cursor kinds of the webhook lists.
const (
	listEvents           listKind = 'E'
	listWebhookEndpoints listKind = 'H'
	listDeliveries       listKind = 'D'
)

// webhookDescriptionLenMax bounds an endpoint's description, in
// characters.
const webhookDescriptionLenMax = 500

func init() {
	registerRoutes(
		endpoint{fasthttp.MethodPost, "/v1/webhooks/endpoints", ledger.ScopeWebhooksWrite, (*call).createWebhookEndpoint, nil},
		endpoint{fasthttp.MethodGet, "/v1/webhooks/endpoints", ledger.ScopeWebhooksRead, (*call).listWebhookEndpoints, nil},
		endpoint{fasthttp.MethodGet, "/v1/webhooks/endpoints/{id}", ledger.ScopeWebhooksRead, (*call).getWebhookEndpoint, nil},
		endpoint{fasthttp.MethodPatch, "/v1/webhooks/endpoints/{id}", ledger.ScopeWebhooksWrite, (*call).updateWebhookEndpoint, nil},
		endpoint{fasthttp.MethodDelete, "/v1/webhooks/endpoints/{id}", ledger.ScopeWebhooksWrite, (*call).deleteWebhookEndpoint, nil},
		endpoint{fasthttp.MethodPost, "/v1/webhooks/endpoints/{id}/test", ledger.ScopeWebhooksWrite, (*call).testWebhookEndpoint, nil},
		endpoint{fasthttp.MethodGet, "/v1/webhooks/signing-secret/{endpointId}", ledger.ScopeWebhooksRead, (*call).getSigningSecret, nil},
		endpoint{fasthttp.MethodPost, "/v1/webhooks/signing-secret/{endpointId}/rotate", ledger.ScopeWebhooksWrite, (*call).rotateSigningSecret, nil},
		endpoint{fasthttp.MethodGet, "/v1/webhooks/deliveries", ledger.ScopeWebhooksRead, (*call).listDeliveries, nil},
		endpoint{fasthttp.MethodGet, "/v1/webhooks/deliveries/{id}", ledger.ScopeWebhooksRead, (*call).getDelivery, nil},
		endpoint{fasthttp.MethodPost, "/v1/webhooks/deliveries/{id}/retry", ledger.ScopeWebhooksWrite, (*call).retryDelivery, nil},
	)
}

type webhookEndpointJSON struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	Description    *string  `json:"description"`
	Events         []string `json:"events"`
	Status         string   `json:"status"`
	FailureCount   int64    `json:"failureCount"`
	DisabledReason *string  `json:"disabledReason"`
	CreatedAt      string   `json:"createdAt"`
	UpdatedAt      string   `json:"updatedAt"`
}

func renderWebhookEndpoint(e *ledger.WebhookEndpoint) webhookEndpointJSON {
	events := e.Events
	if events == nil {
		events = []string{}
	}
	return webhookEndpointJSON{
		ID: e.ID, URL: e.URL, Description: optional(e.Description), Events: events, Status: e.Status,
		FailureCount: e.FailureCount, DisabledReason: optional(e.DisabledReason),
		CreatedAt: timestamp(e.CreatedAt), UpdatedAt: timestamp(e.UpdatedAt),
	}
}

type webhookDeliveryJSON struct {
	ID             string  `json:"id"`
	EventID        string  `json:"eventId"`
	EventType      *string `json:"eventType"`
	ResourceID     *string `json:"resourceId"`
	EndpointID     string  `json:"endpointId"`
	Status         string  `json:"status"`
	Attempts       int64   `json:"attempts"`
	LastStatusCode *int64  `json:"lastStatusCode"`
	LastError      *string `json:"lastError"`
	NextAttemptAt  *string `json:"nextAttemptAt"`
	CompletedAt    *string `json:"completedAt"`
	CreatedAt      string  `json:"createdAt"`
}

func renderWebhookDelivery(ids *ledger.PublicIDs, d *ledger.WebhookDelivery) webhookDeliveryJSON {
	out := webhookDeliveryJSON{
		ID: d.ID, EventID: ids.EventID(d.EventSeq), EventType: optional(d.EventType), ResourceID: optional(d.ResourceID),
		EndpointID: d.EndpointID, Status: d.Status.String(), Attempts: d.Attempts,
		LastError: optional(d.LastError), CompletedAt: optionalTimestamp(d.CompletedAt), CreatedAt: timestamp(d.CreatedAt),
	}
	if d.LastStatusCode != 0 {
		code := d.LastStatusCode
		out.LastStatusCode = &code
	}
	if d.Status == ledger.DeliveryPending {
		out.NextAttemptAt = optionalTimestamp(d.NextAttemptAt)
	}
	return out
}

// deliveryAttemptJSON is one attempt in a delivery's attemptHistory.
type deliveryAttemptJSON struct {
	Attempt     int64   `json:"attempt"`
	Success     bool    `json:"success"`
	StatusCode  *int64  `json:"statusCode"`
	Error       *string `json:"error"`
	StartedAt   *string `json:"startedAt"`
	CompletedAt string  `json:"completedAt"`
	DurationMs  *int64  `json:"durationMs"`
}

// webhookDeliveryDetailJSON is a delivery as GET
// /v1/webhooks/deliveries/{id} shows it: with its latest attempts, newest
// first (at most ledger.WebhookAttemptsKept; attempts counts them all).
type webhookDeliveryDetailJSON struct {
	webhookDeliveryJSON
	AttemptHistory []deliveryAttemptJSON `json:"attemptHistory"`
}

func renderWebhookDeliveryDetail(ids *ledger.PublicIDs, d *ledger.WebhookDelivery) webhookDeliveryDetailJSON {
	out := webhookDeliveryDetailJSON{renderWebhookDelivery(ids, d), make([]deliveryAttemptJSON, 0, len(d.History))}
	for i := len(d.History) - 1; i >= 0; i-- {
		a := &d.History[i]
		j := deliveryAttemptJSON{Attempt: a.Number, Success: a.Succeeded, Error: optional(a.Error), CompletedAt: timestamp(a.At)}
		if a.StatusCode != 0 {
			code := a.StatusCode
			j.StatusCode = &code
		}
		if a.StartedAt != 0 {
			ms := a.At - a.StartedAt
			j.StartedAt, j.DurationMs = optionalTimestamp(a.StartedAt), &ms
		}
		out.AttemptHistory = append(out.AttemptHistory, j)
	}
	return out
}

type webhookEndpointBody struct {
	Endpoint webhookEndpointJSON `json:"endpoint"`
}

type deliveryDetailBody struct {
	Delivery webhookDeliveryDetailJSON `json:"delivery"`
}

type webhookDeliveryBody struct {
	Delivery webhookDeliveryJSON `json:"delivery"`
}

type signingSecretBody struct {
	SigningSecret string `json:"signingSecret"`
}

// nullableString is a request field that may be absent, null or a string.
type nullableString struct {
	set   bool
	null  bool
	value string
}

func (n *nullableString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == 'n' {
		*n = nullableString{set: true, null: true}
		return nil
	}
	var s string
	if err := decodeBody(b, &s); err != nil || len(b) == 0 || b[0] != '"' {
		return fieldMessage("must be a string or null")
	}
	*n = nullableString{set: true, value: s}
	return nil
}

type createWebhookEndpointBody struct {
	URL         *string  `json:"url"`
	Description *string  `json:"description"`
	Events      []string `json:"events"`
}

type updateWebhookEndpointBody struct {
	URL         *string        `json:"url"`
	Description nullableString `json:"description"`
	Events      *[]string      `json:"events"`
	Status      *string        `json:"status"`
}

// checkWebhookURL checks an endpoint URL against the stack's policy,
// resolving its host now (it is checked again at every delivery).
func (s *Server) checkWebhookURL(p *problems, v *string) string {
	u := p.text("url", v, true, actors.WebhookURLLenMax)
	if u == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.cfg.Actors.WebhookPolicy().Check(ctx, u); err != nil {
		msg := err.Error()
		if errors.Is(err, actors.ErrWebhookURL) {
			msg = strings.TrimPrefix(msg, actors.ErrWebhookURL.Error()+": ")
		} else {
			msg = "could not be checked: " + msg
		}
		p.add("url", msg)
		return ""
	}
	return u
}

func checkWebhookEvents(p *problems, events []string) {
	if msg := ledger.ValidWebhookEvents(events); msg != "" {
		if strings.Contains(msg, "is not an event type") {
			msg += "; event types: " + strings.Join(ledger.EventTypes, ", ")
		}
		p.add("events", msg)
	}
}

// createWebhookEndpoint: POST /v1/webhooks/endpoints. Its signing secret
// is fetched from the signing-secret endpoint.
func (c *call) createWebhookEndpoint() {
	var req createWebhookEndpointBody
	if !c.decode(&req) {
		return
	}
	in, e := c.s.newWebhookEndpointInput(&req)
	if e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.CreateWebhookEndpoint(c.caller(), in)
	c.created(r, func(res *ledger.Result) any { return &webhookEndpointBody{renderWebhookEndpoint(res.WebhookEndpoint)} })
}

// newWebhookEndpointInput checks an endpoint to create (the API's request,
// or the dashboard's form in its shape).
func (s *Server) newWebhookEndpointInput(req *createWebhookEndpointBody) (app.NewWebhookEndpoint, *ledger.Error) {
	var p problems
	in := app.NewWebhookEndpoint{URL: s.checkWebhookURL(&p, req.URL), Events: req.Events}
	in.Description = p.text("description", req.Description, false, webhookDescriptionLenMax)
	if req.Events == nil {
		p.add("events", "is required: a list of event types, or [\"*\"] for all")
	} else {
		checkWebhookEvents(&p, req.Events)
	}
	return in, p.err()
}

// listWebhookEndpoints: GET /v1/webhooks/endpoints.
func (c *call) listWebhookEndpoints() {
	limit, before, e := pageParams(c.ctx, listWebhookEndpoints, 20)
	if e != nil {
		c.fail(e)
		return
	}
	c.ok(fasthttp.StatusOK, c.s.webhookEndpointList(c.org, before, limit))
}

// webhookEndpointList is a page of an organization's endpoints, as GET
// /v1/webhooks/endpoints lists them.
func (s *Server) webhookEndpointList(org string, before ledger.Cursor, limit int) listBody[webhookEndpointJSON] {
	return newList(listWebhookEndpoints, s.cfg.Actors.Reader().WebhookEndpoints(org, before, limit), renderWebhookEndpoint)
}

// webhookEndpoint finds the caller's endpoint named by the path parameter.
func (c *call) webhookEndpoint(param string) (ledger.WebhookEndpoint, bool) {
	return lookup(c, param, "Webhook endpoint", func(st *ledger.Reader, id string) (ledger.WebhookEndpoint, bool) {
		return st.WebhookEndpoint(c.org, id)
	})
}

// getWebhookEndpoint: GET /v1/webhooks/endpoints/{id}.
func (c *call) getWebhookEndpoint() {
	if ep, ok := c.webhookEndpoint("id"); ok {
		c.ok(fasthttp.StatusOK, &webhookEndpointBody{renderWebhookEndpoint(&ep)})
	}
}

// updateWebhookEndpoint: PATCH /v1/webhooks/endpoints/{id}. Setting status
// active re-enables a disabled endpoint and clears its failure count.
func (c *call) updateWebhookEndpoint() {
	id, e := pathParam(c.ctx, "id")
	if e != nil {
		c.fail(e)
		return
	}
	var req updateWebhookEndpointBody
	if !c.decode(&req) {
		return
	}
	in, e := c.s.webhookEndpointChange(id, &req)
	if e != nil {
		c.fail(e)
		return
	}
	c.reply(c.s.cfg.App.UpdateWebhookEndpoint(c.caller(), in), fasthttp.StatusOK, func(res *ledger.Result) any {
		return &webhookEndpointBody{renderWebhookEndpoint(res.WebhookEndpoint)}
	})
}

// webhookEndpointChange checks a change of endpoint id (the API's request,
// or the dashboard's form in its shape).
func (s *Server) webhookEndpointChange(id string, req *updateWebhookEndpointBody) (app.WebhookEndpointChange, *ledger.Error) {
	in := app.WebhookEndpointChange{ID: id}
	var p problems
	if req.URL != nil {
		in.SetURL, in.URL = true, s.checkWebhookURL(&p, req.URL)
	}
	if req.Description.set {
		in.SetDescription = true
		if !req.Description.null {
			in.Description = p.text("description", &req.Description.value, false, webhookDescriptionLenMax)
		}
	}
	if req.Events != nil {
		in.SetEvents, in.Events = true, *req.Events
		checkWebhookEvents(&p, in.Events)
	}
	if req.Status != nil {
		in.SetStatus, in.Status = true, *req.Status
		if in.Status != ledger.WebhookActive && in.Status != ledger.WebhookDisabled {
			p.add("status", "must be active or disabled")
		}
	}
	if !in.SetURL && !in.SetDescription && !in.SetEvents && !in.SetStatus && len(p) == 0 {
		p.add("body", "must change at least one of url, description, events, status")
	}
	return in, p.err()
}

// deleteWebhookEndpoint: DELETE /v1/webhooks/endpoints/{id}; 204. Its
// pending deliveries fail with endpoint_unavailable.
func (c *call) deleteWebhookEndpoint() {
	id, e := pathParam(c.ctx, "id")
	if e != nil {
		c.fail(e)
		return
	}
	c.answer(c.s.cfg.App.DeleteWebhookEndpoint(c.caller(), id), func(*ledger.Result) {
		c.ctx.Response.ResetBody()
		c.ctx.SetStatusCode(fasthttp.StatusNoContent)
	})
}

// getSigningSecret: GET /v1/webhooks/signing-secret/{endpointId}.
func (c *call) getSigningSecret() {
	c.noStore()
	if ep, ok := c.webhookEndpoint("endpointId"); ok {
		c.ok(fasthttp.StatusOK, &signingSecretBody{ep.Secret})
	}
}

// rotateSigningSecret: POST /v1/webhooks/signing-secret/{endpointId}/rotate.
// For a day after, deliveries carry a signature by each secret.
func (c *call) rotateSigningSecret() {
	c.noStore()
	id, e := pathParam(c.ctx, "endpointId")
	if e != nil {
		c.fail(e)
		return
	}
	c.reply(c.s.cfg.App.RotateWebhookSecret(c.caller(), id), fasthttp.StatusOK, func(res *ledger.Result) any {
		return &signingSecretBody{res.WebhookEndpoint.Secret}
	})
}

type webhookTestJSON struct {
	Success    bool    `json:"success"`
	StatusCode *int64  `json:"statusCode"`
	Error      *string `json:"error"`
	DeliveryID string  `json:"deliveryId"`
}

type webhookTestBody struct {
	Test webhookTestJSON `json:"test"`
}

// testWebhookEndpoint: POST /v1/webhooks/endpoints/{id}/test. It records a
// webhook.test event with one delivery to this endpoint, attempts it now,
// and answers 200 with the outcome (success false when the receiver
// failed). The test is never retried.
func (c *call) testWebhookEndpoint() {
	id, e := pathParam(c.ctx, "id")
	if e != nil {
		c.fail(e)
		return
	}
	d, err := c.s.cfg.App.TestWebhookEndpoint(c.caller(), id)
	if err != nil {
		c.fail(errorOf(err))
		return
	}
	c.ok(fasthttp.StatusOK, &webhookTestBody{c.s.renderWebhookTest(&d)})
}

// renderWebhookTest is an endpoint test's outcome: its delivery as
// recorded after the attempt.
func (s *Server) renderWebhookTest(d *ledger.WebhookDelivery) webhookTestJSON {
	out := webhookTestJSON{Success: d.Status == ledger.DeliverySuccess, DeliveryID: d.ID}
	if d.LastStatusCode != 0 {
		code := d.LastStatusCode
		out.StatusCode = &code
	}
	switch d.Status {
	case ledger.DeliveryPending:
		out.Error = optional("The attempt's outcome is not recorded yet; see GET /v1/webhooks/deliveries?eventId=" + s.publicIDs().EventID(d.EventSeq))
	case ledger.DeliveryFailed:
		out.Error = optional(firstNonEmpty(d.LastError, "failed"))
	}
	return out
}

// listDeliveries: GET /v1/webhooks/deliveries, filtered by endpointId,
// eventId and status.
func (c *call) listDeliveries() {
	limit, before, e := pageParams(c.ctx, listDeliveries, 20)
	if e != nil {
		c.fail(e)
		return
	}
	var f ledger.DeliveryFilter
	f.EndpointID, _ = query(c.ctx, "endpointId")
	f.EventID, _ = query(c.ctx, "eventId")
	f.EventID = c.s.publicIDs().InternalEventID(f.EventID)
	if v, ok := query(c.ctx, "status"); ok {
		st, known := ledger.ParseDeliveryStatus(v)
		if !known {
			c.fail(ledger.FieldInvalid("status", "must be one of pending, success, failed"))
			return
		}
		f.Status = st
	}
	c.ok(fasthttp.StatusOK, c.s.deliveryList(c.org, f, before, limit))
}

// deliveryList is a page of an organization's deliveries, as GET
// /v1/webhooks/deliveries lists them.
func (s *Server) deliveryList(org string, f ledger.DeliveryFilter, before ledger.Cursor, limit int) listBody[webhookDeliveryJSON] {
	ids := s.publicIDs()
	return newList(listDeliveries, s.cfg.Actors.Reader().WebhookDeliveries(org, f, before, limit),
		func(d *ledger.WebhookDelivery) webhookDeliveryJSON { return renderWebhookDelivery(ids, d) })
}

// getDelivery: GET /v1/webhooks/deliveries/{id}, with the delivery's
// attempt history.
func (c *call) getDelivery() {
	if d, ok := lookup(c, "id", "Webhook delivery", func(st *ledger.Reader, id string) (ledger.WebhookDelivery, bool) {
		return st.WebhookDelivery(c.org, id)
	}); ok {
		c.ok(fasthttp.StatusOK, &deliveryDetailBody{renderWebhookDeliveryDetail(c.s.publicIDs(), &d)})
	}
}

// retryDelivery: POST /v1/webhooks/deliveries/{id}/retry. A pending or
// failed delivery starts a fresh schedule in place; a successful one is
// sent again as a new delivery, so its history stays.
func (c *call) retryDelivery() {
	id, e := pathParam(c.ctx, "id")
	if e != nil {
		c.fail(e)
		return
	}
	r := c.s.cfg.App.RetryWebhookDelivery(c.caller(), id)
	c.reply(r, fasthttp.StatusOK, func(res *ledger.Result) any {
		return &webhookDeliveryBody{renderWebhookDelivery(c.s.publicIDs(), res.WebhookDelivery)}
	})
}
