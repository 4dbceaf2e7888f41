package webhooks

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"payments/ledger"
	"payments/ledger/ledgertest"
	"payments/ledger/ledgertest/ordertest"
	"payments/ledger/orders"
	"payments/ledger/paymentlinks"
)

const (
	secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAAAAAAAAAAAA"
	secretB = "whsec_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
)

// webhookLedger is a ledger with two organizations.
var webhookLedger = ledgertest.TwoOrgs

var mustApply = ledgertest.MustApply

func endpoint(id, org string, events ...string) *CreateEndpoint {
	return &CreateEndpoint{At: 2, ID: id, OrgID: org, URL: "https://example.com/" + id, Events: events, Secret: secretA}
}

// fund emits one account.credited event for org.
func fund(t *testing.T, s *ledgertest.State, org, ref string) ledger.Event {
	t.Helper()
	mustApply(t, s, &ledger.FundBalance{At: 3, OrgID: org, Currency: "GHS", Amount: 100, ExternalReference: ref})
	ev, _ := s.EventAt(s.EventCount())
	return ev
}

func deliveriesOf(s *ledgertest.State, org string) []Delivery {
	return ListDeliveries(s.Reader, org, DeliveryFilter{}, ledger.CursorStart, 100).Items
}

// pendingDeliveries returns every pending delivery, walked in small pages.
func pendingDeliveries(s *ledgertest.State) []Delivery {
	return ledgertest.WalkOpen(s.Reader, PendingDeliveries, 7)
}

// An event gets one delivery per active endpoint of its organization that
// subscribes to its type, and none for a command that is rejected or
// replayed.
func TestWebhookFanOut(t *testing.T) {
	s := webhookLedger(t)
	mustApply(t, s, endpoint("whe_all", "org_a", "*"))
	mustApply(t, s, endpoint("whe_credit", "org_a", ledger.EventAccountCredited))
	mustApply(t, s, endpoint("whe_payout", "org_a", ledger.EventPayoutCompleted, ledger.EventPayoutFailed))
	mustApply(t, s, endpoint("whe_off", "org_a", "*"))
	mustApply(t, s, &UpdateEndpoint{At: 2, ID: "whe_off", OrgID: "org_a", EndpointChange: EndpointChange{SetStatus: true, Status: Disabled}})
	mustApply(t, s, endpoint("whe_b", "org_b", "*"))

	ev := fund(t, s, "org_a", "f1")
	got := deliveriesOf(s, "org_a")
	if len(got) != 2 {
		t.Fatalf("deliveries = %+v, want 2", got)
	}
	// Newest first: the endpoints in creation order made them.
	if got[1].EndpointID != "whe_all" || got[0].EndpointID != "whe_credit" {
		t.Fatalf("deliveries go to %s, %s", got[1].EndpointID, got[0].EndpointID)
	}
	for _, d := range got {
		if d.Status != Pending || d.EventID != ev.ID || d.EventType != ledger.EventAccountCredited ||
			d.ResourceID != ev.ResourceID || d.NextAttemptAt != ev.At || d.Attempts != 0 {
			t.Fatalf("delivery %+v", d)
		}
	}
	if n := len(deliveriesOf(s, "org_b")); n != 0 {
		t.Fatalf("org_b got %d deliveries of org_a's event", n)
	}
	// A replay emits nothing, so delivers nothing.
	s.Apply(&ledger.FundBalance{At: 3, OrgID: "org_a", Currency: "GHS", Amount: 100, ExternalReference: "f1"})
	if n := len(deliveriesOf(s, "org_a")); n != 2 {
		t.Fatalf("a replayed command made deliveries: %d", n)
	}
	if p := pendingDeliveries(s); len(p) != 2 || p[0].Seq > p[1].Seq {
		t.Fatalf("pending = %+v", p)
	}
}

