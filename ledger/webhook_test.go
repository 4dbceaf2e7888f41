package ledger

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const (
	secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwAAAAAAAAAAAA"
	secretB = "whsec_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
)

// webhookLedger is a ledger with two organizations, org_a funded in GHS.
func webhookLedger(t *testing.T) *testState {
	t.Helper()
	s := newTestState(t)
	for _, org := range []string{"org_a", "org_b"} {
		hash := sha256.Sum256([]byte(org))
		r := s.Apply(&CreateOrganization{At: 1, ID: org, Name: org, Key: CreateAPIKey{At: 1, ID: "key_" + org, OrgID: org, Hash: string(hash[:])}})
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	return s
}

func mustApply(t *testing.T, s *testState, cmd Command) Result {
	t.Helper()
	r := s.Apply(cmd)
	if r.Err != nil {
		t.Fatalf("%T: %v", cmd, r.Err)
	}
	return r
}

func endpoint(id, org string, events ...string) *CreateWebhookEndpoint {
	return &CreateWebhookEndpoint{At: 2, ID: id, OrgID: org, URL: "https://example.com/" + id, Events: events, Secret: secretA}
}

// fund emits one account.credited event for org.
func fund(t *testing.T, s *testState, org, ref string) Event {
	t.Helper()
	mustApply(t, s, &FundBalance{At: 3, OrgID: org, Currency: "GHS", Amount: 100, ExternalReference: ref})
	ev, _ := s.EventAt(s.EventCount())
	return ev
}

func deliveriesOf(s *testState, org string) []WebhookDelivery {
	return s.WebhookDeliveries(org, DeliveryFilter{}, CursorStart, 100).Items
}

// An event gets one delivery per active endpoint of its organization that
// subscribes to its type, and none for a command that is rejected or
// replayed.
func TestWebhookFanOut(t *testing.T) {
	s := webhookLedger(t)
	mustApply(t, s, endpoint("whe_all", "org_a", "*"))
	mustApply(t, s, endpoint("whe_credit", "org_a", EventAccountCredited))
	mustApply(t, s, endpoint("whe_payout", "org_a", EventPayoutCompleted, EventPayoutFailed))
	mustApply(t, s, endpoint("whe_off", "org_a", "*"))
	mustApply(t, s, &UpdateWebhookEndpoint{At: 2, ID: "whe_off", OrgID: "org_a", SetStatus: true, Status: WebhookDisabled})
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
		if d.Status != DeliveryPending || d.EventID != ev.ID || d.EventType != EventAccountCredited ||
			d.ResourceID != ev.ResourceID || d.NextAttemptAt != ev.At || d.Attempts != 0 {
			t.Fatalf("delivery %+v", d)
		}
	}
	if n := len(deliveriesOf(s, "org_b")); n != 0 {
		t.Fatalf("org_b got %d deliveries of org_a's event", n)
	}
	// A replay emits nothing, so delivers nothing.
	s.Apply(&FundBalance{At: 3, OrgID: "org_a", Currency: "GHS", Amount: 100, ExternalReference: "f1"})
	if n := len(deliveriesOf(s, "org_a")); n != 2 {
		t.Fatalf("a replayed command made deliveries: %d", n)
	}
	if p := s.pendingDeliveries(); len(p) != 2 || p[0].Seq > p[1].Seq {
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
		code     Code // the report is refused
	}
	type step struct {
		rec  RecordWebhookAttempt
		want want
	}
	fail := func(attempt, at, retry int64) RecordWebhookAttempt {
		return RecordWebhookAttempt{At: at, Attempt: attempt, StatusCode: 500, Error: "HTTP 500", RetryAt: retry}
	}
	ok := func(attempt, at int64) RecordWebhookAttempt {
		return RecordWebhookAttempt{At: at, Attempt: attempt, Succeeded: true, StatusCode: 200}
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"success at once", []step{
			{ok(1, 10), want{status: DeliverySuccess, attempts: 1, endpoint: WebhookActive}},
		}},
		{"retried then succeeds, count reset", []step{
			{fail(1, 10, 40), want{status: DeliveryPending, attempts: 1, next: 40, failures: 1, endpoint: WebhookActive}},
			{fail(2, 40, 160), want{status: DeliveryPending, attempts: 2, next: 160, failures: 2, endpoint: WebhookActive}},
			{ok(3, 160), want{status: DeliverySuccess, attempts: 3, endpoint: WebhookActive}},
		}},
		{"schedule exhausted", []step{
			{fail(1, 10, 40), want{status: DeliveryPending, attempts: 1, next: 40, failures: 1, endpoint: WebhookActive}},
			{fail(2, 40, 0), want{status: DeliveryFailed, attempts: 2, failures: 2, endpoint: WebhookActive}},
		}},
		{"stale and repeated reports refused", []step{
			{fail(1, 10, 40), want{status: DeliveryPending, attempts: 1, next: 40, failures: 1, endpoint: WebhookActive}},
			{fail(1, 11, 40), want{status: DeliveryPending, attempts: 1, next: 40, failures: 1, endpoint: WebhookActive, code: CodeConflict}},
			{ok(3, 12), want{status: DeliveryPending, attempts: 1, next: 40, failures: 1, endpoint: WebhookActive, code: CodeConflict}},
			{ok(2, 40), want{status: DeliverySuccess, attempts: 2, endpoint: WebhookActive}},
			{ok(3, 41), want{status: DeliverySuccess, attempts: 2, endpoint: WebhookActive, code: CodeConflict}},
		}},
		{"410 disables at once", []step{
			{RecordWebhookAttempt{At: 10, Attempt: 1, StatusCode: 410, Error: "HTTP 410", RetryAt: 40},
				want{status: DeliveryFailed, attempts: 1, failures: 1, endpoint: WebhookDisabled, reason: DisabledGone}},
		}},
		{"retry before now is due now", []step{
			{fail(1, 10, 5), want{status: DeliveryPending, attempts: 1, next: 10, failures: 1, endpoint: WebhookActive}},
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
				got, _ := s.WebhookDelivery("org_a", d.ID)
				e, _ := s.WebhookEndpoint("org_a", "whe_1")
				w := st.want
				if got.Status != w.status || got.Attempts != w.attempts || got.NextAttemptAt != w.next ||
					e.FailureCount != w.failures || e.Status != w.endpoint || e.DisabledReason != w.reason {
					t.Fatalf("step %d: delivery %+v endpoint %+v, want %+v", i, got, e, w)
				}
				if (got.Status == DeliveryPending) != (len(s.pendingDeliveries()) == 1) {
					t.Fatalf("step %d: pending index out of step", i)
				}
			}
		})
	}
}

