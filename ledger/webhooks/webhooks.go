// Package webhooks is the ledger's webhooks: endpoints that subscribe to
// event types, and one delivery per event per subscribed endpoint. It is
// a feature of the ledger's kernel (ledger/feature.go): its commands are
// applied by ledger.State.Apply in log order like every other, and its
// records are kept in the state store under tags ledger.TagWebhookEndpoint
// and ledger.TagWebhookDelivery.
//
// Deliveries are made in the same Apply as the event (an event hook), so a
// committed change has its deliveries and an uncommitted one has none.
// Attempts, their outcomes and the endpoint's failure count are commands
// too: a new leader knows which deliveries are still pending and when each
// is due, and never resends one that was acknowledged.
//
// What happens on the wire (the timeout, the retry schedule and its jitter,
// signing) is the leader's business: it carries the next attempt's time in
// RecordAttempt, so a replay never depends on configuration. What the
// ledger decides is the life of a delivery and of its endpoint:
//
//	delivery: pending ──2xx──▶ success
//	             │ └──failure, RetryAt set──▶ pending (due at RetryAt)
//	             └──failure, no RetryAt / test / endpoint disabled or deleted──▶ failed
//	endpoint: active ──FailuresMax failures in a row, or 410──▶ disabled
//	            ▲ └──PATCH status disabled──▶ disabled (manual)
//	            └──────PATCH status active (failureCount reset)───┘
package webhooks

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"payments/ledger"
)

// Command kinds of webhooks (range 70–89, see ledger/extend.go).
const (
	KindCreateEndpoint ledger.Kind = 70
	KindUpdateEndpoint ledger.Kind = 71
	KindDeleteEndpoint ledger.Kind = 72
	KindRotateSecret   ledger.Kind = 73
	KindSendTest       ledger.Kind = 74
	KindRecordAttempt  ledger.Kind = 75
	KindRetryDelivery  ledger.Kind = 76
	// KindRecordAttemptTimed is KindRecordAttempt with the attempt's start
	// appended, so a delivery's history says how long each attempt took;
	// an attempt recorded without a start keeps kind 75.
	KindRecordAttemptTimed ledger.Kind = 77
)

// SubjectEndpoint is the subject of webhook.test events (subject kinds
// 30–39, see ledger/event.go).
const SubjectEndpoint ledger.SubjectKind = 30

// EventTest is the event POST /v1/webhooks/endpoints/{id}/test sends. It
// goes to that endpoint only and is never retried; endpoints cannot
// subscribe to it.
const EventTest = "webhook.test"

// Limits of webhooks.
const (
	EndpointsMax = 16 // endpoints per organization, deleted ones aside
	// FailuresMax failed attempts in a row disable an endpoint.
	FailuresMax = 10
	// SecretOverlapMillis is how long, after a rotation, deliveries are
	// signed with the previous secret too.
	SecretOverlapMillis = 24 * 60 * 60 * 1000
	errorLenMax         = 500
	// AttemptsKept is how many of a delivery's latest attempts its history
	// keeps: a whole default retry schedule (nine attempts) and one more.
	// Older ones leave the history; Attempts still counts them.
	AttemptsKept = 10
	// attemptErrorLenMax bounds each kept attempt's error, so that a
	// pending delivery's history stays small in the hot tier; the latest
	// error is kept whole (up to errorLenMax) in LastError.
	attemptErrorLenMax = 200
)

// Endpoint statuses and the reasons for a disabled one (API values).
const (
	Active   = "active"
	Disabled = "disabled"

	DisabledManual              = "manual"
	DisabledConsecutiveFailures = "consecutive_failures"
	DisabledGone                = "endpoint_gone" // the receiver answered 410 Gone
)

