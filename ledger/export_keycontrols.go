package ledger

// What package keycontrols needs of the kernel, and what the kernel keeps
// of key controls. The rules — the caps, the charges a debit counts against
// them, the allowlists and the commands that set them — are the feature's.
// The data stays here: a key's controls and usage are a section of the API
// key record, whose bytes are frozen with them inside, and the kernel reads
// the key whole (the front end checks the allowlist on the key it already
// loaded to authenticate); a refusal keeps a spend cap's details in its
// Error. So the kernel keeps the plain fields and their codec, and nothing
// that decides.

// KindSpendCharged is package keycontrols' charge of a debit
// (keycontrols.KindCharged). It stays here because Decided takes it (as
// the create it wraps: Wrapper).
const KindSpendCharged Kind = 92

// SpendCaps are a key's caps in USD cents; nil is no cap.
type SpendCaps struct {
	PerTransaction *Minor
	Daily          *Minor
	Monthly        *Minor
}

// SpendPeriod is a calendar day and month in an organization's timezone:
// Day counts days from 1970-01-01, Month months from January of year 0.
type SpendPeriod struct {
	Day   int32
	Month int32
}

// SpendUsage is what a key has spent, in USD cents, in the day and month
// of Period.
type SpendUsage struct {
	Period SpendPeriod
	Day    Minor
	Month  Minor
}

// SpendCapDetails say which cap a debit would pass: the cap's name, its
// limit, what the key has used of it and what the debit asked, in USD cents.
type SpendCapDetails struct {
	Cap       string
	Limit     Minor
	Used      Minor
	Attempted Minor
}

// Encode writes the caps, each a varint, -1 for none: the key record's
// controls section and the commands that set them share the layout.
func (c *SpendCaps) Encode(e *Encoder) {
	for _, v := range []*Minor{c.PerTransaction, c.Daily, c.Monthly} {
		if v == nil {
			e.Varint(-1)
		} else {
			e.Varint(int64(*v))
		}
	}
}

// DecodeSpendCaps reads what SpendCaps.Encode wrote.
func DecodeSpendCaps(d *Decoder) SpendCaps {
	return SpendCaps{PerTransaction: decodeCapOpt(d), Daily: decodeCapOpt(d), Monthly: decodeCapOpt(d)}
}

func decodeCapOpt(d *Decoder) *Minor {
	v := Minor(d.Varint())
	if v < -1 {
		d.Fail(Errorf(CodeValidation, "spend cap %d is negative", v))
	}
	if v < 0 {
		return nil
	}
	return &v
}

// Encode writes the period, day then month, as the key record and a
// charge keep it.
func (p SpendPeriod) Encode(e *Encoder) {
	e.Varint(int64(p.Day))
	e.Varint(int64(p.Month))
}

// DecodeSpendPeriod reads what SpendPeriod.Encode wrote.
func DecodeSpendPeriod(d *Decoder) SpendPeriod {
	day, month := d.Varint(), d.Varint()
	if day != int64(int32(day)) || month != int64(int32(month)) {
		d.Fail(Errorf(CodeValidation, "spend period out of range"))
	}
	return SpendPeriod{int32(day), int32(month)}
}

// keyControlsVersion marks the controls section of a stored key.
const keyControlsVersion = 1

// encodeKeyControlsSection appends a key's controls and usage to its
// record, after its original fields, so a key stored before controls
// existed reads as one without any.
func encodeKeyControlsSection(e *Encoder, k *APIKey) {
	e.U8(keyControlsVersion)
	k.Caps.Encode(e)
	e.Str(k.Allowlist)
	k.Spent.Period.Encode(e)
	e.Varint(int64(k.Spent.Day))
	e.Varint(int64(k.Spent.Month))
}

// decodeKeyControlsSection reads what encodeKeyControlsSection wrote, if
// the record has it.
func decodeKeyControlsSection(d *Decoder, k *APIKey) {
	if len(d.Rest()) == 0 || d.Err() != nil {
		return
	}
	if v := d.U8(); v != keyControlsVersion {
		d.Fail(Errorf(CodeValidation, "unknown key controls version %d", v))
		return
	}
	k.Caps = DecodeSpendCaps(d)
	k.Allowlist = d.Str()
	k.Spent.Period = DecodeSpendPeriod(d)
	k.Spent.Day = Minor(d.Varint())
	k.Spent.Month = Minor(d.Varint())
}

// Wrapper is a command that applies another, Wrapped, with a rule of its
// own around it (a key's spend charge around a debit): Decided takes it
// as the create it wraps.
type Wrapper interface {
	Command
	Wrapped() Command
}

// DecodeCommand reads a command with its kind, as a batch holds it: the
// debit inside a charge.
func DecodeCommand(d *Decoder) (Command, error) { return decodeCommand(d) }

// DecodeCreateAPIKey reads what CreateAPIKey.Encode wrote: the key inside
// a create with controls.
func DecodeCreateAPIKey(d *Decoder) CreateAPIKey { return decodeCreateAPIKey(d) }

// APIKey returns an organization's key by id, as spend caps charge and
// controls change it.
func (s *State) APIKey(org, id string) (APIKey, bool) { return s.keys.owned(org, id) }

// PutAPIKey stores a changed key (its controls, its usage).
func (s *State) PutAPIKey(k APIKey) { s.keys.put(k) }

// Charged makes a payout a debit spend caps charge (ChargedOp).
func (c *CreatePayout) Charged(s *State) (org, ref string, taken bool) {
	_, taken = s.payouts.byReference(c.OrgID, c.ExternalReference)
	return c.OrgID, c.ExternalReference, taken
}

// ChargedID is the payout the create made.
func (c *CreatePayout) ChargedID(res *Result) string { return payoutID(res) }

func payoutID(res *Result) string {
	if res.Payout == nil {
		return ""
	}
	return res.Payout.ID
}

// Resident returns the record with id if memory holds it (open, or changed
// since the last release), without a read of the state store: a hook that
// runs on every event asks it.
func (st Store[V]) Resident(id string) (V, bool) {
	r, ok := st.t.rows[id]
	if !ok {
		var zero V
		return zero, false
	}
	return r.v, true
}