// The life of a delivery through its attempts, as a table: each step is an
// attempt report and what the delivery and its endpoint look like after.
func TestWebhookAttempts(t *testing.T) {
	type want struct {
		status   DeliveryStatus
		attempts int64
		next     int64
		failures int64
		endpoint string // status
		reason   string
		code     ledger.Code // the report is refused
	}
	type step struct {
		rec  RecordAttempt
		want want
	}
	fail := func(attempt, at, retry int64) RecordAttempt {
		return RecordAttempt{At: at, Attempt: attempt, StatusCode: 500, Error: "HTTP 500", RetryAt: retry}
	}
	ok := func(attempt, at int64) RecordAttempt {
		return RecordAttempt{At: at, Attempt: attempt, Succeeded: true, StatusCode: 200}
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"success at once", []step{
			{ok(1, 10), want{status: Success, attempts: 1, endpoint: Active}},
		}},
		{"retried then succeeds, count reset", []step{
			{fail(1, 10, 40), want{status: Pending, attempts: 1, next: 40, failures: 1, endpoint: Active}},
			{fail(2, 40, 160), want{status: Pending, attempts: 2, next: 160, failures: 2, endpoint: Active}},
			{ok(3, 160), want{status: Success, attempts: 3, endpoint: Active}},
		}},
		{"schedule exhausted", []step{
			{fail(1, 10, 40), want{status: Pending, attempts: 1, next: 40, failures: 1, endpoint: Active}},
			{fail(2, 40, 0), want{status: Failed, attempts: 2, failures: 2, endpoint: Active}},
		}},
		{"stale and repeated reports refused", []step{
			{fail(1, 10, 40), want{status: Pending, attempts: 1, next: 40, failures: 1, endpoint: Active}},
			{fail(1, 11, 40), want{status: Pending, attempts: 1, next: 40, failures: 1, endpoint: Active, code: ledger.CodeConflict}},
			{ok(3, 12), want{status: Pending, attempts: 1, next: 40, failures: 1, endpoint: Active, code: ledger.CodeConflict}},
			{ok(2, 40), want{status: Success, attempts: 2, endpoint: Active}},
			{ok(3, 41), want{status: Success, attempts: 2, endpoint: Active, code: ledger.CodeConflict}},
		}},
		{"410 disables at once", []step{
			{RecordAttempt{At: 10, Attempt: 1, StatusCode: 410, Error: "HTTP 410", RetryAt: 40},
				want{status: Failed, attempts: 1, failures: 1, endpoint: Disabled, reason: DisabledGone}},
		}},
		{"retry before now is due now", []step{
			{fail(1, 10, 5), want{status: Pending, attempts: 1, next: 10, failures: 1, endpoint: Active}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := webhookLedger(t)
			mustApply(t, s, endpoint("whe_1", "org_a", "*"))
			fund(t, s, "org_a", "f1")
			d := deliveriesOf(s, "org_a")[0]
			for i, st := range tc.steps {
				rec := st.rec
				rec.DeliveryID = d.ID
				r := s.Apply(&rec)
				if (r.Err == nil) != (st.want.code == "") || (r.Err != nil && r.Err.Code != st.want.code) {
					t.Fatalf("step %d: err %v, want code %q", i, r.Err, st.want.code)
				}
				got, _ := GetDelivery(s.Reader, "org_a", d.ID)
				e, _ := GetEndpoint(s.Reader, "org_a", "whe_1")
				w := st.want
				if got.Status != w.status || got.Attempts != w.attempts || got.NextAttemptAt != w.next ||
					e.FailureCount != w.failures || e.Status != w.endpoint || e.DisabledReason != w.reason {
					t.Fatalf("step %d: delivery %+v endpoint %+v, want %+v", i, got, e, w)
				}
				if (got.Status == Pending) != (len(pendingDeliveries(s)) == 1) {
					t.Fatalf("step %d: pending index out of step", i)
				}
			}
		})
	}
}