// WebhookFailuresMax failures in a row, across deliveries, disable the
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
	for i := 0; i < WebhookFailuresMax; i++ {
		d := ds[i%2] // two of the three fail in turn
		attempts[d.ID]++
		mustApply(t, s, &RecordWebhookAttempt{At: int64(100 + i), DeliveryID: d.ID, Attempt: attempts[d.ID], StatusCode: 503, RetryAt: int64(1000 + i)})
		e, _ := s.WebhookEndpoint("org_a", "whe_1")
		if i < WebhookFailuresMax-1 && (e.Status != WebhookActive || e.FailureCount != int64(i+1)) {
			t.Fatalf("after %d failures: %+v", i+1, e)
		}
	}
	e, _ := s.WebhookEndpoint("org_a", "whe_1")
	if e.Status != WebhookDisabled || e.DisabledReason != DisabledConsecutiveFailures || e.FailureCount != WebhookFailuresMax {
		t.Fatalf("endpoint after %d failures: %+v", WebhookFailuresMax, e)
	}
	for _, d := range deliveriesOf(s, "org_a") {
		if d.Status != DeliveryFailed {
			t.Fatalf("delivery %s is %s after the endpoint was disabled", d.ID, d.Status)
		}
		if d.Attempts == 0 && d.LastError != "endpoint_disabled" {
			t.Fatalf("unattempted delivery's error %q", d.LastError)
		}
	}
	if len(s.pendingDeliveries()) != 0 {
		t.Fatal("pending deliveries remain")
	}
	fund(t, s, "org_a", "while-disabled")
	if n := len(deliveriesOf(s, "org_a")); n != 3 {
		t.Fatalf("a disabled endpoint got a delivery: %d", n)
	}
	// A retry needs an active endpoint.
	if r := s.Apply(&RetryWebhookDelivery{At: 200, OrgID: "org_a", DeliveryID: ds[0].ID}); r.Err == nil || r.Err.Code != CodeBadRequest {
		t.Fatalf("retry on a disabled endpoint: %v", r.Err)
	}
	r := mustApply(t, s, &UpdateWebhookEndpoint{At: 201, ID: "whe_1", OrgID: "org_a", SetStatus: true, Status: WebhookActive})
	if e := r.WebhookEndpoint; e.Status != WebhookActive || e.FailureCount != 0 || e.DisabledReason != "" {
		t.Fatalf("re-activated: %+v", e)
	}
	// Retry of a failed delivery resets it in place with a fresh schedule.
	r = mustApply(t, s, &RetryWebhookDelivery{At: 202, OrgID: "org_a", DeliveryID: ds[0].ID})
	if d := r.WebhookDelivery; d.ID != ds[0].ID || d.Status != DeliveryPending || d.Step != 0 || d.Attempts != attempts[ds[0].ID] || d.NextAttemptAt != 202 {
		t.Fatalf("retried: %+v", d)
	}
	// Retry of a successful one is a new delivery of the same event.
	mustApply(t, s, &RecordWebhookAttempt{At: 203, DeliveryID: ds[0].ID, Attempt: attempts[ds[0].ID] + 1, Succeeded: true, StatusCode: 204})
	r = mustApply(t, s, &RetryWebhookDelivery{At: 204, OrgID: "org_a", DeliveryID: ds[0].ID})
	if d := r.WebhookDelivery; d.ID == ds[0].ID || d.EventID != ds[0].EventID || d.Status != DeliveryPending || d.Attempts != 0 {
		t.Fatalf("replay of a success: %+v", d)
	}
	if r := s.Apply(&RetryWebhookDelivery{At: 205, OrgID: "org_b", DeliveryID: ds[0].ID}); r.Err == nil || r.Err.Code != CodeNotFound {
		t.Fatalf("another organization retried a delivery: %v", r.Err)
	}
}

