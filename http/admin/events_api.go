package admin

import (
	"slices"

	"github.com/goccy/go-json/jsontext"
	"github.com/valyala/fasthttp"

	"payments/http/core"
	"payments/ledger"
	"payments/ledger/disputes"
	"payments/ledger/publicids"
	"payments/ledger/webhooks"
)

func init() {
	core.RegisterEventRenderer(webhooks.SubjectEndpoint, core.RenderAs(renderWebhookEndpoint))
	// A dispute event carries the dispute as it was; its message thread is
	// read live by GET /v1/disputes/{id} and is not part of the payload.
	core.RegisterEventRenderer(disputes.SubjectDispute, core.RenderAs(renderDispute))

	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/webhooks/events", Scope: ledger.ScopeWebhooksRead, H: listEvents},
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/webhooks/events/{id}", Scope: ledger.ScopeWebhooksRead, H: getEvent},
	)
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

func renderEvent(ids *publicids.IDs, ev *ledger.Event) eventJSON {
	payload, err := core.EventPayload(*ev)
	if err != nil {
		payload = []byte(`{"event":` + core.JSONString(ev.Type) + `,"data":null}`)
	}
	return eventJSON{ID: ids.EventID(ev.Seq), EventType: ev.Type, ResourceID: ev.ResourceID, Payload: payload, CreatedAt: core.Timestamp(ev.At)}
}

// listEvents: GET /v1/webhooks/events, every event of the organization,
// delivered or not, newest first.
func listEvents(c *core.Call) {
	ids := c.Server.PublicIDs()
	core.List(c, listEventsKind, eventFilter, (*ledger.Reader).Events, func(ev *ledger.Event) eventJSON { return renderEvent(ids, ev) })
}

// eventFilter reads GET /v1/webhooks/events' filters: eventType and
// resourceId.
func eventFilter(c *core.Call) (ledger.EventFilter, *ledger.Error) {
	var f ledger.EventFilter
	if v, ok := core.Query(c.Ctx, "eventType"); ok {
		if !slices.Contains(ledger.EventTypes, v) && v != webhooks.EventTest {
			return f, ledger.FieldInvalid("eventType", "is not an event type")
		}
		f.Type = v
	}
	f.ResourceID, _ = core.Query(c.Ctx, "resourceId")
	return f, nil
}

// getEvent: GET /v1/webhooks/events/{id}.
func getEvent(c *core.Call) {
	ids := c.Server.PublicIDs()
	core.Get(c, "id", "Webhook event", func(st *ledger.Reader, org, id string) (ledger.Event, bool) {
		return st.Event(org, ids.InternalEventID(id))
	}, func(ev *ledger.Event) *eventBody { return &eventBody{renderEvent(ids, ev)} })
}
