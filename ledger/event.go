package ledger

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"payments/ledger/kv"
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

	recordTag byte // decoded: the subject is the stored record of this kind (subjectRecord)
}

// Subject is a copy of the resource an event is about. Its SubjectKind
// method is exported so that a feature package's record can be one
// (RegisterSubject).
type Subject interface {
	SubjectKind() SubjectKind
}

// KindOfSubject returns the record type of an event's subject, for the
// API's table of renderers.
func KindOfSubject(s Subject) SubjectKind { return s.SubjectKind() }

// SubjectKind tags a subject's record type in the log and in snapshots.
// Values are frozen, and allocated by feature like command kinds:
//
//	1–3    payouts, collections, accounts
//	4–19   money movement (conversions: 4 and 12, package conversions;
//	       orders: 7, package orders; virtual accounts, payouts that name their bank: 13,
//	       14, …)
//	20–29  recipients, files, disputes (package disputes)
//	30–39  webhooks (package webhooks)
type SubjectKind uint8

const (
	SubjectPayout     SubjectKind = 1
	SubjectCollection SubjectKind = 2
	SubjectAccount    SubjectKind = 3
)

func (p Payout) SubjectKind() SubjectKind {
	switch {
	case p.FX != nil && p.Spec.RoutingNumber != "":
		return SubjectFXPayoutRouted // routing.go
	case p.FX != nil:
		return SubjectFXPayout // fxpayout.go
	case p.Spec.RoutingNumber != "":
		return SubjectPayoutRouted
	}
	return SubjectPayout
}

// Collection's SubjectKind is in deposit.go: a deposit's collection has a
// kind of its own.
func (Account) SubjectKind() SubjectKind { return SubjectAccount }

type subjectCodec struct {
	encode func(*Encoder, Subject)
	decode func(*Decoder) Subject
}

var subjectCodecs = map[SubjectKind]subjectCodec{}

// registerSubject makes a record type usable as an event subject. It is
// called from init functions.
func registerSubject(k SubjectKind, enc func(*Encoder, Subject), dec func(*Decoder) Subject) {
	if _, dup := subjectCodecs[k]; dup {
		panic(fmt.Sprintf("ledger: subject kind %d registered twice", k))
	}
	subjectCodecs[k] = subjectCodec{enc, dec}
}

// SubjectKinds lists every registered subject kind in order, so that the
// API can check it renders each one.
func SubjectKinds() []SubjectKind { return slices.Sorted(maps.Keys(subjectCodecs)) }

func init() {
	// Written for every payout and collection event: called directly, so
	// that the subject stays on the stack.
	registerPayoutSubject(SubjectPayout, 0)
	registerSubject(SubjectCollection,
		func(e *Encoder, s Subject) { c := s.(Collection); c.fields(e.Codec()) },
		func(d *Decoder) Subject { var c Collection; c.fields(d.Codec()); return c })
	registerSubject(SubjectAccount,
		func(e *Encoder, s Subject) { a := s.(Account); a.fields(e.Codec()) },
		func(d *Decoder) Subject { return decodeAccount(d) })
}

// payoutParts are what a payout's subject kind appends to the payout's
// fields, in this order.
type payoutParts uint8

const (
	withFX      payoutParts = 1 << iota // its FX details (fxpayout.go)
	withRouting                         // its routing number (routing.go)
)

// registerPayoutSubject makes k a kind of payout subject: the payout's
// fields, then the parts k appends. The payout is coded directly, so that
// it stays on the stack.
func registerPayoutSubject(k SubjectKind, parts payoutParts) {
	registerSubject(k,
		func(e *Encoder, s Subject) { p := s.(Payout); p.subjectFields(e.Codec(), parts) },
		func(d *Decoder) Subject { var p Payout; p.subjectFields(d.Codec(), parts); return p })
}