// Endpoint management: validation, the per-organization limit, manual
// disable, deletion, rotation and the test event.
func TestWebhookEndpoints(t *testing.T) {
	s := webhookLedger(t)
	bad := []struct {
		cmd  Command
		code Code
	}{
		{&CreateWebhookEndpoint{At: 2, ID: "bad", OrgID: "org_a", URL: "https://x", Events: []string{"*"}, Secret: secretA}, CodeValidation},
		{&CreateWebhookEndpoint{At: 2, ID: "whe_x", OrgID: "org_zz", URL: "https://x", Events: []string{"*"}, Secret: secretA}, CodeNotFound},
		{&CreateWebhookEndpoint{At: 2, ID: "whe_x", OrgID: "org_a", URL: "", Events: []string{"*"}, Secret: secretA}, CodeValidation},
		{&CreateWebhookEndpoint{At: 2, ID: "whe_x", OrgID: "org_a", URL: "https://x", Events: nil, Secret: secretA}, CodeValidation},
		{&CreateWebhookEndpoint{At: 2, ID: "whe_x", OrgID: "org_a", URL: "https://x", Events: []string{"*", "payout.failed"}, Secret: secretA}, CodeValidation},
		{&CreateWebhookEndpoint{At: 2, ID: "whe_x", OrgID: "org_a", URL: "https://x", Events: []string{"payout.failed", "payout.failed"}, Secret: secretA}, CodeValidation},
		{&CreateWebhookEndpoint{At: 2, ID: "whe_x", OrgID: "org_a", URL: "https://x", Events: []string{"webhook.test"}, Secret: secretA}, CodeValidation},
		{&CreateWebhookEndpoint{At: 2, ID: "whe_x", OrgID: "org_a", URL: "https://x", Events: []string{"*"}, Secret: "short"}, CodeValidation},
		{&UpdateWebhookEndpoint{At: 2, ID: "whe_none", OrgID: "org_a"}, CodeNotFound},
		{&SendWebhookTest{At: 2, EndpointID: "whe_none", OrgID: "org_a"}, CodeNotFound},
		{&RecordWebhookAttempt{At: 2, DeliveryID: "whd_none", Attempt: 1}, CodeNotFound},
	}
	for i, b := range bad {
		before := encodeSnapshot(t, s)
		r := s.Apply(b.cmd)
		if r.Err == nil || r.Err.Code != b.code {
			t.Fatalf("case %d %T: err %v, want %s", i, b.cmd, r.Err, b.code)
		}
		if !bytes.Equal(before, encodeSnapshot(t, s)) {
			t.Fatalf("case %d: a refused command changed the state", i)
		}
	}

	for i := 0; i < WebhookEndpointsMax; i++ {
		mustApply(t, s, endpoint(fmt.Sprintf("whe_%02d", i), "org_a", "*"))
	}
	if r := s.Apply(endpoint("whe_17", "org_a", "*")); r.Err == nil || r.Err.Code != CodeBadRequest {
		t.Fatalf("endpoint past the limit: %v", r.Err)
	}
	fund(t, s, "org_a", "f1")
	// Deleting hides the endpoint, fails its pending delivery, frees a slot.
	mustApply(t, s, &DeleteWebhookEndpoint{At: 5, ID: "whe_00", OrgID: "org_a"})
	if _, ok := s.WebhookEndpoint("org_a", "whe_00"); ok {
		t.Fatal("deleted endpoint still found")
	}
	if r := s.Apply(&DeleteWebhookEndpoint{At: 5, ID: "whe_00", OrgID: "org_a"}); r.Err == nil || r.Err.Code != CodeNotFound {
		t.Fatalf("second delete: %v", r.Err)
	}
	d := s.WebhookDeliveries("org_a", DeliveryFilter{EndpointID: "whe_00"}, CursorStart, 10).Items
	if len(d) != 1 || d[0].Status != DeliveryFailed || d[0].LastError != "endpoint_unavailable" {
		t.Fatalf("deleted endpoint's delivery: %+v", d)
	}
	if n := len(s.WebhookEndpoints("org_a", CursorStart, 100).Items); n != WebhookEndpointsMax-1 {
		t.Fatalf("%d endpoints listed", n)
	}
	mustApply(t, s, endpoint("whe_17", "org_a", "*"))
	if _, ok := s.WebhookEndpoint("org_b", "whe_01"); ok {
		t.Fatal("org_b sees org_a's endpoint")
	}

	// Manual disable fails what is pending, and marks the reason.
	r := mustApply(t, s, &UpdateWebhookEndpoint{At: 6, ID: "whe_01", OrgID: "org_a", SetStatus: true, Status: WebhookDisabled,
		SetDescription: true, Description: "paused", SetEvents: true, Events: []string{EventPayoutFailed}})
	if e := r.WebhookEndpoint; e.Status != WebhookDisabled || e.DisabledReason != DisabledManual || e.Description != "paused" || e.Subscribed(EventAccountCredited) {
		t.Fatalf("updated: %+v", e)
	}
	if st := s.WebhookDeliveries("org_a", DeliveryFilter{EndpointID: "whe_01"}, CursorStart, 10).Items[0].Status; st != DeliveryFailed {
		t.Fatalf("disabled endpoint's delivery is %s", st)
	}

	// Rotation: both secrets sign for a day, then only the new one.
	r = mustApply(t, s, &RotateWebhookSecret{At: 1000, ID: "whe_02", OrgID: "org_a", Secret: secretB})
	e := r.WebhookEndpoint
	if got := e.Secrets(1000 + WebhookSecretOverlapMillis - 1); len(got) != 2 || got[0] != secretB || got[1] != secretA {
		t.Fatalf("secrets in the window: %v", got)
	}
	if got := e.Secrets(1000 + WebhookSecretOverlapMillis); len(got) != 1 || got[0] != secretB {
		t.Fatalf("secrets after the window: %v", got)
	}

	// The test event goes to its endpoint only, once, and is never retried.
	before := len(s.pendingDeliveries())
	r = mustApply(t, s, &SendWebhookTest{At: 7, OrgID: "org_a", EndpointID: "whe_03"})
	td := *r.WebhookDelivery
	ev, _ := s.EventAt(td.EventSeq)
	if ev.Type != EventWebhookTest || ev.ResourceID != "whe_03" || !td.Test || td.EndpointID != "whe_03" {
		t.Fatalf("test event %+v delivery %+v", ev, td)
	}
	if sub := ev.Subject.(WebhookEndpoint); sub.Secret != "" || sub.ID != "whe_03" {
		t.Fatalf("test event subject carries %+v", sub)
	}
	if n := len(s.pendingDeliveries()); n != before+1 {
		t.Fatalf("test event fanned out: %d pending, want %d", n, before+1)
	}
	r = mustApply(t, s, &RecordWebhookAttempt{At: 8, DeliveryID: td.ID, Attempt: 1, Error: strings.Repeat("x", 2000), RetryAt: 100})
	if r.WebhookDelivery.Status != DeliveryFailed || len(r.WebhookDelivery.LastError) != webhookErrorLenMax {
		t.Fatalf("failed test delivery: %s, error of %d bytes", r.WebhookDelivery.Status, len(r.WebhookDelivery.LastError))
	}

	// Everything survives a snapshot byte for byte, indexes included.
	restored := restoreSame(t, s)
	if a, b := len(restored.pendingDeliveries()), len(s.pendingDeliveries()); a != b {
		t.Fatalf("pending after restore %d, before %d", a, b)
	}
	if r := restored.Apply(endpoint("whe_18", "org_a", "*")); r.Err == nil {
		t.Fatal("the endpoint limit was forgotten by the restore")
	}
}