// FailuresMax failures in a row, across deliveries, disable the
// endpoint: its other pending deliveries fail and new events skip it until
// it is re-activated, which resets the count.
func TestWebhookAutoDisable(t *testing.T) {
	s := webhookLedger(t)
	mustApply(t, s, endpoint("whe_1", "org_a", "*"))
	for i := 0; i < 3; i++ {
		fund(t, s, "org_a", fmt.Sprint("f", i))
	}
	ds := deliveriesOf(s, "org_a")
	attempts := map[string]int64{}
	for i := 0; i < FailuresMax; i++ {
		d := ds[i%2] // two of the three fail in turn
		attempts[d.ID]++
		mustApply(t, s, &RecordAttempt{At: int64(100 + i), DeliveryID: d.ID, Attempt: attempts[d.ID], StatusCode: 503, RetryAt: int64(1000 + i)})
		e, _ := GetEndpoint(s.Reader, "org_a", "whe_1")
		if i < FailuresMax-1 && (e.Status != Active || e.FailureCount != int64(i+1)) {
			t.Fatalf("after %d failures: %+v", i+1, e)
		}
	}
	e, _ := GetEndpoint(s.Reader, "org_a", "whe_1")
	if e.Status != Disabled || e.DisabledReason != DisabledConsecutiveFailures || e.FailureCount != FailuresMax {
		t.Fatalf("endpoint after %d failures: %+v", FailuresMax, e)
	}
	for _, d := range deliveriesOf(s, "org_a") {
		if d.Status != Failed {
			t.Fatalf("delivery %s is %s after the endpoint was disabled", d.ID, d.Status)
		}
		if d.Attempts == 0 && d.LastError != "endpoint_disabled" {
			t.Fatalf("unattempted delivery's error %q", d.LastError)
		}
	}
	if len(pendingDeliveries(s)) != 0 {
		t.Fatal("pending deliveries remain")
	}
	fund(t, s, "org_a", "while-disabled")
	if n := len(deliveriesOf(s, "org_a")); n != 3 {
		t.Fatalf("a disabled endpoint got a delivery: %d", n)
	}
	// A retry needs an active endpoint.
	if r := s.Apply(&RetryDelivery{At: 200, OrgID: "org_a", DeliveryID: ds[0].ID}); r.Err == nil || r.Err.Code != ledger.CodeBadRequest {
		t.Fatalf("retry on a disabled endpoint: %v", r.Err)
	}
	r := mustApply(t, s, &UpdateEndpoint{At: 201, ID: "whe_1", OrgID: "org_a", EndpointChange: EndpointChange{SetStatus: true, Status: Active}})
	if e := EndpointOf(r); e.Status != Active || e.FailureCount != 0 || e.DisabledReason != "" {
		t.Fatalf("re-activated: %+v", e)
	}
	// Retry of a failed delivery resets it in place with a fresh schedule.
	r = mustApply(t, s, &RetryDelivery{At: 202, OrgID: "org_a", DeliveryID: ds[0].ID})
	if d := DeliveryOf(r); d.ID != ds[0].ID || d.Status != Pending || d.Step != 0 || d.Attempts != attempts[ds[0].ID] || d.NextAttemptAt != 202 {
		t.Fatalf("retried: %+v", d)
	}
	// Retry of a successful one is a new delivery of the same event.
	mustApply(t, s, &RecordAttempt{At: 203, DeliveryID: ds[0].ID, Attempt: attempts[ds[0].ID] + 1, Succeeded: true, StatusCode: 204})
	r = mustApply(t, s, &RetryDelivery{At: 204, OrgID: "org_a", DeliveryID: ds[0].ID})
	if d := DeliveryOf(r); d.ID == ds[0].ID || d.EventID != ds[0].EventID || d.Status != Pending || d.Attempts != 0 {
		t.Fatalf("replay of a success: %+v", d)
	}
	if r := s.Apply(&RetryDelivery{At: 205, OrgID: "org_b", DeliveryID: ds[0].ID}); r.Err == nil || r.Err.Code != ledger.CodeNotFound {
		t.Fatalf("another organization retried a delivery: %v", r.Err)
	}
}