// Endpoint is a URL that receives an organization's events.
type Endpoint struct {
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
func (e *Endpoint) Subscribed(typ string) bool {
	return slices.Contains(e.Events, "*") || slices.Contains(e.Events, typ)
}

// Secrets returns the secrets that sign a delivery at time at (unix ms):
// the current one, and the previous one during the rotation window.
func (e *Endpoint) Secrets(at int64) []string {
	if e.PreviousSecret != "" && at < e.PreviousUntil {
		return []string{e.Secret, e.PreviousSecret}
	}
	return []string{e.Secret}
}

// SubjectKind makes an endpoint an event subject (of webhook.test).
func (Endpoint) SubjectKind() ledger.SubjectKind { return SubjectEndpoint }

// DeliveryStatus is where a delivery is in its life.
type DeliveryStatus uint8

// Delivery statuses. Values are frozen.
const (
	Pending DeliveryStatus = 1
	Success DeliveryStatus = 2
	Failed  DeliveryStatus = 3
)

var deliveryStatusNames = ledger.EnumNames[DeliveryStatus]{"", "pending", "success", "failed"}

func (s DeliveryStatus) String() string { return deliveryStatusNames.String(s) }

// final: only a pending delivery still changes.
func (s DeliveryStatus) final() bool { return s != Pending }

// ParseDeliveryStatus returns the status with the given API name.
func ParseDeliveryStatus(name string) (DeliveryStatus, bool) { return deliveryStatusNames.Parse(name) }

// Delivery is one event on its way to one endpoint. Its id is the
// webhook-id header of every attempt, so receivers can drop repeats.
type Delivery struct {
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
	// History is the latest attempts, oldest first, at most AttemptsKept
	// of them (an appended field, ledger/doc.go).
	History []Attempt
}

// Attempt is one attempt of a delivery as the leader reported it.
type Attempt struct {
	Number     int64 // the delivery's Attempts after it: 1 for the first, over all replays
	StartedAt  int64 // unix ms; 0 when not reported (kind 75)
	At         int64 // unix ms; when its outcome was known
	Succeeded  bool
	StatusCode int64 // 0: no HTTP answer
	Error      string
}

// DeliveryID is the public id of the delivery at seq.
func DeliveryID(seq uint64) string {
	return "whd_" + strconv.FormatUint(ledger.Scramble(seq^0x5bd1e995), 36)
}

// The kinds of webhooks: endpoints stay open for good (they grow with
// merchants); a delivery stays open while pending (a failed one is opened
// again by a retry).
var endpointKind = ledger.NewRecordKind(ledger.RecordSpec[Endpoint]{
	Tag: ledger.TagWebhookEndpoint, Name: "webhook endpoint",
	ID:     func(e *Endpoint) (string, string) { return e.ID, e.OrgID },
	Fields: (*Endpoint).fields,
})

var deliveryKind = ledger.NewRecordKind(ledger.RecordSpec[Delivery]{
	Tag: ledger.TagWebhookDelivery, Name: "webhook delivery",
	ID:     func(d *Delivery) (string, string) { return d.ID, d.OrgID },
	Fields: (*Delivery).fields,
	Open:   func(d *Delivery) bool { return d.Status == Pending },
	Filters: []ledger.Filter[Delivery]{
		{Name: ledger.IndexParent, Value: func(d *Delivery) string { return d.EndpointID }},
		{Name: ledger.IndexEvent, Value: func(d *Delivery) string { return d.EventID }},
		ledger.StatusFilter(func(d *Delivery) (bool, string) { return d.Status.final(), d.Status.String() }),
	},
})

// book is what the feature keeps in a State: the webhook records and the
// indexes of the open ones (rebuilt by Load).
type book struct {
	endpoints  ledger.Store[Endpoint]
	deliveries ledger.Store[Delivery]

	liveEndpoints map[string]int                 // org → endpoints not deleted
	pendingByEnd  map[string]map[string]struct{} // endpoint → pending delivery ids
}

// feature adds the webhook stores to every State and hooks the delivery
// fan-out to every event.
var feature = ledger.AddFeature(func(s *ledger.State) *book {
	b := &book{
		liveEndpoints: make(map[string]int),
		pendingByEnd:  make(map[string]map[string]struct{}),
		endpoints:     ledger.AddStore(s, endpointKind),
		deliveries:    ledger.AddStore(s, deliveryKind),
	}
	b.endpoints.OnLoad(func(e *Endpoint) {
		if !e.Deleted {
			b.liveEndpoints[e.OrgID]++
		}
	})
	b.deliveries.OnLoad(func(d *Delivery) { b.track(*d) })
	s.AddEventHook(b.fanOut)
	return b
})

// track keeps the pending indexes in step with a delivery's status.
func (b *book) track(d Delivery) {
	if d.Status == Pending {
		set := b.pendingByEnd[d.EndpointID]
		if set == nil {
			set = make(map[string]struct{})
			b.pendingByEnd[d.EndpointID] = set
		}
		set[d.ID] = struct{}{}
		return
	}
	if set := b.pendingByEnd[d.EndpointID]; set != nil {
		delete(set, d.ID)
		if len(set) == 0 {
			delete(b.pendingByEnd, d.EndpointID)
		}
	}
}

func (b *book) putDelivery(d Delivery) {
	b.deliveries.Put(d)
	b.track(d)
}

// newDelivery records a pending delivery of ev to endpoint, due at once:
// at leader time at. Deliveries, their schedule and their attempts are on
// real time whatever the organization's sandbox clock says (ledger/clock.go).
func (b *book) newDelivery(ev ledger.Event, at int64, endpointID string, test bool) Delivery {
	seq := b.deliveries.NextSeq()
	d := Delivery{
		Seq: seq, ID: DeliveryID(seq), OrgID: ev.OrgID, EndpointID: endpointID,
		EventSeq: ev.Seq, EventID: ledger.EventID(ev.Seq), EventType: ev.Type, ResourceID: ev.ResourceID, Test: test,
		Status: Pending, NextAttemptAt: at, CreatedAt: at,
	}
	b.deliveries.Insert(d)
	b.track(d)
	return d
}

// fanOut gives ev one delivery per active endpoint of its organization
// that subscribes to its type, in the endpoints' creation order.
func (b *book) fanOut(s *ledger.State, ev ledger.Event) {
	if ev.Type == EventTest {
		return
	}
	at := s.RealTime(ev.OrgID, ev.At) // the event is on the organization's clock
	b.endpoints.Each(ev.OrgID, func(e Endpoint) {
		if e.Deleted || e.Status != Active || !e.Subscribed(ev.Type) {
			return
		}
		b.newDelivery(ev, at, e.ID, false)
	})
}

// failPending ends every pending delivery of an endpoint that stopped
// (disabled or deleted), except keep, in id order.
func (b *book) failPending(endpointID, reason string, at int64, keep string) {
	set := b.pendingByEnd[endpointID]
	ids := make([]string, 0, len(set))
	for id := range set {
		if id != keep {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		d, _ := b.deliveries.Get(id)
		d.Status = Failed
		d.LastError = reason
		d.NextAttemptAt = 0
		d.CompletedAt = at
		b.putDelivery(d)
	}
}

// disable stops an endpoint and fails its pending deliveries.
func (b *book) disable(s *ledger.State, e *Endpoint, reason string, at int64, keep string) {
	e.Status = Disabled
	e.DisabledReason = reason
	e.UpdatedAt = s.OrgNow(e.OrgID, at)
	b.failPending(e.ID, "endpoint_disabled", at, keep)
}

// ValidEvents reports whether events is a valid subscription: ["*"], or
// distinct known event types. It returns a message otherwise.
func ValidEvents(events []string) string {
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
		if !slices.Contains(ledger.EventTypes, ev) {
			return strconv.Quote(ev) + " is not an event type"
		}
		if slices.Contains(events[:i], ev) {
			return strconv.Quote(ev) + " is listed twice"
		}
	}
	return ""
}

// CreateEndpoint registers an endpoint with its first secret.
type CreateEndpoint struct {
	At          int64
	ID          string
	OrgID       string
	URL         string
	Description string
	Events      []string
	Secret      string
}

// UpdateEndpoint changes an organization's endpoint.
type UpdateEndpoint struct {
	At    int64
	ID    string
	OrgID string
	EndpointChange
}

// EndpointChange is what an update of an endpoint changes: the fields
// whose Set flag is true. Status Active re-enables a disabled endpoint and
// clears its failure count.
type EndpointChange struct {
	SetURL         bool
	URL            string
	SetDescription bool
	Description    string
	SetEvents      bool
	Events         []string
	SetStatus      bool
	Status         string // Active or Disabled
}

// DeleteEndpoint removes an endpoint; its pending deliveries fail.
type DeleteEndpoint struct {
	At    int64
	ID    string
	OrgID string
}

// RotateSecret replaces an endpoint's secret; the old one keeps signing
// for SecretOverlapMillis.
type RotateSecret struct {
	At     int64
	ID     string
	OrgID  string
	Secret string
}

// SendTest records a webhook.test event and its one delivery.
type SendTest struct {
	At         int64
	OrgID      string
	EndpointID string
}

// RecordAttempt records the outcome of one attempt of a delivery. Attempt
// is the attempt's number (the delivery's Attempts plus one): a stale
// report, from a leader that was replaced mid-attempt, is refused.
type RecordAttempt struct {
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

// RetryDelivery sends a delivery again with a fresh schedule: a pending or
// failed one in place, a successful one as a new delivery.
type RetryDelivery struct {
	At         int64
	OrgID      string
	DeliveryID string
}

func (*CreateEndpoint) Kind() ledger.Kind { return KindCreateEndpoint }
func (*UpdateEndpoint) Kind() ledger.Kind { return KindUpdateEndpoint }
func (*DeleteEndpoint) Kind() ledger.Kind { return KindDeleteEndpoint }
func (*RotateSecret) Kind() ledger.Kind   { return KindRotateSecret }
func (*SendTest) Kind() ledger.Kind       { return KindSendTest }
func (*RetryDelivery) Kind() ledger.Kind  { return KindRetryDelivery }

// Kind is KindRecordAttemptTimed when the command carries the attempt's
// start: its encoding has that field appended.
func (c *RecordAttempt) Kind() ledger.Kind {
	if c.StartedAt != 0 {
		return KindRecordAttemptTimed
	}
	return KindRecordAttempt
}

// EndpointOf returns the endpoint a command made or changed, or nil.
func EndpointOf(res ledger.Result) *Endpoint { return ledger.ValueOf[Endpoint](res) }

// DeliveryOf returns the delivery a command made or changed, or nil.
func DeliveryOf(res ledger.Result) *Delivery { return ledger.ValueOf[Delivery](res) }

func endpointNotFound() *ledger.Error {
	return ledger.Errorf(ledger.CodeNotFound, "Webhook endpoint not found")
}

func deliveryNotFound() *ledger.Error {
	return ledger.Errorf(ledger.CodeNotFound, "Webhook delivery not found")
}

// liveEndpoint returns org's endpoint id unless it is deleted.
func (b *book) liveEndpoint(org, id string) (Endpoint, *ledger.Error) {
	e, ok := b.endpoints.Owned(org, id)
	if !ok || e.Deleted {
		return e, endpointNotFound()
	}
	return e, nil
}

func checkSecret(secret string) *ledger.Error {
	if len(secret) < len("whsec_")+32 || secret[:6] != "whsec_" {
		return ledger.Errorf(ledger.CodeValidation, "webhook secret must be whsec_ and base64 of 24 to 32 bytes")
	}
	return nil
}

func (c *CreateEndpoint) Apply(s *ledger.State) ledger.Result {
	if err := ledger.CheckID(c.ID, "whe_"); err != nil {
		return ledger.Result{Err: err}
	}
	if err := s.CheckOrg(c.OrgID); err != nil {
		return ledger.Result{Err: err}
	}
	b := feature.Of(s)
	if _, ok := b.endpoints.Get(c.ID); ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "webhook endpoint %s already exists", c.ID)}
	}
	if c.URL == "" {
		return ledger.Result{Err: ledger.FieldInvalid("url", "is required")}
	}
	if msg := ValidEvents(c.Events); msg != "" {
		return ledger.Result{Err: ledger.FieldInvalid("events", msg)}
	}
	if err := checkSecret(c.Secret); err != nil {
		return ledger.Result{Err: err}
	}
	if b.liveEndpoints[c.OrgID] >= EndpointsMax {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "An organization can have at most %d webhook endpoints; delete one first", EndpointsMax)}
	}
	e := Endpoint{
		ID: c.ID, OrgID: c.OrgID, URL: c.URL, Description: c.Description, Events: slices.Clone(c.Events),
		Status: Active, Secret: c.Secret, CreatedAt: s.OrgNow(c.OrgID, c.At), UpdatedAt: s.OrgNow(c.OrgID, c.At),
	}
	b.endpoints.Insert(e)
	b.liveEndpoints[e.OrgID]++
	return ledger.Result{Value: &e}
}

