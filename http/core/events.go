package core

import (
	"fmt"

	json "github.com/goccy/go-json/v2"

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

func JSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// EventRenderable says whether events about subjects of kind k render: a
// renderer is registered for it.
func EventRenderable(k ledger.SubjectKind) bool {
	_, ok := eventRenderers[k]
	return ok
}
