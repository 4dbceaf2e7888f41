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

// eventLog is the applying side of the events: their numbering, and the
// events emitted since the last commit, which the state store does not
// have yet. In the state store an event is under its sequence number, and
// listed by organization and by resource.
type eventLog struct {
	seq        uint64 // the last event emitted
	seqWritten uint64
	committed  uint64  // events up to this one are in the state store
	pending    []Event // events after committed, in order
}

func (l *eventLog) flush(w KVWriter, e *encoder) {
	for i := range l.pending {
		ev := &l.pending[i]
		if ev.Seq <= l.seqWritten {
			continue
		}
		e.buf = e.buf[:0]
		encodeEvent(e, ev)
		must(w.Set(newKey(tagEvent).u64(ev.Seq), e.buf))
		must(w.Set(newKey(tagEventList, 'o').str(ev.OrgID).u64(ev.Seq), nil))
		must(w.Set(newKey(tagEventList, 'r').str(ev.OrgID).str(ev.ResourceID).u64(ev.Seq), nil))
	}
	if l.seq != l.seqWritten {
		writeCounter(w, "events", l.seq)
		l.seqWritten = l.seq
	}
}

func (l *eventLog) load(kv KVReader) {
	l.seq = readCounter(kv, "events")
	l.seqWritten, l.committed = l.seq, l.seq
}

func (l *eventLog) commit() {
	l.committed = l.seq
	l.pending = l.pending[:0]
}

// at returns the event with sequence number seq, from memory or from the
// state store.
func (l *eventLog) at(kv KVReader, seq uint64) (Event, bool) {
	if seq == 0 || seq > l.seq {
		return Event{}, false
	}
	if seq > l.committed {
		return l.pending[seq-l.committed-1], true
	}
	return readEvent(kv, seq)
}

func readEvent(kv KVReader, seq uint64) (Event, bool) {
	ev, ok := getRecord(kv, newKey(tagEvent).u64(seq), decodeEvent)
	if ok {
		ev.ID = EventID(seq)
	}
	return ev, ok
}

// emit records an event. Only rules call it, after the change is made and
// in the same Apply. Hooks (webhook fan-out) run in the same Apply too.
func (s *State) emit(at int64, org, typ, resourceID string, subject Subject) Event {
	s.events.seq++
	seq := s.events.seq
	ev := Event{Seq: seq, ID: EventID(seq), OrgID: org, Type: typ, ResourceID: resourceID, At: at, Subject: subject}
	s.events.pending = append(s.events.pending, ev)
	for _, h := range s.eventHooks {
		h(s, ev)
	}
	return ev
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
func (r *Reader) Event(orgID, id string) (Event, bool) {
	seq, ok := ParseEventID(id)
	if !ok {
		return Event{}, false
	}
	ev, ok := r.EventAt(seq)
	if !ok || ev.OrgID != orgID {
		return Event{}, false
	}
	return ev, true
}

// Events returns one page of an organization's events, newest first.
func (r *Reader) Events(orgID string, f EventFilter, before Cursor, limit int) Page[Event] {
	prefix := newKey(tagEventList, 'o').str(orgID)
	if f.ResourceID != "" {
		prefix = newKey(tagEventList, 'r').str(orgID).str(f.ResourceID)
	}
	return pageOf(r.kv, prefix, before, limit, func(seq uint64, _ []byte) (Event, bool) {
		ev, ok := readEvent(r.kv, seq)
		if !ok {
			must(errMissing("event", EventID(seq)))
		}
		return ev, f.Type == "" || ev.Type == f.Type
	})
}

// EventCount is the number of events in the whole log.
func (r *Reader) EventCount() uint64 { return readCounter(r.kv, "events") }

// EventAt returns the event at seq (from 1), for readers that follow the
// log in order.
func (r *Reader) EventAt(seq uint64) (Event, bool) {
	if seq == 0 {
		return Event{}, false
	}
	return readEvent(r.kv, seq)
}

// EventAt returns the event at seq for a rule, in this batch or before.
func (s *State) EventAt(seq uint64) (Event, bool) { return s.events.at(s.kv, seq) }