func (c *UpdateEndpoint) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	e, err := b.liveEndpoint(c.OrgID, c.ID)
	if err != nil {
		return ledger.Result{Err: err}
	}
	if c.SetURL && c.URL == "" {
		return ledger.Result{Err: ledger.FieldInvalid("url", "must not be empty")}
	}
	if c.SetEvents {
		if msg := ValidEvents(c.Events); msg != "" {
			return ledger.Result{Err: ledger.FieldInvalid("events", msg)}
		}
	}
	if c.SetStatus && c.Status != Active && c.Status != Disabled {
		return ledger.Result{Err: ledger.FieldInvalid("status", "must be active or disabled")}
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
		case Active:
			e.Status, e.DisabledReason, e.FailureCount = Active, "", 0
		case Disabled:
			if e.Status != Disabled {
				b.disable(s, &e, DisabledManual, c.At, "")
			}
		}
	}
	b.endpoints.Put(e)
	return ledger.Result{Value: &e}
}

func (c *DeleteEndpoint) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	e, err := b.liveEndpoint(c.OrgID, c.ID)
	if err != nil {
		return ledger.Result{Err: err}
	}
	e.Deleted = true
	e.UpdatedAt = s.OrgNow(c.OrgID, c.At)
	b.endpoints.Put(e)
	b.liveEndpoints[e.OrgID]--
	b.failPending(e.ID, "endpoint_unavailable", c.At, "")
	return ledger.Result{Value: &e}
}