// Endpoint management: validation, the per-organization limit, manual
// disable, deletion, rotation and the test event.
func TestWebhookEndpoints(t *testing.T) {
	s := webhookLedger(t)
	bad := []struct {
		cmd  ledger.Command
		code ledger.Code
	}{
		{&CreateEndpoint{At: 2, ID: "bad", OrgID: "org_a", URL: "https://x", Events: []string{"*"}, Secret: secretA}, ledger.CodeValidation},
		{&CreateEndpoint{At: 2, ID: "whe_x", OrgID: "org_zz", URL: "https://x", Events: []string{"*"}, Secret: secretA}, ledger.CodeNotFound},
		{&CreateEndpoint{At: 2, ID: "whe_x", OrgID: "org_a", URL: "", Events: []string{"*"}, Secret: secretA}, ledger.CodeValidation},
		{&CreateEndpoint{At: 2, ID: "whe_x", OrgID: "org_a", URL: "https://x", Events: nil, Secret: secretA}, ledger.CodeValidation},
		{&CreateEndpoint{At: 2, ID: "whe_x", OrgID: "org_a", URL: "https://x", Events: []string{"*", "payout.failed"}, Secret: secretA}, ledger.CodeValidation},
		{&CreateEndpoint{At: 2, ID: "whe_x", OrgID: "org_a", URL: "https://x", Events: []string{"payout.failed", "payout.failed"}, Secret: secretA}, ledger.CodeValidation},
		{&CreateEndpoint{At: 2, ID: "whe_x", OrgID: "org_a", URL: "https://x", Events: []string{"webhook.test"}, Secret: secretA}, ledger.CodeValidation},
		{&CreateEndpoint{At: 2, ID: "whe_x", OrgID: "org_a", URL: "https://x", Events: []string{"*"}, Secret: "short"}, ledger.CodeValidation},
		{&UpdateEndpoint{At: 2, ID: "whe_none", OrgID: "org_a"}, ledger.CodeNotFound},
		{&SendTest{At: 2, EndpointID: "whe_none", OrgID: "org_a"}, ledger.CodeNotFound},
		{&RecordAttempt{At: 2, DeliveryID: "whd_none", Attempt: 1}, ledger.CodeNotFound},
	}
	for i, b := range bad {
		before := s.Dump()
		r := s.Apply(b.cmd)
		if r.Err == nil || r.Err.Code != b.code {
			t.Fatalf("case %d %T: err %v, want %s", i, b.cmd, r.Err, b.code)
		}
		if !bytes.Equal(before, s.Dump()) {
			t.Fatalf("case %d: a refused command changed the state", i)
		}
	}

	for i := 0; i < EndpointsMax; i++ {
		mustApply(t, s, endpoint(fmt.Sprintf("whe_%02d", i), "org_a", "*"))
	}
	if r := s.Apply(endpoint("whe_17", "org_a", "*")); r.Err == nil || r.Err.Code != ledger.CodeBadRequest {
		t.Fatalf("endpoint past the limit: %v", r.Err)
	}
	fund(t, s, "org_a", "f1")
	// Deleting hides the endpoint, fails its pending delivery, frees a slot.
	mustApply(t, s, &DeleteEndpoint{At: 5, ID: "whe_00", OrgID: "org_a"})
	if _, ok := GetEndpoint(s.Reader, "org_a", "whe_00"); ok {
		t.Fatal("deleted endpoint still found")
	}
	if r := s.Apply(&DeleteEndpoint{At: 5, ID: "whe_00", OrgID: "org_a"}); r.Err == nil || r.Err.Code != ledger.CodeNotFound {
		t.Fatalf("second delete: %v", r.Err)
	}
	d := ListDeliveries(s.Reader, "org_a", DeliveryFilter{EndpointID: "whe_00"}, ledger.CursorStart, 10).Items
	if len(d) != 1 || d[0].Status != Failed || d[0].LastError != "endpoint_unavailable" {
		t.Fatalf("deleted endpoint's delivery: %+v", d)
	}
	if n := len(ListEndpoints(s.Reader, "org_a", ledger.CursorStart, 100).Items); n != EndpointsMax-1 {
		t.Fatalf("%d endpoints listed", n)
	}
	mustApply(t, s, endpoint("whe_17", "org_a", "*"))
	if _, ok := GetEndpoint(s.Reader, "org_b", "whe_01"); ok {
		t.Fatal("org_b sees org_a's endpoint")
	}

	// Manual disable fails what is pending, and marks the reason.
	r := mustApply(t, s, &UpdateEndpoint{At: 6, ID: "whe_01", OrgID: "org_a", EndpointChange: EndpointChange{SetStatus: true, Status: Disabled,
		SetDescription: true, Description: "paused", SetEvents: true, Events: []string{ledger.EventPayoutFailed}}})
	if e := EndpointOf(r); e.Status != Disabled || e.DisabledReason != DisabledManual || e.Description != "paused" || e.Subscribed(ledger.EventAccountCredited) {
		t.Fatalf("updated: %+v", e)
	}
	if st := ListDeliveries(s.Reader, "org_a", DeliveryFilter{EndpointID: "whe_01"}, ledger.CursorStart, 10).Items[0].Status; st != Failed {
		t.Fatalf("disabled endpoint's delivery is %s", st)
	}

	// Rotation: both secrets sign for a day, then only the new one.
	r = mustApply(t, s, &RotateSecret{At: 1000, ID: "whe_02", OrgID: "org_a", Secret: secretB})
	e := EndpointOf(r)
	if got := e.Secrets(1000 + SecretOverlapMillis - 1); len(got) != 2 || got[0] != secretB || got[1] != secretA {
		t.Fatalf("secrets in the window: %v", got)
	}
	if got := e.Secrets(1000 + SecretOverlapMillis); len(got) != 1 || got[0] != secretB {
		t.Fatalf("secrets after the window: %v", got)
	}

	// The test event goes to its endpoint only, once, and is never retried.
	before := len(pendingDeliveries(s))
	r = mustApply(t, s, &SendTest{At: 7, OrgID: "org_a", EndpointID: "whe_03"})
	td := *DeliveryOf(r)
	ev, _ := s.EventAt(td.EventSeq)
	if ev.Type != EventTest || ev.ResourceID != "whe_03" || !td.Test || td.EndpointID != "whe_03" {
		t.Fatalf("test event %+v delivery %+v", ev, td)
	}
	if sub := ev.Subject.(Endpoint); sub.Secret != "" || sub.ID != "whe_03" {
		t.Fatalf("test event subject carries %+v", sub)
	}
	if n := len(pendingDeliveries(s)); n != before+1 {
		t.Fatalf("test event fanned out: %d pending, want %d", n, before+1)
	}
	r = mustApply(t, s, &RecordAttempt{At: 8, DeliveryID: td.ID, Attempt: 1, Error: strings.Repeat("x", 2000), RetryAt: 100})
	if DeliveryOf(r).Status != Failed || len(DeliveryOf(r).LastError) != errorLenMax {
		t.Fatalf("failed test delivery: %s, error of %d bytes", DeliveryOf(r).Status, len(DeliveryOf(r).LastError))
	}

	// Everything survives a snapshot byte for byte, indexes included.
	restored := s.Restored()
	if a, b := len(pendingDeliveries(restored)), len(pendingDeliveries(s)); a != b {
		t.Fatalf("pending after restore %d, before %d", a, b)
	}
	if r := restored.Apply(endpoint("whe_18", "org_a", "*")); r.Err == nil {
		t.Fatal("the endpoint limit was forgotten by the restore")
	}
}