// Every webhook command survives the log codec.
func TestWebhookCommandsRoundTrip(t *testing.T) {
	cmds := []Command{
		endpoint("whe_1", "org_a", EventPayoutFailed, EventOrderExpired),
		&UpdateWebhookEndpoint{At: 1, ID: "whe_1", OrgID: "org_a", SetURL: true, URL: "https://u", SetDescription: true,
			SetEvents: true, Events: []string{"*"}, SetStatus: true, Status: WebhookDisabled},
		&DeleteWebhookEndpoint{At: 1, ID: "whe_1", OrgID: "org_a"},
		&RotateWebhookSecret{At: 1, ID: "whe_1", OrgID: "org_a", Secret: secretB},
		&SendWebhookTest{At: 1, OrgID: "org_a", EndpointID: "whe_1"},
		&RecordWebhookAttempt{At: 1, DeliveryID: "whd_1", Attempt: 3, StatusCode: 502, Error: "HTTP 502", RetryAt: 99},
		&RecordWebhookAttempt{At: 5, StartedAt: 2, DeliveryID: "whd_1", Attempt: 4, Succeeded: true, StatusCode: 204},
		&RetryWebhookDelivery{At: 1, OrgID: "org_a", DeliveryID: "whd_1"},
	}
	checkCommandsRoundTrip(t, cmds)
}