func (c *RotateSecret) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	e, err := b.liveEndpoint(c.OrgID, c.ID)
	if err != nil {
		return ledger.Result{Err: err}
	}
	if err := checkSecret(c.Secret); err != nil {
		return ledger.Result{Err: err}
	}
	e.PreviousSecret = e.Secret
	e.PreviousUntil = c.At + SecretOverlapMillis
	e.Secret = c.Secret
	e.UpdatedAt = s.OrgNow(c.OrgID, c.At)
	b.endpoints.Put(e)
	return ledger.Result{Value: &e}
}

// subject is the endpoint as an event subject: without its secrets.
func (e Endpoint) subject() Endpoint {
	e.Secret, e.PreviousSecret, e.PreviousUntil = "", "", 0
	return e
}

func (c *SendTest) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	e, err := b.liveEndpoint(c.OrgID, c.EndpointID)
	if err != nil {
		return ledger.Result{Err: err}
	}
	ev := s.Emit(c.At, e.OrgID, EventTest, e.ID, e.subject())
	d := b.newDelivery(ev, c.At, e.ID, true)
	return ledger.Result{Value: &d}
}

func (c *RecordAttempt) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	d, ok := b.deliveries.Get(c.DeliveryID)
	if !ok {
		return ledger.Result{Err: deliveryNotFound()}
	}
	if d.Status != Pending || c.Attempt != d.Attempts+1 {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "delivery %s is %s after %d attempts; attempt %d is stale",
			d.ID, d.Status, d.Attempts, c.Attempt)}
	}
	msg := CutText(c.Error, errorLenMax)
	d.Attempts++
	d.Step++
	d.LastStatusCode = c.StatusCode
	d.LastError = msg
	d.History = appendAttempt(d.History, c, msg)
	e, _ := b.endpoints.Get(d.EndpointID)
	counts := !e.Deleted && e.Status == Active
	if c.Succeeded {
		d.Status, d.LastError, d.NextAttemptAt, d.CompletedAt = Success, "", 0, c.At
		b.putDelivery(d)
		if counts && e.FailureCount != 0 {
			e.FailureCount = 0
			b.endpoints.Put(e)
		}
		return ledger.Result{Value: &d}
	}
	disabled := false
	if counts {
		e.FailureCount++
		reason := ""
		switch {
		case c.StatusCode == 410:
			reason = DisabledGone
		case e.FailureCount >= FailuresMax:
			reason = DisabledConsecutiveFailures
		}
		if reason != "" {
			b.disable(s, &e, reason, c.At, d.ID)
			disabled = true
		}
		b.endpoints.Put(e)
	}
	if d.Test || c.RetryAt == 0 || disabled {
		d.Status, d.NextAttemptAt, d.CompletedAt = Failed, 0, c.At
	} else {
		d.NextAttemptAt = max(c.RetryAt, c.At)
	}
	b.putDelivery(d)
	return ledger.Result{Value: &d}
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
// beyond AttemptsKept. It never writes into history's array, which the
// delivery's earlier versions share.
func appendAttempt(history []Attempt, c *RecordAttempt, msg string) []Attempt {
	msg = CutText(msg, attemptErrorLenMax)
	start := c.StartedAt
	if start > c.At {
		start = 0 // a start after the outcome is not a start
	}
	keep := history[max(0, len(history)-(AttemptsKept-1)):]
	out := make([]Attempt, 0, len(keep)+1)
	out = append(out, keep...)
	return append(out, Attempt{
		Number: c.Attempt, StartedAt: start, At: c.At,
		Succeeded: c.Succeeded, StatusCode: c.StatusCode, Error: msg,
	})
}

