package http_test

import (
	"strings"
	"testing"

	"payments/ledger"
)

// Entry and event ids are keyed per deployment: two fresh deployments doing
// the same thing show different ids, neither decodes without its key, and
// each reads its own ids back (and the old unkeyed form).
func TestEntryAndEventIDsArePerDeployment(t *testing.T) {
	var txIDs, eventIDs []string
	for range 2 {
		st := newStack(t, stackOptions{})
		r := st.do("POST", "/v1/simulations/fund-balance", st.key, `{"amount":"10.00","currency":"GHS","externalReference":"ids-1"}`)
		st.mustStatus(r, 201)
		tx := r.json(t)["simulation"].(map[string]any)["transactionId"].(string)
		if len(tx) != len("le_")+26 || !strings.HasPrefix(tx, "le_") {
			t.Fatalf("transaction id %q is not a keyed entry id", tx)
		}
		if _, ok := ledger.ParseEntryID(tx); ok {
			t.Fatalf("%q decodes without the deployment's key", tx)
		}
		entry := st.do("GET", "/v1/ledger/"+tx, st.key, nil)
		st.mustStatus(entry, 200)
		seq := uint64(entry.json(t)["ledgerEntry"].(map[string]any)["sequence"].(float64))
		if old := st.do("GET", "/v1/ledger/"+ledger.EntryID(seq), st.key, nil); old.status != 200 {
			t.Fatalf("the old form of %q: %d %s", tx, old.status, old.body)
		}
		if other := st.do("GET", "/v1/ledger/le_"+strings.Repeat("0", 26), st.key, nil); other.status != 404 {
			t.Fatalf("a made-up id: %d", other.status)
		}
		events := st.do("GET", "/v1/webhooks/events", st.key, nil)
		st.mustStatus(events, 200)
		items := events.json(t)["data"].([]any)
		if len(items) == 0 {
			t.Fatal("no events")
		}
		ev := items[0].(map[string]any)["id"].(string)
		if _, ok := ledger.ParseEventID(ev); ok || len(ev) != len("wev_")+26 {
			t.Fatalf("event id %q is not keyed", ev)
		}
		st.mustStatus(st.do("GET", "/v1/webhooks/events/"+ev, st.key, nil), 200)
		txIDs, eventIDs = append(txIDs, tx), append(eventIDs, ev)
	}
	if txIDs[0] == txIDs[1] || eventIDs[0] == eventIDs[1] {
		t.Fatalf("two deployments made the same ids: %v %v", txIDs, eventIDs)
	}
}