// Every webhook command survives the log codec.
func TestWebhookCommandsRoundTrip(t *testing.T) {
	cmds := []ledger.Command{
		endpoint("whe_1", "org_a", ledger.EventPayoutFailed, ledger.EventOrderExpired),
		&UpdateEndpoint{At: 1, ID: "whe_1", OrgID: "org_a", EndpointChange: EndpointChange{SetURL: true, URL: "https://u", SetDescription: true,
			SetEvents: true, Events: []string{"*"}, SetStatus: true, Status: Disabled}},
		&DeleteEndpoint{At: 1, ID: "whe_1", OrgID: "org_a"},
		&RotateSecret{At: 1, ID: "whe_1", OrgID: "org_a", Secret: secretB},
		&SendTest{At: 1, OrgID: "org_a", EndpointID: "whe_1"},
		&RecordAttempt{At: 1, DeliveryID: "whd_1", Attempt: 3, StatusCode: 502, Error: "HTTP 502", RetryAt: 99},
		&RecordAttempt{At: 5, StartedAt: 2, DeliveryID: "whd_1", Attempt: 4, Succeeded: true, StatusCode: 204},
		&RetryDelivery{At: 1, OrgID: "org_a", DeliveryID: "whd_1"},
	}
	ledgertest.RoundTrip(t, cmds...)
}

// A delivery's history keeps its latest AttemptsKept attempts, each
// as reported: when it started, when its outcome was known, the answer and
// the error (bounded). A refused report adds nothing; a retry in place goes
// on with the same history; a success sent again is a new delivery with a
// history of its own. The history is in the state store and survives a
// restart.
func TestWebhookAttemptHistory(t *testing.T) {
	s := webhookLedger(t)
	mustApply(t, s, endpoint("whe_1", "org_a", "*"))
	fund(t, s, "org_a", "f1")
	d := deliveriesOf(s, "org_a")[0]
	report := func(n int64, ok bool, started, at int64, msg string) ledger.Result {
		rec := &RecordAttempt{At: at, StartedAt: started, DeliveryID: d.ID, Attempt: n, Succeeded: ok, Error: msg, RetryAt: at + 10}
		if ok {
			rec.StatusCode, rec.RetryAt = 200, 0
		} else {
			rec.StatusCode = 503
		}
		return s.Apply(rec)
	}
	long := strings.Repeat("y", 600)
	if r := report(1, false, 100, 130, long); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := report(1, false, 140, 150, "stale"); r.Err == nil || r.Err.Code != ledger.CodeConflict {
		t.Fatalf("a stale report: %v", r.Err)
	}
	if r := report(2, false, 170, 160, "HTTP 503"); r.Err != nil { // a start after the outcome
		t.Fatal(r.Err)
	}
	got, _ := GetDelivery(s.Reader, "org_a", d.ID)
	want := []Attempt{
		{Number: 1, StartedAt: 100, At: 130, StatusCode: 503, Error: long[:attemptErrorLenMax]},
		{Number: 2, StartedAt: 0, At: 160, StatusCode: 503, Error: "HTTP 503"},
	}
	if !reflect.DeepEqual(got.History, want) || got.LastError != "HTTP 503" {
		t.Fatalf("history %+v, want %+v", got.History, want)
	}
	// An error cut to its bound is cut before a character, never inside.
	d2 := fund(t, s, "org_a", "f2")
	for _, dd := range deliveriesOf(s, "org_a") {
		if dd.EventID == d2.ID {
			mustApply(t, s, &RecordAttempt{At: 200, StartedAt: 199, DeliveryID: dd.ID, Attempt: 1, StatusCode: 500,
				Error: strings.Repeat("x", attemptErrorLenMax-1) + "€ and more", RetryAt: 300})
			got, _ := GetDelivery(s.Reader, "org_a", dd.ID)
			if e := got.History[0].Error; e != strings.Repeat("x", attemptErrorLenMax-1) {
				t.Fatalf("an error cut inside a character: %q", e[len(e)-4:])
			}
		}
	}

	// More attempts than are kept, through a retry by request in place
	// (and the endpoint re-activated, so that its failures in a row do not
	// disable it).
	for n := int64(3); n <= AttemptsKept+3; n++ {
		if n == 6 {
			mustApply(t, s, &UpdateEndpoint{At: 1000 * n, ID: "whe_1", OrgID: "org_a", EndpointChange: EndpointChange{SetStatus: true, Status: Active}})
			mustApply(t, s, &RetryDelivery{At: 1000 * n, OrgID: "org_a", DeliveryID: d.ID})
		}
		if r := report(n, n == AttemptsKept+3, 1000*n, 1000*n+7, "HTTP 503"); r.Err != nil {
			t.Fatalf("attempt %d: %v", n, r.Err)
		}
	}
	check := func(t *testing.T, s *ledgertest.State) {
		t.Helper()
		got, _ := GetDelivery(s.Reader, "org_a", d.ID)
		if got.Status != Success || got.Attempts != AttemptsKept+3 || len(got.History) != AttemptsKept {
			t.Fatalf("delivery %+v", got)
		}
		for i, a := range got.History {
			n := int64(4 + i)
			if a.Number != n || a.StartedAt != 1000*n || a.At != 1000*n+7 || a.Succeeded != (n == AttemptsKept+3) {
				t.Fatalf("attempt %d of the history: %+v", i, a)
			}
		}
	}
	check(t, s)
	// A success sent again is a new delivery; the old keeps its history.
	r := mustApply(t, s, &RetryDelivery{At: 20_000, OrgID: "org_a", DeliveryID: d.ID})
	if n := DeliveryOf(r); n.ID == d.ID || len(n.History) != 0 {
		t.Fatalf("the replay: %+v", n)
	}
	check(t, s)
	restarted := s.Restored()
	t.Run("after a restart", func(t *testing.T) { check(t, restarted) })
}

