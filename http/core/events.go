package core

import (
	"fmt"
	"slices"

	"github.com/goccy/go-json/jsontext"
	json "github.com/goccy/go-json/v2"
	"github.com/valyala/fasthttp"

	"payments/ledger"
)

// Events and their payloads. An event's payload is {event, data}: data is
// the resource as its GET returns it at the moment of the event, rendered
// from the copy the event keeps with the same function that GET uses. Each
// resource registers its renderer here, one line per subject kind.

// eventRenderers maps a subject's record type to its GET rendering.
var eventRenderers = map[ledger.SubjectKind]func(ledger.Subject) any{}

// registerEventRenderer makes events about subjects of kind k renderable.
// It is called from init functions.
func RegisterEventRenderer(k ledger.SubjectKind, render func(ledger.Subject) any) {
	if _, dup := eventRenderers[k]; dup {
		panic(fmt.Sprintf("http: event renderer for subject kind %d registered twice", k))
	}
	eventRenderers[k] = render
}

// renderAs adapts a resource's render function to a subject renderer.
func RenderAs[T, R any](render func(*T) R) func(ledger.Subject) any {
	return func(s ledger.Subject) any {
		v := s.(T)
		return render(&v)
	}
}

func init() {
	RegisterEventRenderer(ledger.SubjectWebhookEndpoint, RenderAs(renderWebhookEndpoint))
	// A dispute event carries the dispute as it was; its message thread is
	// read live by GET /v1/disputes/{id} and is not part of the payload.
	RegisterEventRenderer(ledger.SubjectDispute, RenderAs(renderDispute))

	RegisterRoutes(
		Endpoint{Method: fasthttp.MethodGet, Path: "/v1/webhooks/events", Scope: ledger.ScopeWebhooksRead, H: (*Call).listEvents},
		Endpoint{Method: fasthttp.MethodGet, Path: "/v1/webhooks/events/{id}", Scope: ledger.ScopeWebhooksRead, H: (*Call).getEvent},
	)
}

type eventPayloadJSON struct {
	Event string `json:"event"`
	Data  any    `json:"data"`
}

// EventPayload renders an event as its webhook body, {event, data}. The
// same event renders to the same bytes every time, so every attempt of a
// delivery carries the same body. Package actors delivers it; cmd/payments
// wires it in.
func EventPayload(ev ledger.Event) ([]byte, error) {
	render, ok := eventRenderers[ledger.KindOfSubject(ev.Subject)]
	if !ok {
		return nil, fmt.Errorf("http: no renderer for events about subject kind %d", ledger.KindOfSubject(ev.Subject))
	}
	return json.Marshal(eventPayloadJSON{Event: ev.Type, Data: render(ev.Subject)})
}

type eventJSON struct {
	ID         string         `json:"id"`
	EventType  string         `json:"eventType"`
	ResourceID string         `json:"resourceId"`
	Payload    jsontext.Value `json:"payload"`
	CreatedAt  string         `json:"createdAt"`
}

type eventBody struct {
	Event eventJSON `json:"event"`
}

func renderEvent(ids *ledger.PublicIDs, ev *ledger.Event) eventJSON {
	payload, err := EventPayload(*ev)
	if err != nil {
		payload = []byte(`{"event":` + jsonString(ev.Type) + `,"data":null}`)
	}
	return eventJSON{ID: ids.EventID(ev.Seq), EventType: ev.Type, ResourceID: ev.ResourceID, Payload: payload, CreatedAt: Timestamp(ev.At)}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// listEvents: GET /v1/webhooks/events, every event of the organization,
// delivered or not, newest first.
func (c *Call) listEvents() {
	limit, before, e := PageParams(c.Ctx, listEvents, 20)
	if e != nil {
		c.Fail(e)
		return
	}
	var f ledger.EventFilter
	if v, ok := Query(c.Ctx, "eventType"); ok {
		if !slices.Contains(ledger.EventTypes, v) && v != ledger.EventWebhookTest {
			c.Fail(ledger.FieldInvalid("eventType", "is not an event type"))
			return
		}
		f.Type = v
	}
	f.ResourceID, _ = Query(c.Ctx, "resourceId")
	var page ledger.Page[ledger.Event]
	page = c.Server.Config.Actors.Reader().Events(c.Org, f, before, limit)
	ids := c.Server.PublicIDs()
	c.OK(fasthttp.StatusOK, NewList(listEvents, page, func(ev *ledger.Event) eventJSON { return renderEvent(ids, ev) }))
}

// getEvent: GET /v1/webhooks/events/{id}.
func (c *Call) getEvent() {
	ids := c.Server.PublicIDs()
	if ev, ok := Lookup(c, "id", "Webhook event", func(st *ledger.Reader, id string) (ledger.Event, bool) {
		return st.Event(c.Org, ids.InternalEventID(id))
	}); ok {
		c.OK(fasthttp.StatusOK, &eventBody{renderEvent(ids, &ev)})
	}
}

// EventRenderable says whether events about subjects of kind k render: a
// renderer is registered for it.
func EventRenderable(k ledger.SubjectKind) bool {
	_, ok := eventRenderers[k]
	return ok
}
