package core

import (
	"testing"

	"payments/ledger"
)

// Every kind of record an event can be about renders as a webhook payload:
// an event whose data could not be rendered would be undeliverable.
func TestEveryEventSubjectRenders(t *testing.T) {
	for _, k := range ledger.SubjectKinds() {
		if _, ok := eventRenderers[k]; !ok {
			t.Errorf("no webhook payload renderer for event subject kind %d", k)
		}
	}
}