func (c *RetryDelivery) Apply(s *ledger.State) ledger.Result {
	b := feature.Of(s)
	d, ok := b.deliveries.Owned(c.OrgID, c.DeliveryID)
	if !ok {
		return ledger.Result{Err: deliveryNotFound()}
	}
	e, ok := b.endpoints.Get(d.EndpointID)
	if !ok || e.Deleted {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "The delivery's webhook endpoint was deleted")}
	}
	if e.Status != Active {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "The webhook endpoint is disabled; set its status to active first")}
	}
	if d.Status == Success {
		ev, _ := s.EventAt(d.EventSeq)
		n := b.newDelivery(ev, c.At, d.EndpointID, d.Test)
		return ledger.Result{Value: &n}
	}
	d.Status, d.Step, d.NextAttemptAt, d.CompletedAt = Pending, 0, c.At, 0
	b.putDelivery(d)
	return ledger.Result{Value: &d}
}

// Reads, from the committed state.

// GetEndpoint returns an organization's endpoint, unless deleted.
func GetEndpoint(r *ledger.Reader, org, id string) (Endpoint, bool) {
	e, ok := ledger.ReadOwned(r, endpointKind, org, id)
	return e, ok && !e.Deleted
}

// EndpointByID returns an endpoint by id alone, deleted or not, for the
// delivery engine.
func EndpointByID(r *ledger.Reader, id string) (Endpoint, bool) {
	return ledger.ReadRecord(r, endpointKind, id)
}

