package ledger

// The sandbox clock and deadlines.
//
// Every rule reads time from its command's At, the leader's clock. An
// organization's clock is At plus the offset that sandbox simulations have
// advanced it by, so quotes, orders and checkout sessions can be expired in
// tests without sleeping. Production organizations never have an offset.
//
// Deadline-driven transitions (a quote, order or session expiring) are made
// by expirers: each feature registers one in NewState. Two commands run
// them: Tick, which the leader proposes when ExpiryDue says something is
// due, and AdvanceClock, which moves one organization's clock and then
// expires whatever the jump made due, in the same Apply.

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

// expirer is one feature's deadline-driven transitions.
type expirer struct {
	// due reports whether anything expires at leader time at; it must not
	// change the state.
	due func(s *State, at int64) bool
	// expire makes every transition due at leader time at, emitting their
	// events. Each record's deadline is compared with its organization's
	// clock, s.OrgNow(org, at).
	expire func(s *State, at int64)
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

func (c *AdvanceClock) encode(e *encoder) {
	e.varint(c.At)
	e.str(c.OrgID)
	e.varint(c.Millis)
}

func (c *Tick) encode(e *encoder) { e.varint(c.At) }

func init() {
	registerCommand(KindAdvanceClock, func(d *decoder) Command {
		return &AdvanceClock{At: d.varint(), OrgID: d.str(), Millis: d.varint()}
	})
	registerCommand(KindTick, func(d *decoder) Command { return &Tick{At: d.varint()} })
}

func encodeClock(e *encoder, c *Clock) {
	e.str(c.OrgID)
	e.varint(c.OffsetMillis)
	e.varint(c.UpdatedAt)
}

func decodeClock(d *decoder) Clock {
	return Clock{OrgID: d.str(), OffsetMillis: d.varint(), UpdatedAt: d.varint()}
}

func (c *AdvanceClock) apply(s *State) Result {
	if _, ok := s.orgs.get(c.OrgID); !ok {
		return Result{Err: errorf(CodeNotFound, "Organization not found")}
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
	s.expireDue(c.At)
	return Result{Clock: &clk}
}

func (c *Tick) apply(s *State) Result {
	s.expireDue(c.At)
	return Result{}
}

func (s *State) expireDue(at int64) {
	for _, x := range s.expirers {
		x.expire(s, at)
	}
}

// OrgNow is an organization's current time, in unix milliseconds, when the
// leader's clock reads at.
func (s *State) OrgNow(orgID string, at int64) int64 {
	if c, ok := s.clocks.get(orgID); ok {
		return at + c.OffsetMillis
	}
	return at
}

// Clock returns an organization's sandbox clock; the zero offset if it was
// never advanced.
func (s *State) Clock(orgID string) Clock {
	if c, ok := s.clocks.get(orgID); ok {
		return c
	}
	return Clock{OrgID: orgID}
}

// ExpiryDue reports whether a Tick at leader time at would expire anything.
func (s *State) ExpiryDue(at int64) bool {
	for _, x := range s.expirers {
		if x.due(s, at) {
			return true
		}
	}
	return false
}
