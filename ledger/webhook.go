package ledger

import (
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Webhooks: endpoints that subscribe to event types, and one delivery per
// event per subscribed endpoint. Deliveries are made in the same Apply as
// the event (an event hook), so a committed change has its deliveries and
// an uncommitted one has none. Attempts, their outcomes and the endpoint's
// failure count are commands too: a new leader knows which deliveries are
// still pending and when each is due, and never resends one that was
// acknowledged.
//
// What happens on the wire (the timeout, the retry schedule and its jitter,
// signing) is the leader's business: it carries the next attempt's time in
// RecordWebhookAttempt, so a replay never depends on configuration. What
// the ledger decides is the life of a delivery and of its endpoint:
//
//	delivery: pending ──2xx──▶ success
//	             │ └──failure, RetryAt set──▶ pending (due at RetryAt)
//	             └──failure, no RetryAt / test / endpoint disabled or deleted──▶ failed
//	endpoint: active ──WebhookFailuresMax failures in a row, or 410──▶ disabled
//	            ▲ └──PATCH status disabled──▶ disabled (manual)
//	            └──────PATCH status active (failureCount reset)───┘

// Command kinds of webhooks (70–89).
const (
	KindCreateWebhookEndpoint Kind = 70
	KindUpdateWebhookEndpoint Kind = 71
	KindDeleteWebhookEndpoint Kind = 72
	KindRotateWebhookSecret   Kind = 73
	KindSendWebhookTest       Kind = 74
	KindRecordWebhookAttempt  Kind = 75
	KindRetryWebhookDelivery  Kind = 76
	// KindRecordWebhookAttemptTimed is KindRecordWebhookAttempt with the
	// attempt's start appended, so a delivery's history says how long each
	// attempt took; an attempt recorded without a start keeps kind 75.
	KindRecordWebhookAttemptTimed Kind = 77
)

// SubjectWebhookEndpoint is the subject of webhook.test events.
const SubjectWebhookEndpoint SubjectKind = 30

// EventWebhookTest is the event POST /v1/webhooks/endpoints/{id}/test
// sends. It goes to that endpoint only and is never retried; endpoints
// cannot subscribe to it.
const EventWebhookTest = "webhook.test"

// Limits of webhooks.
const (
	WebhookEndpointsMax = 16 // endpoints per organization, deleted ones aside
	// WebhookFailuresMax failed attempts in a row disable an endpoint.
	WebhookFailuresMax = 10
	// WebhookSecretOverlapMillis is how long, after a rotation, deliveries
	// are signed with the previous secret too.
	WebhookSecretOverlapMillis = 24 * 60 * 60 * 1000
	webhookErrorLenMax         = 500
	// WebhookAttemptsKept is how many of a delivery's latest attempts its
	// history keeps: a whole default retry schedule (nine attempts) and
	// one more. Older ones leave the history; Attempts still counts them.
	WebhookAttemptsKept = 10
	// webhookAttemptErrorLenMax bounds each kept attempt's error, so that
	// a pending delivery's history stays small in the hot tier; the
	// latest error is kept whole (up to webhookErrorLenMax) in LastError.
	webhookAttemptErrorLenMax = 200
)

// Endpoint statuses and the reasons for a disabled one (API values).
const (
	WebhookActive   = "active"
	WebhookDisabled = "disabled"

	DisabledManual              = "manual"
	DisabledConsecutiveFailures = "consecutive_failures"
	DisabledGone                = "endpoint_gone" // the receiver answered 410 Gone
)

// WebhookEndpoint is a URL that receives an organization's events.
type WebhookEndpoint struct {
	ID             string
	OrgID          string
	URL            string
	Description    string
	Events         []string // event types, or ["*"]; replaced, never mutated
	Status         string
	DisabledReason string
	FailureCount   int64 // failed attempts in a row
	Deleted        bool

	// Secret signs deliveries ("whsec_…"). PreviousSecret, until
	// PreviousUntil (unix ms), signs them too, so receivers can switch
	// over after a rotation.
	Secret         string
	PreviousSecret string
	PreviousUntil  int64

	CreatedAt int64
	UpdatedAt int64
}

// Subscribed reports whether the endpoint wants events of type typ.
func (e *WebhookEndpoint) Subscribed(typ string) bool {
	return slices.Contains(e.Events, "*") || slices.Contains(e.Events, typ)
}

// Secrets returns the secrets that sign a delivery at time at (unix ms):
// the current one, and the previous one during the rotation window.
func (e *WebhookEndpoint) Secrets(at int64) []string {
	if e.PreviousSecret != "" && at < e.PreviousUntil {
		return []string{e.Secret, e.PreviousSecret}
	}
	return []string{e.Secret}
}

// DeliveryStatus is where a delivery is in its life.
type DeliveryStatus uint8

// Delivery statuses. Values are frozen.
const (
	DeliveryPending DeliveryStatus = 1
	DeliverySuccess DeliveryStatus = 2
	DeliveryFailed  DeliveryStatus = 3
)

var deliveryStatusNames = [...]string{"", "pending", "success", "failed"}

func (s DeliveryStatus) String() string {
	if int(s) < len(deliveryStatusNames) {
		return deliveryStatusNames[s]
	}
	return "unknown"
}

// ParseDeliveryStatus returns the status with the given API name.
func ParseDeliveryStatus(name string) (DeliveryStatus, bool) {
	for i := 1; i < len(deliveryStatusNames); i++ {
		if deliveryStatusNames[i] == name {
			return DeliveryStatus(i), true
		}
	}
	return 0, false
}

// WebhookDelivery is one event on its way to one endpoint. Its id is the
// webhook-id header of every attempt, so receivers can drop repeats.
type WebhookDelivery struct {
	Seq        uint64 // position among all deliveries, from 1
	ID         string // DeliveryID(Seq)
	OrgID      string
	EndpointID string
	EventSeq   uint64
	EventID    string
	EventType  string
	ResourceID string
	Test       bool // a webhook.test: one attempt, never retried

	Status         DeliveryStatus
	Attempts       int64 // every attempt made, over all replays
	Step           int64 // attempts since the schedule last started
	LastStatusCode int64 // 0: no HTTP answer
	LastError      string
	NextAttemptAt  int64 // unix ms; when pending
	CompletedAt    int64
	CreatedAt      int64
	// History is the latest attempts, oldest first, at most
	// WebhookAttemptsKept of them (an appended field, doc.go).
	History []DeliveryAttempt
}

// DeliveryAttempt is one attempt of a delivery as the leader reported it.
type DeliveryAttempt struct {
	Number     int64 // the delivery's Attempts after it: 1 for the first, over all replays
	StartedAt  int64 // unix ms; 0 when not reported (kind 75)
	At         int64 // unix ms; when its outcome was known
	Succeeded  bool
	StatusCode int64 // 0: no HTTP answer
	Error      string
}

// DeliveryID is the public id of the delivery at seq.
func DeliveryID(seq uint64) string {
	return "whd_" + strconv.FormatUint(scramble(seq^0x5bd1e995), 36)
}

// The kinds of webhooks: endpoints stay open for good (they grow with
// merchants); a delivery stays open while pending (a failed one is opened
// again by a retry).
var webhookEndpointKind = &kind[WebhookEndpoint]{
	tag: tagWebhookEndpoint, name: "webhook endpoint",
	id:  func(e *WebhookEndpoint) (string, string) { return e.ID, e.OrgID },
	enc: encodeWebhookEndpoint, dec: decodeWebhookEndpoint,
}

var webhookDeliveryKind = &kind[WebhookDelivery]{
	tag: tagWebhookDelivery, name: "webhook delivery",
	id:  func(d *WebhookDelivery) (string, string) { return d.ID, d.OrgID },
	enc: encodeWebhookDelivery, dec: decodeWebhookDelivery,
	open: func(d *WebhookDelivery) bool { return d.Status == DeliveryPending },
	filters: []filter[WebhookDelivery]{
		{indexParent, func(d *WebhookDelivery) string { return d.EndpointID }},
		{indexEvent, func(d *WebhookDelivery) string { return d.EventID }},
		{indexStatus, func(d *WebhookDelivery) string { return terminalName(d.Status != DeliveryPending, d.Status.String()) }},
	},
}

// webhookState is the webhook records and the indexes of the open ones
// (rebuilt by Load).
type webhookState struct {
	endpoints  *store[WebhookEndpoint]
	deliveries *store[WebhookDelivery]

	liveEndpoints map[string]int                 // org → endpoints not deleted
	pendingByEnd  map[string]map[string]struct{} // endpoint → pending delivery ids
}

// initWebhooks adds the webhook stores to a new State and hooks the
// delivery fan-out to every event.
func (s *State) initWebhooks() {
	w := &s.webhooks
	w.liveEndpoints = make(map[string]int)
	w.pendingByEnd = make(map[string]map[string]struct{})
	w.endpoints = addStore(s, webhookEndpointKind)
	w.endpoints.index = func(e *WebhookEndpoint) {
		if !e.Deleted {
			s.webhooks.liveEndpoints[e.OrgID]++
		}
	}
	w.deliveries = addStore(s, webhookDeliveryKind)
	w.deliveries.index = func(d *WebhookDelivery) { s.webhooks.track(*d) }
	s.eventHooks = append(s.eventHooks, fanOutWebhooks)
}

// track keeps the pending indexes in step with a delivery's status.
func (w *webhookState) track(d WebhookDelivery) {
	if d.Status == DeliveryPending {
		set := w.pendingByEnd[d.EndpointID]
		if set == nil {
			set = make(map[string]struct{})
			w.pendingByEnd[d.EndpointID] = set
		}
		set[d.ID] = struct{}{}
		return
	}
	if set := w.pendingByEnd[d.EndpointID]; set != nil {
		delete(set, d.ID)
		if len(set) == 0 {
			delete(w.pendingByEnd, d.EndpointID)
		}
	}
}

func (w *webhookState) putDelivery(d WebhookDelivery) {
	w.deliveries.put(d)
	w.track(d)
}

// newDelivery records a pending delivery of ev to endpoint, due at once:
// at leader time at. Deliveries, their schedule and their attempts are on
// real time whatever the organization's sandbox clock says (clock.go).
func (s *State) newDelivery(ev Event, at int64, endpointID string, test bool) WebhookDelivery {
	w := &s.webhooks
	seq := w.deliveries.nextSeq()
	d := WebhookDelivery{
		Seq: seq, ID: DeliveryID(seq), OrgID: ev.OrgID, EndpointID: endpointID,
		EventSeq: ev.Seq, EventID: EventID(ev.Seq), EventType: ev.Type, ResourceID: ev.ResourceID, Test: test,
		Status: DeliveryPending, NextAttemptAt: at, CreatedAt: at,
	}
	w.deliveries.insert(d)
	w.track(d)
	return d
}

// fanOutWebhooks gives ev one delivery per active endpoint of its
// organization that subscribes to its type, in the endpoints' creation
// order.
func fanOutWebhooks(s *State, ev Event) {
	if ev.Type == EventWebhookTest {
		return
	}
	at := s.RealTime(ev.OrgID, ev.At) // emit put the event on the organization's clock
	s.webhooks.endpoints.each(ev.OrgID, func(e WebhookEndpoint) {
		if e.Deleted || e.Status != WebhookActive || !e.Subscribed(ev.Type) {
			return
		}
		s.newDelivery(ev, at, e.ID, false)
	})
}

// failPending ends every pending delivery of an endpoint that stopped
// (disabled or deleted), except keep, in id order.
func (s *State) failPending(endpointID, reason string, at int64, keep string) {
	set := s.webhooks.pendingByEnd[endpointID]
	ids := make([]string, 0, len(set))
	for id := range set {
		if id != keep {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		d, _ := s.webhooks.deliveries.get(id)
		d.Status = DeliveryFailed
		d.LastError = reason
		d.NextAttemptAt = 0
		d.CompletedAt = at
		s.webhooks.putDelivery(d)
	}
}

// disable stops an endpoint and fails its pending deliveries.
func (s *State) disableEndpoint(e *WebhookEndpoint, reason string, at int64, keep string) {
	e.Status = WebhookDisabled
	e.DisabledReason = reason
	e.UpdatedAt = s.OrgNow(e.OrgID, at)
	s.failPending(e.ID, "endpoint_disabled", at, keep)
}

// ValidWebhookEvents reports whether events is a valid subscription:
// ["*"], or distinct known event types. It returns a message otherwise.
func ValidWebhookEvents(events []string) string {
	if len(events) == 0 {
		return "must list at least one event type, or \"*\""
	}
	if slices.Contains(events, "*") {
		if len(events) != 1 {
			return "must be [\"*\"] alone, or a list of event types"
		}
		return ""
	}
	for i, ev := range events {
		if !slices.Contains(EventTypes, ev) {
			return strconv.Quote(ev) + " is not an event type"
		}
		if slices.Contains(events[:i], ev) {
			return strconv.Quote(ev) + " is listed twice"
		}
	}
	return ""
}

// CreateWebhookEndpoint registers an endpoint with its first secret.
type CreateWebhookEndpoint struct {
	At          int64
	ID          string
	OrgID       string
	URL         string
	Description string
	Events      []string
	Secret      string
}

// UpdateWebhookEndpoint changes the fields whose Set flag is true.
type UpdateWebhookEndpoint struct {
	At             int64
	ID             string
	OrgID          string
	SetURL         bool
	URL            string
	SetDescription bool
	Description    string
	SetEvents      bool
	Events         []string
	SetStatus      bool
	Status         string // WebhookActive or WebhookDisabled
}

// DeleteWebhookEndpoint removes an endpoint; its pending deliveries fail.
type DeleteWebhookEndpoint struct {
	At    int64
	ID    string
	OrgID string
}

// RotateWebhookSecret replaces an endpoint's secret; the old one keeps
// signing for WebhookSecretOverlapMillis.
type RotateWebhookSecret struct {
	At     int64
	ID     string
	OrgID  string
	Secret string
}

// SendWebhookTest records a webhook.test event and its one delivery.
type SendWebhookTest struct {
	At         int64
	OrgID      string
	EndpointID string
}

// RecordWebhookAttempt records the outcome of one attempt of a delivery.
// Attempt is the attempt's number (the delivery's Attempts plus one): a
// stale report, from a leader that was replaced mid-attempt, is refused.
type RecordWebhookAttempt struct {
	At         int64 // unix ms; when the attempt's outcome was known
	DeliveryID string
	Attempt    int64
	Succeeded  bool
	StatusCode int64 // 0: no HTTP answer
	Error      string
	// RetryAt is when to try again (unix ms) after a failure; 0 when the
	// schedule is exhausted.
	RetryAt int64
	// StartedAt is when the attempt was sent (unix ms); 0 when unknown.
	StartedAt int64
}

// RetryWebhookDelivery sends a delivery again with a fresh schedule: a
// pending or failed one in place, a successful one as a new delivery.
type RetryWebhookDelivery struct {
	At         int64
	OrgID      string
	DeliveryID string
}

func (*CreateWebhookEndpoint) Kind() Kind { return KindCreateWebhookEndpoint }
func (*UpdateWebhookEndpoint) Kind() Kind { return KindUpdateWebhookEndpoint }
func (*DeleteWebhookEndpoint) Kind() Kind { return KindDeleteWebhookEndpoint }
func (*RotateWebhookSecret) Kind() Kind   { return KindRotateWebhookSecret }
func (*SendWebhookTest) Kind() Kind       { return KindSendWebhookTest }
func (*RetryWebhookDelivery) Kind() Kind  { return KindRetryWebhookDelivery }

// Kind is KindRecordWebhookAttemptTimed when the command carries the
// attempt's start: its encoding has that field appended.
func (c *RecordWebhookAttempt) Kind() Kind {
	if c.StartedAt != 0 {
		return KindRecordWebhookAttemptTimed
	}
	return KindRecordWebhookAttempt
}

func webhookNotFound() *Error         { return Errorf(CodeNotFound, "Webhook endpoint not found") }
func webhookDeliveryNotFound() *Error { return Errorf(CodeNotFound, "Webhook delivery not found") }

// liveEndpoint returns org's endpoint id unless it is deleted.
func (s *State) liveEndpoint(org, id string) (WebhookEndpoint, *Error) {
	e, ok := s.webhooks.endpoints.owned(org, id)
	if !ok || e.Deleted {
		return e, webhookNotFound()
	}
	return e, nil
}

func checkSecret(secret string) *Error {
	if len(secret) < len("whsec_")+32 || secret[:6] != "whsec_" {
		return Errorf(CodeValidation, "webhook secret must be whsec_ and base64 of 24 to 32 bytes")
	}
	return nil
}

func (c *CreateWebhookEndpoint) Apply(s *State) Result {
	if err := s.checkNew(c.ID, "whe_", c.OrgID); err != nil {
		return Result{Err: err}
	}
	if _, ok := s.webhooks.endpoints.get(c.ID); ok {
		return Result{Err: Errorf(CodeConflict, "webhook endpoint %s already exists", c.ID)}
	}
	if c.URL == "" {
		return Result{Err: FieldInvalid("url", "is required")}
	}
	if msg := ValidWebhookEvents(c.Events); msg != "" {
		return Result{Err: FieldInvalid("events", msg)}
	}
	if err := checkSecret(c.Secret); err != nil {
		return Result{Err: err}
	}
	if s.webhooks.liveEndpoints[c.OrgID] >= WebhookEndpointsMax {
		return Result{Err: Errorf(CodeBadRequest, "An organization can have at most %d webhook endpoints; delete one first", WebhookEndpointsMax)}
	}
	e := WebhookEndpoint{
		ID: c.ID, OrgID: c.OrgID, URL: c.URL, Description: c.Description, Events: slices.Clone(c.Events),
		Status: WebhookActive, Secret: c.Secret, CreatedAt: s.OrgNow(c.OrgID, c.At), UpdatedAt: s.OrgNow(c.OrgID, c.At),
	}
	s.webhooks.endpoints.insert(e)
	s.webhooks.liveEndpoints[e.OrgID]++
	return Result{WebhookEndpoint: &e}
}

func (c *UpdateWebhookEndpoint) Apply(s *State) Result {
	e, err := s.liveEndpoint(c.OrgID, c.ID)
	if err != nil {
		return Result{Err: err}
	}
	if c.SetURL && c.URL == "" {
		return Result{Err: FieldInvalid("url", "must not be empty")}
	}
	if c.SetEvents {
		if msg := ValidWebhookEvents(c.Events); msg != "" {
			return Result{Err: FieldInvalid("events", msg)}
		}
	}
	if c.SetStatus && c.Status != WebhookActive && c.Status != WebhookDisabled {
		return Result{Err: FieldInvalid("status", "must be active or disabled")}
	}
	if c.SetURL {
		e.URL = c.URL
	}
	if c.SetDescription {
		e.Description = c.Description
	}
	if c.SetEvents {
		e.Events = slices.Clone(c.Events)
	}
	e.UpdatedAt = s.OrgNow(c.OrgID, c.At)
	if c.SetStatus {
		switch c.Status {
		case WebhookActive:
			e.Status, e.DisabledReason, e.FailureCount = WebhookActive, "", 0
		case WebhookDisabled:
			if e.Status != WebhookDisabled {
				s.disableEndpoint(&e, DisabledManual, c.At, "")
			}
		}
	}
	s.webhooks.endpoints.put(e)
	return Result{WebhookEndpoint: &e}
}

func (c *DeleteWebhookEndpoint) Apply(s *State) Result {
	e, err := s.liveEndpoint(c.OrgID, c.ID)
	if err != nil {
		return Result{Err: err}
	}
	e.Deleted = true
	e.UpdatedAt = s.OrgNow(c.OrgID, c.At)
	s.webhooks.endpoints.put(e)
	s.webhooks.liveEndpoints[e.OrgID]--
	s.failPending(e.ID, "endpoint_unavailable", c.At, "")
	return Result{WebhookEndpoint: &e}
}

func (c *RotateWebhookSecret) Apply(s *State) Result {
	e, err := s.liveEndpoint(c.OrgID, c.ID)
	if err != nil {
		return Result{Err: err}
	}
	if err := checkSecret(c.Secret); err != nil {
		return Result{Err: err}
	}
	e.PreviousSecret = e.Secret
	e.PreviousUntil = c.At + WebhookSecretOverlapMillis
	e.Secret = c.Secret
	e.UpdatedAt = s.OrgNow(c.OrgID, c.At)
	s.webhooks.endpoints.put(e)
	return Result{WebhookEndpoint: &e}
}

// subject is the endpoint as an event subject: without its secrets.
func (e WebhookEndpoint) subject() WebhookEndpoint {
	e.Secret, e.PreviousSecret, e.PreviousUntil = "", "", 0
	return e
}

func (c *SendWebhookTest) Apply(s *State) Result {
	e, err := s.liveEndpoint(c.OrgID, c.EndpointID)
	if err != nil {
		return Result{Err: err}
	}
	ev := s.emit(c.At, e.OrgID, EventWebhookTest, e.ID, e.subject())
	d := s.newDelivery(ev, c.At, e.ID, true)
	return Result{WebhookDelivery: &d}
}

func (c *RecordWebhookAttempt) Apply(s *State) Result {
	d, ok := s.webhooks.deliveries.get(c.DeliveryID)
	if !ok {
		return Result{Err: webhookDeliveryNotFound()}
	}
	if d.Status != DeliveryPending || c.Attempt != d.Attempts+1 {
		return Result{Err: Errorf(CodeConflict, "delivery %s is %s after %d attempts; attempt %d is stale",
			d.ID, d.Status, d.Attempts, c.Attempt)}
	}
	msg := CutText(c.Error, webhookErrorLenMax)
	d.Attempts++
	d.Step++
	d.LastStatusCode = c.StatusCode
	d.LastError = msg
	d.History = appendAttempt(d.History, c, msg)
	e, _ := s.webhooks.endpoints.get(d.EndpointID)
	counts := !e.Deleted && e.Status == WebhookActive
	if c.Succeeded {
		d.Status, d.LastError, d.NextAttemptAt, d.CompletedAt = DeliverySuccess, "", 0, c.At
		s.webhooks.putDelivery(d)
		if counts && e.FailureCount != 0 {
			e.FailureCount = 0
			s.webhooks.endpoints.put(e)
		}
		return Result{WebhookDelivery: &d}
	}
	disabled := false
	if counts {
		e.FailureCount++
		reason := ""
		switch {
		case c.StatusCode == 410:
			reason = DisabledGone
		case e.FailureCount >= WebhookFailuresMax:
			reason = DisabledConsecutiveFailures
		}
		if reason != "" {
			s.disableEndpoint(&e, reason, c.At, d.ID)
			disabled = true
		}
		s.webhooks.endpoints.put(e)
	}
	if d.Test || c.RetryAt == 0 || disabled {
		d.Status, d.NextAttemptAt, d.CompletedAt = DeliveryFailed, 0, c.At
	} else {
		d.NextAttemptAt = max(c.RetryAt, c.At)
	}
	s.webhooks.putDelivery(d)
	return Result{WebhookDelivery: &d}
}

// CutText is s cut to at most n bytes, before a character, never inside
// one.
func CutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// appendAttempt is history with c's attempt added and the oldest dropped
// beyond WebhookAttemptsKept. It never writes into history's array, which
// the delivery's earlier versions share.
func appendAttempt(history []DeliveryAttempt, c *RecordWebhookAttempt, msg string) []DeliveryAttempt {
	msg = CutText(msg, webhookAttemptErrorLenMax)
	start := c.StartedAt
	if start > c.At {
		start = 0 // a start after the outcome is not a start
	}
	keep := history[max(0, len(history)-(WebhookAttemptsKept-1)):]
	out := make([]DeliveryAttempt, 0, len(keep)+1)
	out = append(out, keep...)
	return append(out, DeliveryAttempt{
		Number: c.Attempt, StartedAt: start, At: c.At,
		Succeeded: c.Succeeded, StatusCode: c.StatusCode, Error: msg,
	})
}

func (c *RetryWebhookDelivery) Apply(s *State) Result {
	d, ok := s.webhooks.deliveries.owned(c.OrgID, c.DeliveryID)
	if !ok {
		return Result{Err: webhookDeliveryNotFound()}
	}
	e, ok := s.webhooks.endpoints.get(d.EndpointID)
	if !ok || e.Deleted {
		return Result{Err: Errorf(CodeBadRequest, "The delivery's webhook endpoint was deleted")}
	}
	if e.Status != WebhookActive {
		return Result{Err: Errorf(CodeBadRequest, "The webhook endpoint is disabled; set its status to active first")}
	}
	if d.Status == DeliverySuccess {
		ev, _ := s.EventAt(d.EventSeq)
		n := s.newDelivery(ev, c.At, d.EndpointID, d.Test)
		return Result{WebhookDelivery: &n}
	}
	d.Status, d.Step, d.NextAttemptAt, d.CompletedAt = DeliveryPending, 0, c.At, 0
	s.webhooks.putDelivery(d)
	return Result{WebhookDelivery: &d}
}

// Queries.

// WebhookEndpoint returns an organization's endpoint, unless deleted.
func (r *Reader) WebhookEndpoint(orgID, id string) (WebhookEndpoint, bool) {
	e, ok := readOwned(r, webhookEndpointKind, orgID, id)
	return e, ok && !e.Deleted
}

// WebhookEndpointByID returns an endpoint by id alone, deleted or not, for
// the delivery engine.
func (r *Reader) WebhookEndpointByID(id string) (WebhookEndpoint, bool) {
	return readRecord(r, webhookEndpointKind, id)
}

// WebhookEndpoints returns one page of an organization's endpoints, newest
// first.
func (r *Reader) WebhookEndpoints(orgID string, before Cursor, limit int) Page[WebhookEndpoint] {
	k := webhookEndpointKind
	return readPage(r, k, k.listPrefix(orgID), before, limit, func(e *WebhookEndpoint) bool { return !e.Deleted })
}

// WebhookDelivery returns an organization's delivery.
func (r *Reader) WebhookDelivery(orgID, id string) (WebhookDelivery, bool) {
	return readOwned(r, webhookDeliveryKind, orgID, id)
}

// WebhookDeliveryByID returns a delivery by id alone, for the engine.
func (r *Reader) WebhookDeliveryByID(id string) (WebhookDelivery, bool) {
	return readRecord(r, webhookDeliveryKind, id)
}

// DeliveryFilter selects deliveries in a list; zero fields match all.
type DeliveryFilter struct {
	EndpointID string
	EventID    string
	Status     DeliveryStatus
}

// WebhookDeliveries returns one page of an organization's deliveries,
// newest first.
func (r *Reader) WebhookDeliveries(orgID string, f DeliveryFilter, before Cursor, limit int) Page[WebhookDelivery] {
	k := webhookDeliveryKind
	prefix := k.listPrefix(orgID)
	switch {
	case f.EventID != "":
		prefix = k.filterPrefix(indexEvent, orgID, f.EventID)
	case f.EndpointID != "":
		prefix = k.filterPrefix(indexParent, orgID, f.EndpointID)
	case f.Status == DeliveryPending:
		prefix = k.openPrefix(orgID)
	case f.Status != 0:
		prefix = k.filterPrefix(indexStatus, orgID, f.Status.String())
	}
	return readPage(r, k, prefix, before, limit, func(d *WebhookDelivery) bool {
		return (f.EndpointID == "" || d.EndpointID == f.EndpointID) &&
			(f.EventID == "" || d.EventID == f.EventID) &&
			(f.Status == 0 || d.Status == f.Status)
	})
}

// WebhookDeliveryCount is the number of deliveries ever made.
func (r *Reader) WebhookDeliveryCount() uint64 { return readKindSeq(r.kv, webhookDeliveryKind.tag) }

// WebhookDeliveryAt returns the delivery at seq (from 1), for the engine
// that follows new deliveries in order.
func (r *Reader) WebhookDeliveryAt(seq uint64) (WebhookDelivery, bool) {
	if seq == 0 {
		return WebhookDelivery{}, false
	}
	return r.WebhookDeliveryByID(DeliveryID(seq))
}

// PendingWebhookDeliveryCount counts the pending deliveries, walking them.
func (r *Reader) PendingWebhookDeliveryCount() int {
	n := 0
	var cursor OpenCursor
	for {
		page, next, done := r.PendingWebhookDeliveries(cursor, 1024)
		n += len(page)
		if done {
			return n
		}
		cursor = next
	}
}

// PendingWebhookDeliveries walks the pending deliveries, a new leader's
// work; see OpenPayouts.
func (r *Reader) PendingWebhookDeliveries(after OpenCursor, limit int) ([]WebhookDelivery, OpenCursor, bool) {
	return readOpen(r, webhookDeliveryKind, after, limit)
}

// Codecs.

func encodeWebhookEndpoint(e *Encoder, w *WebhookEndpoint) {
	e.str(w.ID)
	e.str(w.OrgID)
	e.str(w.URL)
	e.str(w.Description)
	e.strs(w.Events)
	e.str(w.Status)
	e.str(w.DisabledReason)
	e.varint(w.FailureCount)
	e.bool(w.Deleted)
	e.str(w.Secret)
	e.str(w.PreviousSecret)
	e.varint(w.PreviousUntil)
	e.varint(w.CreatedAt)
	e.varint(w.UpdatedAt)
}

func decodeWebhookEndpoint(d *Decoder) WebhookEndpoint {
	return WebhookEndpoint{
		ID: d.str(), OrgID: d.str(), URL: d.str(), Description: d.str(), Events: d.strs(),
		Status: d.str(), DisabledReason: d.str(), FailureCount: d.varint(), Deleted: d.bool(),
		Secret: d.str(), PreviousSecret: d.str(), PreviousUntil: d.varint(),
		CreatedAt: d.varint(), UpdatedAt: d.varint(),
	}
}

func encodeWebhookDelivery(e *Encoder, w *WebhookDelivery) {
	e.uvarint(w.Seq)
	e.str(w.OrgID)
	e.str(w.EndpointID)
	e.uvarint(w.EventSeq)
	e.str(w.EventType)
	e.str(w.ResourceID)
	e.bool(w.Test)
	e.u8(uint8(w.Status))
	e.varint(w.Attempts)
	e.varint(w.Step)
	e.varint(w.LastStatusCode)
	e.str(w.LastError)
	e.varint(w.NextAttemptAt)
	e.varint(w.CompletedAt)
	e.varint(w.CreatedAt)
	if len(w.History) > 0 { // appended (doc.go): a delivery never attempted is format 1's
		e.uvarint(uint64(len(w.History)))
		for i := range w.History {
			a := &w.History[i]
			e.varint(a.Number)
			e.varint(a.StartedAt)
			e.varint(a.At)
			e.bool(a.Succeeded)
			e.varint(a.StatusCode)
			e.str(a.Error)
		}
	}
}

func decodeWebhookDelivery(d *Decoder) WebhookDelivery {
	w := WebhookDelivery{
		Seq: d.uvarint(), OrgID: d.str(), EndpointID: d.str(), EventSeq: d.uvarint(),
		EventType: d.str(), ResourceID: d.str(), Test: d.bool(), Status: DeliveryStatus(d.u8()),
		Attempts: d.varint(), Step: d.varint(), LastStatusCode: d.varint(), LastError: d.str(),
		NextAttemptAt: d.varint(), CompletedAt: d.varint(), CreatedAt: d.varint(),
	}
	if d.more() {
		n := d.count()
		if n == 0 && d.err == nil {
			d.fail(errors.New("ledger: empty appended delivery history"))
		}
		w.History = make([]DeliveryAttempt, n)
		for i := range w.History {
			w.History[i] = DeliveryAttempt{Number: d.varint(), StartedAt: d.varint(), At: d.varint(),
				Succeeded: d.bool(), StatusCode: d.varint(), Error: d.str()}
		}
	}
	w.ID = DeliveryID(w.Seq)
	w.EventID = EventID(w.EventSeq)
	return w
}

func (c *CreateWebhookEndpoint) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.URL)
	f.Str(&c.Description)
	f.Strs(&c.Events)
	f.Str(&c.Secret)
}