// ListEndpoints returns one page of an organization's endpoints, newest
// first.
func ListEndpoints(r *ledger.Reader, org string, before ledger.Cursor, limit int) ledger.Page[Endpoint] {
	return ledger.ReadList(r, endpointKind, org, before, limit, func(e *Endpoint) bool { return !e.Deleted })
}

// GetDelivery returns an organization's delivery.
func GetDelivery(r *ledger.Reader, org, id string) (Delivery, bool) {
	return ledger.ReadOwned(r, deliveryKind, org, id)
}

// DeliveryByID returns a delivery by id alone, for the engine.
func DeliveryByID(r *ledger.Reader, id string) (Delivery, bool) {
	return ledger.ReadRecord(r, deliveryKind, id)
}

// DeliveryFilter selects deliveries in a list; zero fields match all.
type DeliveryFilter struct {
	EndpointID string
	EventID    string
	Status     DeliveryStatus
}

// ListDeliveries returns one page of an organization's deliveries, newest
// first.
func ListDeliveries(r *ledger.Reader, org string, f DeliveryFilter, before ledger.Cursor, limit int) ledger.Page[Delivery] {
	keep := func(d *Delivery) bool {
		return (f.EndpointID == "" || d.EndpointID == f.EndpointID) &&
			(f.EventID == "" || d.EventID == f.EventID) &&
			(f.Status == 0 || d.Status == f.Status)
	}
	switch {
	case f.EventID != "":
		return ledger.ReadFiltered(r, deliveryKind, ledger.IndexEvent, org, f.EventID, before, limit, keep)
	case f.EndpointID != "":
		return ledger.ReadFiltered(r, deliveryKind, ledger.IndexParent, org, f.EndpointID, before, limit, keep)
	}
	return ledger.ReadByStatus(r, deliveryKind, org, f.Status, DeliveryStatus.final, before, limit, keep)
}