func (p *Payout) subjectFields(f *Codec, parts payoutParts) {
	p.fields(f)
	if parts&withFX != 0 {
		fieldRecord(f, &p.FX)
	}
	if parts&withRouting != 0 {
		p.Spec.routingField(f)
	}
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
// contract's, in its order, then our own (package paymentlinks appends
// its own: paymentlinks.EventTypes).
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
	var b [4 + 13]byte // "wev_" and 64 bits in base 36
	return string(strconv.AppendUint(append(b[:0], "wev_"...), scramble(seq), 36))
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
// have yet. In the state store the events of one log entry are one page,
// under the number of the first; each organization's part of a page is
// listed under it, and each event under its resource.
type eventLog struct {
	seq        uint64 // the last event emitted
	seqWritten uint64
	committed  uint64             // events up to this one are in the state store
	flushed    uint64             // events up to this one are in the batch last flushed
	pending    []Event            // events after committed, in order
	from       int                // pending[from:] are not flushed yet
	ends       []int              // pending[:ends[i]] ends the i-th log entry's page
	byOrg      kv.Grouper[uint64] // flushPage's scratch
	key        kv.Key             // flushPage's scratch
}

// endEntry closes the page of the log entry just applied.
func (l *eventLog) endEntry() {
	if n := len(l.pending); n > l.from && (len(l.ends) == 0 || l.ends[len(l.ends)-1] < n) {
		l.ends = append(l.ends, n)
	}
}

func (l *eventLog) flush(w *kv.SortedWriter, e *Encoder, record func(*Event) (byte, bool)) {
	l.endEntry()
	start := l.from
	for _, end := range l.ends {
		l.flushPage(w, e, l.pending[start:end], record)
		start = end
	}
	l.ends = l.ends[:0]
	l.from = len(l.pending)
	if l.seq != l.seqWritten {
		writeCounter(w, "events", l.seq)
		l.seqWritten = l.seq
	}
	l.flushed = l.seq
}

// flushPage writes the events of one log entry: the page, each
// organization's list of them, and each one under its resource.
func (l *eventLog) flushPage(w *kv.SortedWriter, e *Encoder, page []Event, record func(*Event) (byte, bool)) {
	e.Reset()
	e.Uvarint(uint64(len(page)))
	for i := range page {
		ev := &page[i]
		if tag, ok := record(ev); ok {
			ev.headerFields(e.Codec())
			e.U8(uint8(subjectRecord))
			e.U8(tag)
		} else {
			encodeEvent(e, ev)
		}
		l.byOrg.Add(ev.OrgID, ev.Seq)
	}
	l.key = append(l.key[:0], tagEvent).U64(page[0].Seq)
	w.Set(l.key, e.Bytes())
	for i, org := range l.byOrg.Keys() {
		seqs := l.byOrg.Group(i)
		e.Reset()
		e.Uvarint(uint64(len(seqs)))
		for _, seq := range seqs {
			e.Uvarint(seq - seqs[0])
		}
		l.key = append(l.key[:0], tagEventList, 'o').Str(org).U64(seqs[0])
		w.Set(l.key, e.Bytes())
	}
	l.byOrg.Reset()
	for i := range page {
		l.key = append(l.key[:0], tagEventList, 'r').Str(page[i].OrgID).Str(page[i].ResourceID).U64(page[i].Seq)
		w.Set(l.key, nil)
	}
}

func (l *eventLog) load(kv KVReader) {
	l.seq = readCounter(kv, "events")
	l.seqWritten, l.committed, l.flushed = l.seq, l.seq, l.seq
}

// releaseFlushed forgets the events of the batch last flushed, now in the
// state store; those emitted since stay pending.
func (l *eventLog) releaseFlushed() {
	n := int(l.flushed - l.committed)
	l.committed = l.flushed
	kept := copy(l.pending, l.pending[n:])
	clear(l.pending[kept:])
	l.pending = l.pending[:kept]
	l.from -= n
	for i := range l.ends {
		l.ends[i] -= n
	}
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

// readEvent returns the event with sequence number seq from its page.
func readEvent(kvr KVReader, seq uint64) (Event, bool) {
	var ev Event
	var found bool
	prefix := kv.NewKey(tagEvent)
	kv.Scan(kvr, prefix, prefix.U64(seq+1), true, func(_, page []byte) bool {
		d := kv.NewDecoder(page)
		n := d.Count()
		for i := 0; i < n && d.Err() == nil; i++ {
			if e := decodeEvent(&d); e.Seq == seq {
				ev, found = e, true
				break
			}
		}
		kv.Must(d.Err())
		return false
	})
	if !found {
		return ev, false
	}
	ev.ID = EventID(seq)
	switch ev.recordTag {
	case 0:
	case tagPayout:
		ev.Subject = readSubject(kvr, payoutKind, ev.ResourceID)
	case tagCollection:
		ev.Subject = readSubject(kvr, collectionKind, ev.ResourceID)
	default:
		kv.Must(fmt.Errorf("event %d refers to a record of kind %q", seq, ev.recordTag))
	}
	return ev, true
}

// subjectRecord, in place of an event's subject kind, says that the
// subject is the resource's record as stored, of the kind whose tag
// follows: an event about a record's closing (payout.completed,
// collection.failed…) of a final kind refers to the record instead of
// carrying a second copy of it, which would be byte for byte the same.
const subjectRecord SubjectKind = 0

func readSubject[V Subject](kvr KVReader, k *kind[V], id string) Subject {
	sr, ok := k.read(kvr, id)
	if !ok {
		kv.Must(errMissing(k.name, id))
	}
	return sr.v
}

// recordSubject reports whether an event's subject is the record it is
// about as flushed, closed, in this batch, and that record's kind tag.
func (s *State) recordSubject(ev *Event) (byte, bool) {
	switch sub := ev.Subject.(type) {
	case Payout:
		return sameClosed(s.payouts, ev.ResourceID, sub, &s.cmp)
	case Collection:
		return sameClosed(s.collections, ev.ResourceID, sub, &s.cmp)
	}
	return 0, false
}

func sameClosed[V any](t *store[V], id string, sub V, scratch *[2]Encoder) (byte, bool) {
	v, ok := t.closedNow(id)
	if !ok {
		return 0, false
	}
	a, b := &scratch[0], &scratch[1]
	a.Reset()
	b.Reset()
	t.k.enc(a, v)
	t.tmp = sub
	t.k.enc(b, &t.tmp)
	return t.k.tag, bytes.Equal(a.Bytes(), b.Bytes())
}

// emit records an event at leader time at. Only rules call it, after the
// change is made and in the same Apply. The event's time is on its
// organization's clock, like the resource it carries (clock.go). Hooks
// (webhook fan-out) run in the same Apply too.
func (s *State) emit(at int64, org, typ, resourceID string, subject Subject) Event {
	s.events.seq++
	seq := s.events.seq
	ev := Event{Seq: seq, ID: EventID(seq), OrgID: org, Type: typ, ResourceID: resourceID, At: s.OrgNow(org, at), Subject: subject}
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

func (ev *Event) headerFields(f *Codec) {
	f.Uvarint(&ev.Seq)
	f.Str(&ev.OrgID, &ev.Type, &ev.ResourceID)
	f.Varint(&ev.At)
}

func encodeEvent(e *Encoder, ev *Event) {
	ev.headerFields(e.Codec())
	k := ev.Subject.SubjectKind()
	e.U8(uint8(k))
	subjectCodecs[k].encode(e, ev.Subject)
}

func decodeEvent(d *Decoder) Event {
	var ev Event
	ev.headerFields(d.Codec())
	k := SubjectKind(d.U8())
	if k == subjectRecord {
		ev.recordTag = d.U8()
		return ev
	}
	c, ok := subjectCodecs[k]
	if !ok {
		d.Fail(fmt.Errorf("ledger: unknown event subject kind %d", k))
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
	get := func(seq uint64) (Event, bool) {
		ev, ok := readEvent(r.kv, seq)
		if !ok {
			kv.Must(errMissing("event", EventID(seq)))
		}
		return ev, f.Type == "" || ev.Type == f.Type
	}
	if f.ResourceID != "" {
		prefix := kv.NewKey(tagEventList, 'r').Str(orgID).Str(f.ResourceID)
		return pageOf(r.kv, prefix, before, limit, func(seq uint64, _ []byte) (Event, bool) { return get(seq) })
	}
	// The organization's lists, one per page of the log, newest first.
	pg := pager[Event]{limit: limit}
	prefix := kv.NewKey(tagEventList, 'o').Str(orgID)
	kv.Scan(r.kv, prefix, pageUpper(prefix, before), true, func(key, list []byte) bool {
		first := kv.TrailingSeq(key)
		d := kv.NewDecoder(list)
		seqs := make([]uint64, d.Count())
		for i := range seqs {
			seqs[i] = first + d.Uvarint()
		}
		kv.Must(d.Err())
		for i := len(seqs) - 1; i >= 0; i-- {
			seq := seqs[i]
			if Cursor(seq) >= before {
				continue
			}
			if !pg.scan(seq) {
				return false
			}
			if ev, keep := get(seq); keep && !pg.keep(seq, ev) {
				return false
			}
		}
		return true
	})
	return pg.page
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
