package ledger

import "container/heap"

// The sandbox clock and deadlines.
//
// Every rule reads time from its command's At, the leader's clock. An
// organization's clock is At plus the offset that sandbox simulations have
// advanced it by (OrgNow), so quotes, orders and checkout sessions can be
// expired in tests without sleeping. Production organizations never have an
// offset.
//
// One rule: every time an organization sees is on its clock. Rules and
// their helpers pass leader time; it is put on the organization's clock
// where it is recorded: a record's fields through OrgNow, an event's time
// in emit, journal entries in book, balance accounts in merchantAccount.
// Since the offset only grows, each organization's times still only go
// forward, and lists bounded by time (which read the recorded times) follow
// the clock the resources show. What stays on leader time is what the
// service itself schedules: deadlines in the heap below (converted in
// addDeadline) and webhook deliveries, their attempts and retries
// (newDelivery), so an advance never delays or hastens a delivery.
//
// Deadline-driven transitions (a quote, order or session expiring) are made
// by expirers: each feature registers one in NewState and adds a deadline
// to one heap when a record gets one. Two commands run them: Tick, which
// the leader proposes when the earliest deadline has passed (Views.
// NextDeadline), and AdvanceClock, which moves one organization's clock
// and then expires whatever the jump made due, in the same Apply.

// Command kinds of the clock.
const (
	KindAdvanceClock Kind = 10
	KindTick         Kind = 11
)

// ClockAdvanceMax bounds one advance of a sandbox clock.
const ClockAdvanceMax = 366 * 24 * 3600 * 1000 // one year, in milliseconds

// Clock is an organization's sandbox clock offset.
type Clock struct {
	OrgID        string
	OffsetMillis int64
	UpdatedAt    int64
}

// clockKind: a clock stays open for good.
var clockKind = newKind(tagClock, "clock", func(c *Clock) (string, string) { return c.OrgID, c.OrgID }, unlisted)

// Expirer is one feature's deadline-driven transitions. A feature adds a
// deadline (addDeadline; AddDeadline from a sub-package) when a record
// gets one; the state keeps them all in one heap, in leader time, so that
// Tick finds what is due without looking at anything else.
type Expirer struct {
	// Each calls add for every open deadline of the feature: at Load, and
	// after a clock jump moved an organization's deadlines.
	Each func(s *State, add func(org string, due int64, id string))
	// Deadline returns the record's deadline now, on its organization's
	// clock; ok is false when it has none any more (it was met).
	Deadline func(s *State, id string) (org string, due int64, ok bool)
	// Expire makes the record's transition, emitting its events. It is
	// called when the record's deadline has passed at leader time at.
	Expire func(s *State, id string, at int64)
}

// AdvanceClock moves an organization's sandbox clock forward.
type AdvanceClock struct {
	At     int64
	OrgID  string
	Millis int64
}

// Tick expires everything due at At.
type Tick struct {
	At int64
}

func (*AdvanceClock) Kind() Kind { return KindAdvanceClock }
func (*Tick) Kind() Kind         { return KindTick }

func (c *AdvanceClock) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID)
	f.Varint(&c.Millis)
}

func (c *AdvanceClock) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *Tick) Encode(e *Encoder) { e.Varint(c.At) }

func init() {
	registerFields[AdvanceClock](KindAdvanceClock)
	RegisterCommand(KindTick, func(d *Decoder) Command { return &Tick{At: d.Varint()} })
}

func (c *Clock) fields(f *Codec) {
	f.Str(&c.OrgID)
	f.Varint(&c.OffsetMillis, &c.UpdatedAt)
}

func (c *AdvanceClock) Apply(s *State) Result {
	if err := s.CheckOrg(c.OrgID); err != nil {
		return Result{Err: err}
	}
	if c.Millis <= 0 || c.Millis > ClockAdvanceMax {
		return Result{Err: FieldInvalid("seconds", "must be between 1 second and 366 days")}
	}
	clk, ok := s.clocks.get(c.OrgID)
	clk.OffsetMillis += c.Millis
	clk.UpdatedAt = c.At
	if ok {
		s.clocks.put(clk)
	} else {
		clk.OrgID = c.OrgID
		s.clocks.insert(clk)
	}
	// The organization's deadlines came closer in leader time.
	s.rebuildDeadlines()
	s.expireDue(c.At)
	return Result{Clock: &clk}
}