// DeliveryCount is the number of deliveries ever made.
func DeliveryCount(r *ledger.Reader) uint64 { return ledger.ReadCount(r, deliveryKind) }

// DeliveryAt returns the delivery at seq (from 1), for the engine that
// follows new deliveries in order.
func DeliveryAt(r *ledger.Reader, seq uint64) (Delivery, bool) {
	if seq == 0 {
		return Delivery{}, false
	}
	return DeliveryByID(r, DeliveryID(seq))
}

// PendingDeliveryCount counts the pending deliveries, walking them.
func PendingDeliveryCount(r *ledger.Reader) int {
	n := 0
	var cursor ledger.OpenCursor
	for {
		page, next, done := PendingDeliveries(r, cursor, 1024)
		n += len(page)
		if done {
			return n
		}
		cursor = next
	}
}

// PendingDeliveries walks the pending deliveries, a new leader's work; see
// ledger.Reader.OpenPayouts.
func PendingDeliveries(r *ledger.Reader, after ledger.OpenCursor, limit int) ([]Delivery, ledger.OpenCursor, bool) {
	return ledger.ReadOpen(r, deliveryKind, after, limit)
}

// The codecs: each Fields method names the fields once, in their frozen
// order, and both writes and reads them. An endpoint is coded the same as
// a record and as the subject of a webhook.test event.

func (w *Endpoint) fields(f *ledger.Codec) {
	f.Str(&w.ID, &w.OrgID, &w.URL, &w.Description)
	f.Strs(&w.Events)
	f.Str(&w.Status, &w.DisabledReason)
	f.Varint(&w.FailureCount)
	f.Bool(&w.Deleted)
	f.Str(&w.Secret, &w.PreviousSecret)
	f.Varint(&w.PreviousUntil, &w.CreatedAt, &w.UpdatedAt)
}

