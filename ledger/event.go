package ledger

import (
	"fmt"
	"slices"
	"strconv"
)

// Event is one change the contract names (payout.completed, order.expired,
// …), recorded by the same Apply that makes the change: no change without
// its event, no event without its change. It carries a copy of the resource
// as it was at that moment, which the API renders as the GET of that
// resource would.
type Event struct {
	Seq        uint64 // position in the whole event log, from 1
	ID         string // EventID(Seq); filled by the readers, not stored
	OrgID      string
	Type       string
	ResourceID string
	At         int64 // unix milliseconds
	Subject    Subject
}

// Subject is a copy of the resource an event is about.
type Subject interface {
	subjectKind() SubjectKind
}

// SubjectKind tags a subject's record type in the log and in snapshots.
// Values are frozen, and allocated by feature like command kinds:
//
//	1–3    payouts, collections, accounts
//	4–19   money movement (conversions, orders, virtual accounts, …)
//	20–29  recipients, files, disputes
//	30–39  webhooks
type SubjectKind uint8

const (
	SubjectPayout     SubjectKind = 1
	SubjectCollection SubjectKind = 2
	SubjectAccount    SubjectKind = 3
)

func (p Payout) subjectKind() SubjectKind {
	if p.FX != nil {
		return SubjectFXPayout // fxpayout.go
	}
	return SubjectPayout
}

// Collection's subjectKind is in deposit.go: a deposit's collection has a
// kind of its own.
func (Account) subjectKind() SubjectKind { return SubjectAccount }

type subjectCodec struct {
	encode func(*encoder, Subject)
	decode func(*decoder) Subject
}

var subjectCodecs = map[SubjectKind]subjectCodec{}

// registerSubject makes a record type usable as an event subject. It is
// called from init functions.
func registerSubject(k SubjectKind, enc func(*encoder, Subject), dec func(*decoder) Subject) {
	if _, dup := subjectCodecs[k]; dup {
		panic(fmt.Sprintf("ledger: subject kind %d registered twice", k))
	}
	subjectCodecs[k] = subjectCodec{enc, dec}
}

