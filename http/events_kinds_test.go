package http

import (
	"testing"

	"payments/http/core"
	"payments/ledger"
)

// Every kind of record an event can be about renders as a webhook payload:
// an event whose data could not be rendered would be undeliverable. Each
// feature package registers its own renderers; this package imports them
// all.
func TestEveryEventSubjectRenders(t *testing.T) {
	for _, k := range ledger.SubjectKinds() {
		if !core.EventRenderable(k) {
			t.Errorf("no webhook payload renderer for event subject kind %d", k)
		}
	}
}