func (c *CreateWebhookEndpoint) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *UpdateWebhookEndpoint) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Bool(&c.SetURL)
	f.Str(&c.URL)
	f.Bool(&c.SetDescription)
	f.Str(&c.Description)
	f.Bool(&c.SetEvents)
	f.Strs(&c.Events)
	f.Bool(&c.SetStatus)
	f.Str(&c.Status)
}

func (c *UpdateWebhookEndpoint) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *DeleteWebhookEndpoint) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
}

func (c *DeleteWebhookEndpoint) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *RotateWebhookSecret) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.Secret)
}

func (c *RotateWebhookSecret) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *SendWebhookTest) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID)
	f.Str(&c.EndpointID)
}

func (c *SendWebhookTest) Encode(e *Encoder) { c.fields(e.Codec()) }

// fields are the attempt's fields but StartedAt, which only the timed kind
// appends.
func (c *RecordWebhookAttempt) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.DeliveryID)
	f.Varint(&c.Attempt)
	f.Bool(&c.Succeeded)
	f.Varint(&c.StatusCode)
	f.Str(&c.Error)
	f.Varint(&c.RetryAt)
}

func (c *RecordWebhookAttempt) Encode(e *Encoder) {
	c.fields(e.Codec())
	if c.StartedAt != 0 {
		e.varint(c.StartedAt)
	}
}