// A delivery's history keeps its latest WebhookAttemptsKept attempts, each
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
	report := func(n int64, ok bool, started, at int64, msg string) Result {
		rec := &RecordWebhookAttempt{At: at, StartedAt: started, DeliveryID: d.ID, Attempt: n, Succeeded: ok, Error: msg, RetryAt: at + 10}
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
	if r := report(1, false, 140, 150, "stale"); r.Err == nil || r.Err.Code != CodeConflict {
		t.Fatalf("a stale report: %v", r.Err)
	}
	if r := report(2, false, 170, 160, "HTTP 503"); r.Err != nil { // a start after the outcome
		t.Fatal(r.Err)
	}
	got, _ := s.WebhookDelivery("org_a", d.ID)
	want := []DeliveryAttempt{
		{Number: 1, StartedAt: 100, At: 130, StatusCode: 503, Error: long[:webhookAttemptErrorLenMax]},
		{Number: 2, StartedAt: 0, At: 160, StatusCode: 503, Error: "HTTP 503"},
	}
	if !reflect.DeepEqual(got.History, want) || got.LastError != "HTTP 503" {
		t.Fatalf("history %+v, want %+v", got.History, want)
	}
	// An error cut to its bound is cut before a character, never inside.
	d2 := fund(t, s, "org_a", "f2")
	for _, dd := range deliveriesOf(s, "org_a") {
		if dd.EventID == d2.ID {
			mustApply(t, s, &RecordWebhookAttempt{At: 200, StartedAt: 199, DeliveryID: dd.ID, Attempt: 1, StatusCode: 500,
				Error: strings.Repeat("x", webhookAttemptErrorLenMax-1) + "€ and more", RetryAt: 300})
			got, _ := s.WebhookDelivery("org_a", dd.ID)
			if e := got.History[0].Error; e != strings.Repeat("x", webhookAttemptErrorLenMax-1) {
				t.Fatalf("an error cut inside a character: %q", e[len(e)-4:])
			}
		}
	}

	// More attempts than are kept, through a retry by request in place
	// (and the endpoint re-activated, so that its failures in a row do not
	// disable it).
	for n := int64(3); n <= WebhookAttemptsKept+3; n++ {
		if n == 6 {
			mustApply(t, s, &UpdateWebhookEndpoint{At: 1000 * n, ID: "whe_1", OrgID: "org_a", SetStatus: true, Status: WebhookActive})
			mustApply(t, s, &RetryWebhookDelivery{At: 1000 * n, OrgID: "org_a", DeliveryID: d.ID})
		}
		if r := report(n, n == WebhookAttemptsKept+3, 1000*n, 1000*n+7, "HTTP 503"); r.Err != nil {
			t.Fatalf("attempt %d: %v", n, r.Err)
		}
	}
	check := func(t *testing.T, s *testState) {
		t.Helper()
		got, _ := s.WebhookDelivery("org_a", d.ID)
		if got.Status != DeliverySuccess || got.Attempts != WebhookAttemptsKept+3 || len(got.History) != WebhookAttemptsKept {
			t.Fatalf("delivery %+v", got)
		}
		for i, a := range got.History {
			n := int64(4 + i)
			if a.Number != n || a.StartedAt != 1000*n || a.At != 1000*n+7 || a.Succeeded != (n == WebhookAttemptsKept+3) {
				t.Fatalf("attempt %d of the history: %+v", i, a)
			}
		}
	}
	check(t, s)
	// A success sent again is a new delivery; the old keeps its history.
	r := mustApply(t, s, &RetryWebhookDelivery{At: 20_000, OrgID: "org_a", DeliveryID: d.ID})
	if n := r.WebhookDelivery; n.ID == d.ID || len(n.History) != 0 {
		t.Fatalf("the replay: %+v", n)
	}
	check(t, s)
	restarted, err := loadTestState(t, s.store)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("after a restart", func(t *testing.T) { check(t, restarted) })
}

