package admin

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/publicids"
	"payments/ledger/webhooks"
)

// Webhook endpoints, their signing secrets, test sends and deliveries. The
// delivery itself runs in package actors, on the leader.

// Cursor kinds of the webhook lists.
const (
	listEventsKind           core.ListKind = 'E'
	listWebhookEndpointsKind core.ListKind = 'H'
	ListDeliveries           core.ListKind = 'D'
)

// webhookDescriptionLenMax bounds an endpoint's description, in
// characters.
const webhookDescriptionLenMax = 500

func init() {
	core.RegisterRoutes(core.Resource("/v1/webhooks/endpoints", ledger.ScopeWebhooksRead, ledger.ScopeWebhooksWrite, core.Handlers{
		Create: createWebhookEndpoint,
		List:   listWebhookEndpoints,
		Get:    core.ByID("Webhook endpoint", webhooks.GetEndpoint, webhookEndpointGetBody),
		Update: updateWebhookEndpoint,
		Delete: deleteWebhookEndpoint,
	})...)
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/webhooks/endpoints/{id}/test", Scope: ledger.ScopeWebhooksWrite, H: testWebhookEndpoint},
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/webhooks/signing-secret/{endpointId}", Scope: ledger.ScopeWebhooksRead, H: getSigningSecret},
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/webhooks/signing-secret/{endpointId}/rotate", Scope: ledger.ScopeWebhooksWrite, H: rotateSigningSecret},
		core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/webhooks/deliveries/{id}/retry", Scope: ledger.ScopeWebhooksWrite, H: retryDelivery},
	)
	core.RegisterRoutes(core.Resource("/v1/webhooks/deliveries", ledger.ScopeWebhooksRead, ledger.ScopeWebhooksWrite, core.Handlers{
		List: listDeliveries, Get: getDelivery,
	})...)
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