// The layouts are extended, never changed: an attempt reported without its
// start is KindRecordAttempt byte for byte as before, one with it
// is KindRecordAttemptTimed with the start appended; a delivery
// never attempted is stored as format 1 wrote it, and its history is
// appended.
func TestWebhookAttemptCodecs(t *testing.T) {
	plain := &RecordAttempt{At: 9, DeliveryID: "whd_1", Attempt: 2, StatusCode: 502, Error: "HTTP 502", RetryAt: 99}
	timed := *plain
	timed.StartedAt = 7
	var old bytesOf // KindRecordAttempt's layout, by hand
	old.u8(1)       // the batch version
	old.uvarint(1)
	old.u8(uint8(KindRecordAttempt))
	old.varint(9)
	old.str("whd_1")
	old.varint(2)
	old.bool(false)
	old.varint(502)
	old.str("HTTP 502")
	old.varint(99)
	if got := ledger.EncodeBatch(nil, []ledger.Command{plain}); !bytes.Equal(got, old.buf) {
		t.Fatalf("an untimed attempt encodes as %x, want %x", got, old.buf)
	}
	withStart := append(bytes.Clone(old.buf), 14) // varint 7
	withStart[2] = uint8(KindRecordAttemptTimed)
	if got := ledger.EncodeBatch(nil, []ledger.Command{&timed}); !bytes.Equal(got, withStart) {
		t.Fatalf("a timed attempt encodes as %x, want %x", got, withStart)
	}
	for _, c := range []*RecordAttempt{plain, &timed} {
		dec, err := ledger.DecodeBatch(ledger.EncodeBatch(nil, []ledger.Command{c}))
		if err != nil || !reflect.DeepEqual(dec[0], ledger.Command(c)) {
			t.Fatalf("%+v decoded as %+v, %v", c, dec, err)
		}
	}
	zeroStart := append(bytes.Clone(old.buf), 0)
	zeroStart[2] = uint8(KindRecordAttemptTimed)
	if _, err := ledger.DecodeBatch(zeroStart); err == nil {
		t.Fatal("a timed attempt with no start was accepted; it would re-encode as the other kind")
	}

	d := Delivery{Seq: 3, OrgID: "org_a", EndpointID: "whe_1", EventSeq: 5, EventType: ledger.EventAccountCredited,
		ResourceID: "acct_1", Status: Pending, NextAttemptAt: 4, CreatedAt: 4}
	d.ID, d.EventID = DeliveryID(d.Seq), ledger.EventID(d.EventSeq)
	var first bytesOf // format 1's delivery record, by hand
	for _, f := range []func(){
		func() { first.uvarint(3) }, func() { first.str("org_a") }, func() { first.str("whe_1") },
		func() { first.uvarint(5) }, func() { first.str(ledger.EventAccountCredited) }, func() { first.str("acct_1") },
		func() { first.bool(false) }, func() { first.u8(uint8(Pending)) },
		func() { first.varint(0) }, func() { first.varint(0) }, func() { first.varint(0) }, func() { first.str("") },
		func() { first.varint(4) }, func() { first.varint(0) }, func() { first.varint(4) },
	} {
		f()
	}
	stored := deliveryKind.Encode(&d)
	if !bytes.Equal(stored, first.buf) {
		t.Fatalf("a delivery never attempted is stored as %x, want format 1's %x", stored, first.buf)
	}
	if got, err := deliveryKind.Decode(first.buf); err != nil || !reflect.DeepEqual(got, d) {
		t.Fatalf("a format 1 record read as %+v, %v", got, err)
	}
	d.Attempts, d.Step, d.LastStatusCode, d.LastError = 2, 2, 503, "HTTP 503"
	d.History = []Attempt{{Number: 1, At: 5, StatusCode: 0, Error: "connection refused"},
		{Number: 2, StartedAt: 6, At: 8, Succeeded: false, StatusCode: 503, Error: "HTTP 503"}}
	if got, err := deliveryKind.Decode(deliveryKind.Encode(&d)); err != nil || !reflect.DeepEqual(got, d) {
		t.Fatalf("read back as %+v, %v", got, err)
	}
	empty := append(bytes.Clone(first.buf), 0) // an appended history of none would not re-encode as read
	if _, err := deliveryKind.Decode(empty); err == nil {
		t.Fatal("an empty appended history was accepted")
	}
}