func (c *RetryWebhookDelivery) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID)
	f.Str(&c.DeliveryID)
}

func (c *RetryWebhookDelivery) Encode(e *Encoder) { c.fields(e.Codec()) }

func (WebhookEndpoint) subjectKind() SubjectKind { return SubjectWebhookEndpoint }

func init() {
	registerFields[CreateWebhookEndpoint](KindCreateWebhookEndpoint)
	registerFields[UpdateWebhookEndpoint](KindUpdateWebhookEndpoint)
	registerFields[DeleteWebhookEndpoint](KindDeleteWebhookEndpoint)
	registerFields[RotateWebhookSecret](KindRotateWebhookSecret)
	registerFields[SendWebhookTest](KindSendWebhookTest)
	registerFields[RecordWebhookAttempt](KindRecordWebhookAttempt)
	RegisterCommand(KindRecordWebhookAttemptTimed, func(d *Decoder) Command {
		c := new(RecordWebhookAttempt)
		c.fields(d.Codec())
		c.StartedAt = d.varint()
		if c.StartedAt == 0 && d.err == nil {
			d.fail(errors.New("ledger: timed webhook attempt without a start")) // would re-encode as kind 75
		}
		return c
	})
	registerFields[RetryWebhookDelivery](KindRetryWebhookDelivery)
	registerSubject(SubjectWebhookEndpoint,
		func(e *Encoder, s Subject) { w := s.(WebhookEndpoint); encodeWebhookEndpoint(e, &w) },
		func(d *Decoder) Subject { return decodeWebhookEndpoint(d) })
}

// KindOfSubject returns the record type of an event's subject, for the
// API's table of renderers.
func KindOfSubject(s Subject) SubjectKind { return s.subjectKind() }