func renderWebhookEndpoint(e *webhooks.Endpoint) webhookEndpointJSON {
	events := e.Events
	if events == nil {
		events = []string{}
	}
	return webhookEndpointJSON{
		ID: e.ID, URL: e.URL, Description: core.Optional(e.Description), Events: events, Status: e.Status,
		FailureCount: e.FailureCount, DisabledReason: core.Optional(e.DisabledReason),
		CreatedAt: core.Timestamp(e.CreatedAt), UpdatedAt: core.Timestamp(e.UpdatedAt),
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

func renderWebhookDelivery(ids *publicids.IDs, d *webhooks.Delivery) webhookDeliveryJSON {
	out := webhookDeliveryJSON{
		ID: d.ID, EventID: ids.EventID(d.EventSeq), EventType: core.Optional(d.EventType), ResourceID: core.Optional(d.ResourceID),
		EndpointID: d.EndpointID, Status: d.Status.String(), Attempts: d.Attempts,
		LastError: core.Optional(d.LastError), CompletedAt: core.OptionalTimestamp(d.CompletedAt), CreatedAt: core.Timestamp(d.CreatedAt),
	}
	if d.LastStatusCode != 0 {
		code := d.LastStatusCode
		out.LastStatusCode = &code
	}
	if d.Status == webhooks.Pending {
		out.NextAttemptAt = core.OptionalTimestamp(d.NextAttemptAt)
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
// first (at most webhooks.AttemptsKept; attempts counts them all).
type webhookDeliveryDetailJSON struct {
	webhookDeliveryJSON
	AttemptHistory []deliveryAttemptJSON `json:"attemptHistory"`
}

func RenderWebhookDeliveryDetail(ids *publicids.IDs, d *webhooks.Delivery) webhookDeliveryDetailJSON {
	out := webhookDeliveryDetailJSON{renderWebhookDelivery(ids, d), make([]deliveryAttemptJSON, 0, len(d.History))}
	for i := len(d.History) - 1; i >= 0; i-- {
		a := &d.History[i]
		j := deliveryAttemptJSON{Attempt: a.Number, Success: a.Succeeded, Error: core.Optional(a.Error), CompletedAt: core.Timestamp(a.At)}
		if a.StatusCode != 0 {
			code := a.StatusCode
			j.StatusCode = &code
		}
		if a.StartedAt != 0 {
			ms := a.At - a.StartedAt
			j.StartedAt, j.DurationMs = core.OptionalTimestamp(a.StartedAt), &ms
		}
		out.AttemptHistory = append(out.AttemptHistory, j)
	}
	return out
}

type DeliveryDetailBody struct {
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
	if err := core.DecodeBody(b, &s); err != nil || len(b) == 0 || b[0] != '"' {
		return core.FieldMessage("must be a string or null")
	}
	*n = nullableString{set: true, value: s}
	return nil
}

type CreateWebhookEndpointBody struct {
	URL         *string  `json:"url"`
	Description *string  `json:"description"`
	Events      []string `json:"events"`
}

type UpdateWebhookEndpointBody struct {
	URL         *string        `json:"url"`
	Description nullableString `json:"description"`
	Events      *[]string      `json:"events"`
	Status      *string        `json:"status"`
}

// checkWebhookURL checks an endpoint URL against the stack's policy,
// resolving its host now (it is checked again at every delivery).
func checkWebhookURL(s *core.Server, p *core.Problems, v *string) string {
	u := p.Text("url", v, true, actors.WebhookURLLenMax)
	if u == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Config.Actors.WebhookPolicy().Check(ctx, u); err != nil {
		msg := err.Error()
		if errors.Is(err, actors.ErrWebhookURL) {
			msg = strings.TrimPrefix(msg, actors.ErrWebhookURL.Error()+": ")
		} else {
			msg = "could not be checked: " + msg
		}
		p.Add("url", msg)
		return ""
	}
	return u
}

func checkWebhookEvents(p *core.Problems, events []string) {
	if msg := webhooks.ValidEvents(events); msg != "" {
		if strings.Contains(msg, "is not an event type") {
			msg += "; event types: " + strings.Join(ledger.EventTypes, ", ")
		}
		p.Add("events", msg)
	}
}

// createWebhookEndpoint: POST /v1/webhooks/endpoints. Its signing secret
// is fetched from the signing-secret endpoint.
func createWebhookEndpoint(c *core.Call) {
	input := func(req *CreateWebhookEndpointBody) (app.NewWebhookEndpoint, *ledger.Error) {
		return NewWebhookEndpointInput(c.Server, req)
	}
	core.Create(c, input, c.Server.Config.App.CreateWebhookEndpoint, webhookEndpointResult)
}

// newWebhookEndpointInput checks an endpoint to create (the API's request,
// or the dashboard's form in its shape).
func NewWebhookEndpointInput(s *core.Server, req *CreateWebhookEndpointBody) (app.NewWebhookEndpoint, *ledger.Error) {
	var p core.Problems
	in := app.NewWebhookEndpoint{URL: checkWebhookURL(s, &p, req.URL), Events: req.Events}
	in.Description = p.Text("description", req.Description, false, webhookDescriptionLenMax)
	if req.Events == nil {
		p.Add("events", "is required: a list of event types, or [\"*\"] for all")
	} else {
		checkWebhookEvents(&p, req.Events)
	}
	return in, p.Err()
}

// listWebhookEndpoints: GET /v1/webhooks/endpoints.
func listWebhookEndpoints(c *core.Call) {
	limit, before, ok := c.Page(listWebhookEndpointsKind)
	if !ok {
		return
	}
	c.OK(fasthttp.StatusOK, WebhookEndpointList(c.Server, c.Org, before, limit))
}

// webhookEndpointList is a page of an organization's endpoints, as GET
// /v1/webhooks/endpoints lists them.
func WebhookEndpointList(s *core.Server, org string, before ledger.Cursor, limit int) core.ListBody[webhookEndpointJSON] {
	page := core.PinnedPage(s, func(st *ledger.Reader) ledger.Page[webhooks.Endpoint] {
		return webhooks.ListEndpoints(st, org, before, limit)
	})
	return core.NewList(listWebhookEndpointsKind, page, renderWebhookEndpoint)
}

// webhookEndpointGetBody and webhookEndpointResult are the bodies of a
// single endpoint's GET and of its create or change.
var webhookEndpointGetBody, webhookEndpointResult = core.Bodies("endpoint", webhooks.EndpointOf, renderWebhookEndpoint)

// updateWebhookEndpoint: PATCH /v1/webhooks/endpoints/{id}. Setting status
// active re-enables a disabled endpoint and clears its failure count.
func updateWebhookEndpoint(c *core.Call) {
	core.Update(c, "id", func(id string, req *UpdateWebhookEndpointBody) (app.WebhookEndpointChange, *ledger.Error) {
		return WebhookEndpointChange(c.Server, id, req)
	}, c.Server.Config.App.UpdateWebhookEndpoint, webhookEndpointResult)
}

// webhookEndpointChange checks a change of endpoint id (the API's request,
// or the dashboard's form in its shape).
func WebhookEndpointChange(s *core.Server, id string, req *UpdateWebhookEndpointBody) (app.WebhookEndpointChange, *ledger.Error) {
	in := app.WebhookEndpointChange{ID: id}
	var p core.Problems
	if req.URL != nil {
		in.SetURL, in.URL = true, checkWebhookURL(s, &p, req.URL)
	}
	if req.Description.set {
		in.SetDescription = true
		if !req.Description.null {
			in.Description = p.Text("description", &req.Description.value, false, webhookDescriptionLenMax)
		}
	}
	if req.Events != nil {
		in.SetEvents, in.Events = true, *req.Events
		checkWebhookEvents(&p, in.Events)
	}
	if req.Status != nil {
		in.SetStatus, in.Status = true, *req.Status
		if in.Status != webhooks.Active && in.Status != webhooks.Disabled {
			p.Add("status", "must be active or disabled")
		}
	}
	if !in.SetURL && !in.SetDescription && !in.SetEvents && !in.SetStatus && len(p) == 0 {
		p.Add("body", "must change at least one of url, description, events, status")
	}
	return in, p.Err()
}

// deleteWebhookEndpoint: DELETE /v1/webhooks/endpoints/{id}; 204. Its
// pending deliveries fail with endpoint_unavailable.
func deleteWebhookEndpoint(c *core.Call) {
	core.Delete(c, "id", c.Server.Config.App.DeleteWebhookEndpoint)
}

// getSigningSecret: GET /v1/webhooks/signing-secret/{endpointId}.
func getSigningSecret(c *core.Call) {
	c.NoStore()
	core.Get(c, "endpointId", "Webhook endpoint", webhooks.GetEndpoint, func(ep *webhooks.Endpoint) *signingSecretBody {
		return &signingSecretBody{ep.Secret}
	})
}

// rotateSigningSecret: POST /v1/webhooks/signing-secret/{endpointId}/rotate.
// For a day after, deliveries carry a signature by each secret.
func rotateSigningSecret(c *core.Call) {
	c.NoStore()
	core.Act(c, "endpointId", c.Server.Config.App.RotateWebhookSecret, func(res *ledger.Result) any {
		return &signingSecretBody{webhooks.EndpointOf(*res).Secret}
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
func testWebhookEndpoint(c *core.Call) {
	id, ok := c.Param("id")
	if !ok {
		return
	}
	d, err := c.Server.Config.App.TestWebhookEndpoint(c.Caller(), id)
	if err != nil {
		c.Fail(core.ErrorOf(err))
		return
	}
	c.OK(fasthttp.StatusOK, &webhookTestBody{RenderWebhookTest(c.Server, &d)})
}

// renderWebhookTest is an endpoint test's outcome: its delivery as
// recorded after the attempt.
func RenderWebhookTest(s *core.Server, d *webhooks.Delivery) webhookTestJSON {
	out := webhookTestJSON{Success: d.Status == webhooks.Success, DeliveryID: d.ID}
	if d.LastStatusCode != 0 {
		code := d.LastStatusCode
		out.StatusCode = &code
	}
	switch d.Status {
	case webhooks.Pending:
		out.Error = core.Optional("The attempt's outcome is not recorded yet; see GET /v1/webhooks/deliveries?eventId=" + s.PublicIDs().EventID(d.EventSeq))
	case webhooks.Failed:
		out.Error = core.Optional(core.FirstNonEmpty(d.LastError, "failed"))
	}
	return out
}

// listDeliveries: GET /v1/webhooks/deliveries, filtered by endpointId,
// eventId and status.
func listDeliveries(c *core.Call) {
	limit, before, ok := c.Page(ListDeliveries)
	if !ok {
		return
	}
	var f webhooks.DeliveryFilter
	f.EndpointID, _ = core.Query(c.Ctx, "endpointId")
	f.EventID, _ = core.Query(c.Ctx, "eventId")
	f.EventID = c.Server.PublicIDs().InternalEventID(f.EventID)
	var p core.Problems
	f.Status = core.QueryStatus(c, &p, webhooks.ParseDeliveryStatus, "must be one of pending, success, failed")
	if c.Refused(p) {
		return
	}
	c.OK(fasthttp.StatusOK, DeliveryList(c.Server, c.Org, f, before, limit))
}

// deliveryList is a page of an organization's deliveries, as GET
// /v1/webhooks/deliveries lists them.
func DeliveryList(s *core.Server, org string, f webhooks.DeliveryFilter, before ledger.Cursor, limit int) core.ListBody[webhookDeliveryJSON] {
	ids := s.PublicIDs()
	page := core.PinnedPage(s, func(st *ledger.Reader) ledger.Page[webhooks.Delivery] {
		return webhooks.ListDeliveries(st, org, f, before, limit)
	})
	return core.NewList(ListDeliveries, page,
		func(d *webhooks.Delivery) webhookDeliveryJSON { return renderWebhookDelivery(ids, d) })
}

// getDelivery: GET /v1/webhooks/deliveries/{id}, with the delivery's
// attempt history.
func getDelivery(c *core.Call) {
	core.Get(c, "id", "Webhook delivery", webhooks.GetDelivery, func(d *webhooks.Delivery) *DeliveryDetailBody {
		return &DeliveryDetailBody{RenderWebhookDeliveryDetail(c.Server.PublicIDs(), d)}
	})
}

// retryDelivery: POST /v1/webhooks/deliveries/{id}/retry. A pending or
// failed delivery starts a fresh schedule in place; a successful one is
// sent again as a new delivery, so its history stays.
func retryDelivery(c *core.Call) {
	core.Act(c, "id", c.Server.Config.App.RetryWebhookDelivery, func(res *ledger.Result) any {
		return &webhookDeliveryBody{renderWebhookDelivery(c.Server.PublicIDs(), webhooks.DeliveryOf(*res))}
	})
}