// SubjectKinds lists every registered subject kind in order, so that the
// API can check it renders each one.
func SubjectKinds() []SubjectKind {
	ks := make([]SubjectKind, 0, len(subjectCodecs))
	for k := range subjectCodecs {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func init() {
	registerSubject(SubjectPayout,
		func(e *encoder, s Subject) { p := s.(Payout); encodePayout(e, &p) },
		func(d *decoder) Subject { return decodePayout(d) })
	registerSubject(SubjectCollection,
		func(e *encoder, s Subject) { c := s.(Collection); encodeCollection(e, &c) },
		func(d *decoder) Subject { return decodeCollection(d) })
	registerSubject(SubjectAccount,
		func(e *encoder, s Subject) { a := s.(Account); encodeAccount(e, &a) },
		func(d *decoder) Subject { return decodeAccount(d) })
}

// The event types of the contract.
const (
	EventPayoutCompleted      = "payout.completed"
	EventPayoutFailed         = "payout.failed"
	EventConversionCompleted  = "conversion.completed"
	EventAccountCredited      = "account.credited"
	EventCollectionPending    = "collection.pending"
	EventCollectionCompleted  = "collection.completed"
	EventCollectionFailed     = "collection.failed"
	EventOrderAwaitingFunds   = "order.awaiting_funds"
	EventOrderAwaitingConfirm = "order.awaiting_confirmations"
	EventOrderFundsReceived   = "order.funds_received"
	EventOrderProcessing      = "order.processing_payout"
	EventOrderCompleted       = "order.completed"
	EventOrderFailed          = "order.failed"
	EventOrderExpired         = "order.expired"
	EventOrderOverpaid        = "order.overpaid"
	EventOrderUnderpaid       = "order.underpaid"
	EventDisputeCreated       = "dispute.created"
	EventDisputeUpdated       = "dispute.updated"
	EventDisputeClosed        = "dispute.closed"
)

// EventTypes lists every event type an endpoint can subscribe to: the
// contract's, in its order, then our own (see CheckoutEventTypes).
var EventTypes = []string{
	EventPayoutCompleted, EventPayoutFailed, EventConversionCompleted, EventAccountCredited,
	EventCollectionPending, EventCollectionCompleted, EventCollectionFailed,
	EventOrderAwaitingFunds, EventOrderAwaitingConfirm, EventOrderFundsReceived,
	EventOrderProcessing, EventOrderCompleted, EventOrderFailed, EventOrderExpired,
	EventOrderOverpaid, EventOrderUnderpaid,
	EventDisputeCreated, EventDisputeUpdated, EventDisputeClosed,
}

// EventID is the public id of the event at seq: "wev_" and the scrambled
// sequence number, so ids reveal neither volume nor order.
func EventID(seq uint64) string {
	return "wev_" + strconv.FormatUint(scramble(seq), 36)
}

// ParseEventID returns the sequence number of an event id.
func ParseEventID(id string) (uint64, bool) {
	const prefix = "wev_"
	if len(id) <= len(prefix) || id[:len(prefix)] != prefix {
		return 0, false
	}
	v, err := strconv.ParseUint(id[len(prefix):], 36, 64)
	if err != nil || EventID(unscramble(v)) != id {
		return 0, false
	}
	return unscramble(v), true
}

// eventLog is every event in order, and each organization's events. Events
// never change once recorded, so the log is append-only lists and needs no
// table: an id is its sequence number, scrambled (EventID), and a snapshot
// reads a view of the lists while Apply appends.
type eventLog struct {
	all   appendList[Event]
	byOrg map[string]*appendList[uint64]
}

func newEventLog() *eventLog {
	return &eventLog{byOrg: make(map[string]*appendList[uint64])}
}

func (l *eventLog) append(ev Event) {
	l.all.append(ev)
	indexOf(l.byOrg, ev.OrgID).append(ev.Seq)
}

func (l *eventLog) sectionName() string        { return "events" }
func (l *eventLog) freezeSection() sectionView { return eventView{l.all.view()} }
func (l *eventLog) liveSection() sectionView   { return eventView{l.all.view()} }
func (l *eventLog) thawSection()               {}
func (l *eventLog) restoreRecord(_ *State, d *decoder) {
	ev := decodeEvent(d)
	if d.err == nil && ev.Seq != uint64(l.all.len())+1 {
		d.fail(fmt.Errorf("ledger: event %d restored out of order", ev.Seq))
	}
	if d.err == nil {
		l.append(ev)
	}
}

type eventView struct{ all appendList[Event] }

func (v eventView) len() int { return v.all.len() }

func (v eventView) each(fn func(enc func(*encoder))) {
	v.all.all(func(_ int, ev Event) { fn(func(e *encoder) { encodeEvent(e, &ev) }) })
}

// emit records an event. Only rules call it, after the change is made and
// in the same Apply. Hooks (webhook fan-out) run in the same Apply too.
func (s *State) emit(at int64, org, typ, resourceID string, subject Subject) {
	seq := uint64(s.events.all.len()) + 1
	ev := Event{Seq: seq, OrgID: org, Type: typ, ResourceID: resourceID, At: at, Subject: subject}
	s.events.append(ev)
	for _, h := range s.eventHooks {
		h(s, ev)
	}
}

// emitCredited records account.credited with the account as it is after
// the credit.
func (s *State) emitCredited(at int64, number string) {
	a, _ := s.accounts.get(number)
	s.emit(at, a.OrgID, EventAccountCredited, a.Number, a)
}

func encodeEvent(e *encoder, ev *Event) {
	e.uvarint(ev.Seq)
	e.str(ev.OrgID)
	e.str(ev.Type)
	e.str(ev.ResourceID)
	e.varint(ev.At)
	k := ev.Subject.subjectKind()
	e.u8(uint8(k))
	subjectCodecs[k].encode(e, ev.Subject)
}

func decodeEvent(d *decoder) Event {
	ev := Event{Seq: d.uvarint(), OrgID: d.str(), Type: d.str(), ResourceID: d.str(), At: d.varint()}
	k := SubjectKind(d.u8())
	c, ok := subjectCodecs[k]
	if !ok {
		d.fail(fmt.Errorf("ledger: unknown event subject kind %d", k))
		return ev
	}
	ev.Subject = c.decode(d)
	return ev
}

// EventFilter selects events in a list.
type EventFilter struct {
	Type       string
	ResourceID string
}

// Event returns an organization's event by id.
func (s *State) Event(orgID, id string) (Event, bool) {
	seq, ok := ParseEventID(id)
	if !ok {
		return Event{}, false
	}
	ev, ok := s.EventAt(seq)
	if !ok || ev.OrgID != orgID {
		return Event{}, false
	}
	return ev, true
}

// Events returns one page of an organization's events, newest first.
func (s *State) Events(orgID string, f EventFilter, before Cursor, limit int) Page[Event] {
	return page(s.events.byOrg[orgID], before, limit, s.EventAt, func(ev Event) bool {
		return (f.Type == "" || ev.Type == f.Type) && (f.ResourceID == "" || ev.ResourceID == f.ResourceID)
	})
}

// EventCount is the number of events in the whole log.
func (s *State) EventCount() uint64 { return uint64(s.events.all.len()) }

// EventAt returns the event at seq (from 1), for readers that follow the
// log in order.
func (s *State) EventAt(seq uint64) (Event, bool) {
	if seq == 0 || seq > s.EventCount() {
		return Event{}, false
	}
	ev := s.events.all.at(int(seq - 1))
	ev.ID = EventID(seq)
	return ev, true
}