func (c *Tick) Apply(s *State) Result {
	s.expireDue(c.At)
	return Result{}
}

// OrgNow is an organization's current time, in unix milliseconds, when the
// leader's clock reads at. Every time a rule records is on it. Clocks stay
// in memory for good, so an organization without one (every production
// organization) costs no read of the state store.
func (s *State) OrgNow(orgID string, at int64) int64 {
	if r, ok := s.clocks.rows[orgID]; ok {
		return at + r.v.OffsetMillis
	}
	return at
}

// RealTime converts orgAt, a time on the organization's clock, back to the
// leader's clock at the organization's current offset: webhook deliveries
// of an event are scheduled on real time whatever the sandbox clock says.
func (s *State) RealTime(orgID string, orgAt int64) int64 {
	return orgAt - s.OrgNow(orgID, 0)
}

// registerExpirer adds a feature's Expirer and returns its number, which
// the feature passes to addDeadline.
func (s *State) registerExpirer(x Expirer) uint8 {
	s.expirers = append(s.expirers, x)
	return uint8(len(s.expirers) - 1)
}

// addDeadline records that the record id of Expirer x falls due when its
// organization's clock reads due.
func (s *State) addDeadline(x uint8, org string, due int64, id string) {
	heap.Push(&s.deadlines, deadline{at: due - s.OrgNow(org, 0), exp: x, id: id})
}

// rebuildDeadlines fills the heap again from the features' open deadlines.
func (s *State) rebuildDeadlines() {
	s.deadlines = s.deadlines[:0]
	for i, x := range s.expirers {
		x.Each(s, func(org string, due int64, id string) { s.addDeadline(uint8(i), org, due, id) })
	}
}

// live reports whether a heap entry is still its record's deadline.
func (s *State) live(d *deadline) bool {
	org, due, ok := s.expirers[d.exp].Deadline(s, d.id)
	return ok && due-s.OrgNow(org, 0) == d.at
}

// expireDue makes every transition due at leader time at, earliest
// deadline first.
func (s *State) expireDue(at int64) {
	for len(s.deadlines) > 0 && s.deadlines[0].at <= at {
		d := heap.Pop(&s.deadlines).(deadline)
		if s.live(&d) {
			s.expirers[d.exp].Expire(s, d.id, at)
		}
	}
}

// nextDeadline is the earliest deadline in leader time, 0 for none. It
// drops the entries of deadlines met meanwhile first, so that the leader
// does not propose a Tick for nothing.
func (s *State) nextDeadline() int64 {
	for len(s.deadlines) > 0 && !s.live(&s.deadlines[0]) {
		heap.Pop(&s.deadlines)
	}
	if len(s.deadlines) == 0 {
		return 0
	}
	return s.deadlines[0].at
}

// ExpiryDue reports whether a Tick at leader time at would expire
// anything. It looks at every deadline: tests use it; the leader reads
// Views.NextDeadline.
func (s *State) ExpiryDue(at int64) bool {
	for i := range s.deadlines {
		if d := &s.deadlines[i]; d.at <= at && s.live(d) {
			return true
		}
	}
	return false
}

// deadline is one entry of the deadline heap. Entries of records that met
// their deadline meanwhile stay until they come up and are dropped, so two
// replicas' heaps may differ in such entries, never in the order of the
// live ones: ties go by Expirer and id, not by when an entry was added.
type deadline struct {
	at  int64  // leader time, unix ms
	exp uint8  // the Expirer
	id  string // its record
}

type deadlineHeap []deadline

func (h deadlineHeap) Len() int { return len(h) }
func (h deadlineHeap) Less(i, j int) bool {
	a, b := &h[i], &h[j]
	if a.at != b.at {
		return a.at < b.at
	}
	if a.exp != b.exp {
		return a.exp < b.exp
	}
	return a.id < b.id
}
func (h deadlineHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *deadlineHeap) Push(x any)   { *h = append(*h, x.(deadline)) }
func (h *deadlineHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