// The layouts are extended, never changed: an attempt reported without its
// start is KindRecordWebhookAttempt byte for byte as before, one with it
// is KindRecordWebhookAttemptTimed with the start appended; a delivery
// never attempted is stored as format 1 wrote it, and its history is
// appended.
func TestWebhookAttemptCodecs(t *testing.T) {
	plain := &RecordWebhookAttempt{At: 9, DeliveryID: "whd_1", Attempt: 2, StatusCode: 502, Error: "HTTP 502", RetryAt: 99}
	timed := *plain
	timed.StartedAt = 7
	var old Encoder // KindRecordWebhookAttempt's layout, by hand
	old.u8(batchVersion)
	old.uvarint(1)
	old.u8(uint8(KindRecordWebhookAttempt))
	old.varint(9)
	old.str("whd_1")
	old.varint(2)
	old.bool(false)
	old.varint(502)
	old.str("HTTP 502")
	old.varint(99)
	if got := EncodeBatch(nil, []Command{plain}); !bytes.Equal(got, old.buf) {
		t.Fatalf("an untimed attempt encodes as %x, want %x", got, old.buf)
	}
	withStart := append(bytes.Clone(old.buf), 14) // varint 7
	withStart[2] = uint8(KindRecordWebhookAttemptTimed)
	if got := EncodeBatch(nil, []Command{&timed}); !bytes.Equal(got, withStart) {
		t.Fatalf("a timed attempt encodes as %x, want %x", got, withStart)
	}
	for _, c := range []*RecordWebhookAttempt{plain, &timed} {
		dec, err := DecodeBatch(EncodeBatch(nil, []Command{c}))
		if err != nil || !reflect.DeepEqual(dec[0], Command(c)) {
			t.Fatalf("%+v decoded as %+v, %v", c, dec, err)
		}
	}
	zeroStart := append(bytes.Clone(old.buf), 0)
	zeroStart[2] = uint8(KindRecordWebhookAttemptTimed)
	if _, err := DecodeBatch(zeroStart); err == nil {
		t.Fatal("a timed attempt with no start was accepted; it would re-encode as the other kind")
	}

	d := WebhookDelivery{Seq: 3, OrgID: "org_a", EndpointID: "whe_1", EventSeq: 5, EventType: EventAccountCredited,
		ResourceID: "acct_1", Status: DeliveryPending, NextAttemptAt: 4, CreatedAt: 4}
	d.ID, d.EventID = DeliveryID(d.Seq), EventID(d.EventSeq)
	var first Encoder // format 1's delivery record, by hand
	for _, f := range []func(){
		func() { first.uvarint(3) }, func() { first.str("org_a") }, func() { first.str("whe_1") },
		func() { first.uvarint(5) }, func() { first.str(EventAccountCredited) }, func() { first.str("acct_1") },
		func() { first.bool(false) }, func() { first.u8(uint8(DeliveryPending)) },
		func() { first.varint(0) }, func() { first.varint(0) }, func() { first.varint(0) }, func() { first.str("") },
		func() { first.varint(4) }, func() { first.varint(0) }, func() { first.varint(4) },
	} {
		f()
	}
	var stored Encoder
	encodeWebhookDelivery(&stored, &d)
	if !bytes.Equal(stored.buf, first.buf) {
		t.Fatalf("a delivery never attempted is stored as %x, want format 1's %x", stored.buf, first.buf)
	}
	dec := Decoder{buf: first.buf}
	if got := decodeWebhookDelivery(&dec); dec.err != nil || len(dec.buf) != 0 || !reflect.DeepEqual(got, d) {
		t.Fatalf("a format 1 record read as %+v, %v", got, dec.err)
	}
	d.Attempts, d.Step, d.LastStatusCode, d.LastError = 2, 2, 503, "HTTP 503"
	d.History = []DeliveryAttempt{{Number: 1, At: 5, StatusCode: 0, Error: "connection refused"},
		{Number: 2, StartedAt: 6, At: 8, Succeeded: false, StatusCode: 503, Error: "HTTP 503"}}
	stored.buf = stored.buf[:0]
	encodeWebhookDelivery(&stored, &d)
	dec = Decoder{buf: stored.buf}
	if got := decodeWebhookDelivery(&dec); dec.err != nil || len(dec.buf) != 0 || !reflect.DeepEqual(got, d) {
		t.Fatalf("read back as %+v, %v", got, dec.err)
	}
	empty := append(bytes.Clone(first.buf), 0) // an appended history of none would not re-encode as read
	dec = Decoder{buf: empty}
	if decodeWebhookDelivery(&dec); dec.err == nil {
		t.Fatal("an empty appended history was accepted")
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