// bytesOf writes the codec's primitives by hand (ledger/codec.go).
type bytesOf struct{ buf []byte }

func (b *bytesOf) u8(v uint8)       { b.buf = append(b.buf, v) }
func (b *bytesOf) uvarint(v uint64) { b.buf = binary.AppendUvarint(b.buf, v) }
func (b *bytesOf) varint(v int64)   { b.buf = binary.AppendVarint(b.buf, v) }
func (b *bytesOf) str(s string)     { b.uvarint(uint64(len(s))); b.buf = append(b.buf, s...) }
func (b *bytesOf) bool(v bool) {
	if v {
		b.u8(1)
	} else {
		b.u8(0)
	}
}

func TestCutText(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc"},
		{"ab€cd", 3, "ab"}, // € is 3 bytes from index 2: not cut inside
		{"ab€cd", 5, "ab€"},
		{"€", 2, ""},
		{"", 0, ""},
	} {
		if got := CutText(tc.in, tc.n); got != tc.want {
			t.Errorf("CutText(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

const hour = 3600 * 1000

// mustEvents applies cmd, which must succeed, keep the ledger's invariants
// and emit events of the types want.
var mustEvents = ledgertest.MustEmit

// After the sandbox clock moves, an order's timestamps and the events it
// emits are on the organization's clock, but the webhook deliveries
// scheduled from them are on real time: a delivery is due at once, not
// after the length of the jump.
func TestDeliveriesStayOnRealTimeAfterAnAdvance(t *testing.T) {
	s := webhookLedger(t)
	mustApply(t, s, endpoint("whe_1", "org_a", "*"))
	const jump = 3 * hour
	mustApply(t, s, &ledger.AdvanceClock{At: 5, OrgID: "org_a", Millis: jump})
	const realAt = 10
	before := s.EventCount()
	mustEvents(t, s, ordertest.Crypto("ord_1", "r1", realAt), ledger.EventOrderAwaitingFunds)
	o, _ := orders.Get(s.Reader, "org_a", "ord_1")
	if o.CreatedAt != realAt+jump {
		t.Fatalf("order createdAt %d, want the organization's clock %d", o.CreatedAt, realAt+jump)
	}
	ev, _ := s.EventAt(before + 1)
	if ev.Type != ledger.EventOrderAwaitingFunds || ev.At != o.CreatedAt {
		t.Fatalf("event %s at %d, want the order's createdAt %d", ev.Type, ev.At, o.CreatedAt)
	}
	var due, created []int64
	for _, d := range pendingDeliveries(s) {
		if d.EventID == ev.ID {
			due, created = append(due, d.NextAttemptAt), append(created, d.CreatedAt)
		}
	}
	if !slices.Equal(due, []int64{realAt}) || !slices.Equal(created, []int64{realAt}) {
		t.Fatalf("deliveries of the order's event due at %v, created at %v, want [%d] (real time)", due, created, realAt)
	}
	// An order expired by the advance itself: its times and event are on
	// the clock after the jump, its delivery on the advance's real time.
	mustEvents(t, s, ordertest.Crypto("ord_2", "r2", 20), ledger.EventOrderAwaitingFunds)
	o2, _ := orders.Get(s.Reader, "org_a", "ord_2")
	before = s.EventCount()
	const advanceAt = 30
	mustEvents(t, s, &ledger.AdvanceClock{At: advanceAt, OrgID: "org_a", Millis: o2.ExpiresAt - (20 + jump)},
		ledger.EventOrderExpired, ledger.EventOrderExpired) // ord_1 and ord_2
	o2, _ = orders.Get(s.Reader, "org_a", "ord_2")
	ev, _ = s.EventAt(before + 2)
	if ev.ResourceID != "ord_2" {
		t.Fatalf("second expiry is of %s, want ord_2", ev.ResourceID)
	}
	if now := s.OrgNow("org_a", advanceAt); o2.UpdatedAt != now || ev.At != now {
		t.Fatalf("expired order updatedAt %d, event at %d, want the organization's clock %d", o2.UpdatedAt, ev.At, now)
	}
	found := false
	for _, d := range pendingDeliveries(s) {
		if d.EventID == ev.ID {
			found = true
			if d.NextAttemptAt != advanceAt || d.CreatedAt != advanceAt {
				t.Fatalf("delivery of the expiry due at %d, created at %d, want real time %d", d.NextAttemptAt, d.CreatedAt, advanceAt)
			}
		}
	}
	if !found {
		t.Fatal("the expiry has no delivery")
	}
}

// An endpoint's times are on its organization's clock, whatever its
// offset, like every resource's; the deliveries it gets are on real time.
func TestEndpointTimesFollowTheClock(t *testing.T) {
	const at = 50
	for _, offset := range []int64{0, 5 * hour, 30 * 24 * hour} {
		s := webhookLedger(t)
		if offset > 0 {
			mustApply(t, s, &ledger.AdvanceClock{At: 2, OrgID: "org_a", Millis: offset})
		}
		wh := endpoint("whe_1", "org_a", "*")
		wh.At = at
		mustApply(t, s, wh)
		mustApply(t, s, &ledger.FundBalance{At: at, OrgID: "org_a", Currency: "GHS", Amount: 1_000_000, ExternalReference: "f1"})
		e, ok := GetEndpoint(s.Reader, "org_a", "whe_1")
		if !ok || e.CreatedAt != at+offset || e.UpdatedAt != at+offset {
			t.Errorf("offset %dh: endpoint times %d, %d, want the leader's %d plus the offset", offset/hour, e.CreatedAt, e.UpdatedAt, at)
		}
		ds := pendingDeliveries(s)
		if len(ds) == 0 {
			t.Fatalf("offset %dh: no deliveries", offset/hour)
		}
		for _, d := range ds {
			if d.CreatedAt != at || d.NextAttemptAt != at {
				t.Fatalf("offset %dh: delivery %s created %d, due %d, want real time %d", offset/hour, d.ID, d.CreatedAt, d.NextAttemptAt, at)
			}
		}
	}
}

// The fan-out sees each event before the kernel's own hooks react to it
// with events of their own (a collection that completes a checkout
// session, which pays its link): deliveries are made in the events' order.
func TestDeliveriesFollowTheEvents(t *testing.T) {
	s := webhookLedger(t)
	mustApply(t, s, endpoint("whe_1", "org_a", "*"))
	mustApply(t, s, &paymentlinks.CreateLink{At: 2, ID: "pl_1", OrgID: "org_a", Spec: paymentlinks.LinkSpec{
		Email: "ama@example.com", Currency: "GHS", Amount: 25_000, Appearance: paymentlinks.Appearance{
			Title: "Invoice 1", Methods: paymentlinks.MethodSet(0).With(paymentlinks.MobileMoney)}}})
	mustApply(t, s, &paymentlinks.CreateSession{At: 10, ID: "cs_1", OrgID: "org_a", LinkID: "pl_1", Method: paymentlinks.MobileMoney,
		MethodCode: "gh_mtn", PayerNumber: "233241234567", OriginCurrency: "GHS", OriginAmount: 25_000, DestAmount: 25_000,
		CollectionID: "col_1", MethodType: ledger.MethodMobileMoney, Fee: ledger.FeeSchedule{BasisPoints: 150}.Fee(25_000)})
	events, deliveries := s.EventCount(), DeliveryCount(s.Reader)
	mustApply(t, s, &ledger.SettleCollection{At: 40, ID: "col_1", Completed: true})
	var want, got []string
	for seq := events + 1; seq <= s.EventCount(); seq++ {
		want = append(want, ledger.EventID(seq))
	}
	for seq := deliveries + 1; seq <= DeliveryCount(s.Reader); seq++ {
		d, _ := DeliveryAt(s.Reader, seq)
		got = append(got, d.EventID)
	}
	if len(want) < 3 || !slices.Equal(got, want) {
		t.Fatalf("deliveries of the events %v, want %v", got, want)
	}
}