// fields: the history is appended (ledger/doc.go), so a delivery never
// attempted keeps format 1's layout. Its ID and EventID are made from its
// sequence numbers, not stored.
func (w *Delivery) fields(f *ledger.Codec) {
	f.Uvarint(&w.Seq)
	f.Str(&w.OrgID, &w.EndpointID)
	f.Uvarint(&w.EventSeq)
	f.Str(&w.EventType, &w.ResourceID)
	f.Bool(&w.Test)
	ledger.FieldU8(f, &w.Status)
	f.Varint(&w.Attempts, &w.Step, &w.LastStatusCode)
	f.Str(&w.LastError)
	f.Varint(&w.NextAttemptAt, &w.CompletedAt, &w.CreatedAt)
	ledger.AppendedSlice(f, &w.History, "delivery history", func(f *ledger.Codec, a *Attempt) {
		f.Varint(&a.Number, &a.StartedAt, &a.At)
		f.Bool(&a.Succeeded)
		f.Varint(&a.StatusCode)
		f.Str(&a.Error)
	})
	if f.Decoding() {
		w.ID = DeliveryID(w.Seq)
		w.EventID = ledger.EventID(w.EventSeq)
	}
}

func (c *CreateEndpoint) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.URL, &c.Description)
	f.Strs(&c.Events)
	f.Str(&c.Secret)
}

func (c *UpdateEndpoint) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID)
	f.Bool(&c.SetURL)
	f.Str(&c.URL)
	f.Bool(&c.SetDescription)
	f.Str(&c.Description)
	f.Bool(&c.SetEvents)
	f.Strs(&c.Events)
	f.Bool(&c.SetStatus)
	f.Str(&c.Status)
}

func (c *DeleteEndpoint) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID)
}

func (c *RotateSecret) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.Secret)
}

func (c *SendTest) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID, &c.EndpointID)
}

// Fields are the attempt's fields but StartedAt, which only the timed kind
// appends (Encode, and its decoder in init).
func (c *RecordAttempt) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.DeliveryID)
	f.Varint(&c.Attempt)
	f.Bool(&c.Succeeded)
	f.Varint(&c.StatusCode)
	f.Str(&c.Error)
	f.Varint(&c.RetryAt)
}

func (c *RetryDelivery) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID, &c.DeliveryID)
}

func (c *CreateEndpoint) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }
func (c *UpdateEndpoint) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }
func (c *DeleteEndpoint) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }
func (c *RotateSecret) Encode(e *ledger.Encoder)   { c.Fields(e.Codec()) }
func (c *SendTest) Encode(e *ledger.Encoder)       { c.Fields(e.Codec()) }
func (c *RetryDelivery) Encode(e *ledger.Encoder)  { c.Fields(e.Codec()) }

func (c *RecordAttempt) Encode(e *ledger.Encoder) {
	f := e.Codec()
	c.Fields(f)
	if c.StartedAt != 0 {
		f.AppendedVarint(&c.StartedAt, "attempt start")
	}
}

func init() {
	ledger.RegisterFieldsCommands(
		ledger.Fresh[CreateEndpoint], ledger.Fresh[UpdateEndpoint],
		ledger.Fresh[DeleteEndpoint], ledger.Fresh[RotateSecret], ledger.Fresh[SendTest],
		ledger.Fresh[RecordAttempt], ledger.Fresh[RetryDelivery])
	ledger.RegisterCommand(KindRecordAttemptTimed, func(d *ledger.Decoder) ledger.Command {
		c := new(RecordAttempt)
		f := d.Codec()
		c.Fields(f)
		f.AppendedVarint(&c.StartedAt, "attempt start") // a zero would encode again as kind 75
		return c
	})
	ledger.RegisterSubject(SubjectEndpoint, (*Endpoint).fields)
}
