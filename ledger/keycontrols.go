package ledger

import (
	"net/netip"
	"strconv"
	"strings"
)

// Key controls: the spend caps (spendcap.go) and the caller IP allowlist a
// key may carry, set when it is created and changed later. They are part
// of the key's record, after its original fields, so a key stored before
// controls existed reads as one without any.

// AllowlistEntriesMax bounds a key's allowlist.
const AllowlistEntriesMax = 100

// ParseAllowlist validates an allowlist given as CIDR prefixes (IPv4 or
// IPv6; a single address is its /32 or /128) and returns it in canonical
// form: the prefixes, comma-separated. The errors name the entry by its
// index under field.
func ParseAllowlist(field string, entries []string) (string, *Error) {
	if len(entries) > AllowlistEntriesMax {
		return "", FieldInvalid(field, "has more than "+strconv.Itoa(AllowlistEntriesMax)+" entries")
	}
	var problems []FieldError
	out := make([]string, 0, len(entries))
	for i, raw := range entries {
		name := field + "." + strconv.Itoa(i)
		p, msg := parseAllowlistEntry(strings.TrimSpace(raw))
		if msg != "" {
			problems = append(problems, FieldError{Field: name, Message: msg})
			continue
		}
		out = append(out, p.String())
	}
	if problems != nil {
		return "", &Error{Code: CodeValidation, Message: "Invalid IP allowlist", Fields: problems}
	}
	return strings.Join(out, ","), nil
}

func parseAllowlistEntry(s string) (netip.Prefix, string) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, "is not an IP address or CIDR prefix such as 203.0.113.0/24 or 2001:db8::/32"
		}
		if a.Is4In6() {
			return netip.Prefix{}, "is an IPv4-mapped IPv6 address: write it as IPv4 (" + a.Unmap().String() + ")"
		}
		return netip.PrefixFrom(a, a.BitLen()), ""
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, "is not a CIDR prefix such as 203.0.113.0/24 or 2001:db8::/32"
	}
	if p.Addr().Is4In6() {
		return netip.Prefix{}, "is an IPv4-mapped IPv6 prefix: write it in IPv4 form"
	}
	if p.Masked() != p {
		return netip.Prefix{}, "has bits set past its prefix length: did you mean " + p.Masked().String() + "?"
	}
	return p, ""
}

// AllowlistPrefixes returns a canonical allowlist's prefixes.
func AllowlistPrefixes(canonical string) []netip.Prefix {
	if canonical == "" {
		return nil
	}
	parts := strings.Split(canonical, ",")
	out := make([]netip.Prefix, 0, len(parts))
	for _, s := range parts {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// AllowlistEntries returns a canonical allowlist as its entries.
func AllowlistEntries(canonical string) []string {
	if canonical == "" {
		return []string{}
	}
	return strings.Split(canonical, ",")
}

// AllowlistPermits reports whether a caller at addr may use a key with the
// canonical allowlist: an empty list permits everyone.
func AllowlistPermits(canonical string, addr netip.Addr) bool {
	if canonical == "" {
		return true
	}
	addr = addr.Unmap()
	for _, p := range AllowlistPrefixes(canonical) {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// KeyControls are the controls a create or a change sets.
type KeyControls struct {
	Caps      SpendCaps
	Allowlist string // canonical (ParseAllowlist)
}

func encodeCapOpt(e *Encoder, c *Minor) {
	if c == nil {
		e.Varint(-1)
		return
	}
	e.Varint(int64(*c))
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

func (c *KeyControls) encode(e *Encoder) {
	encodeCapOpt(e, c.Caps.PerTransaction)
	encodeCapOpt(e, c.Caps.Daily)
	encodeCapOpt(e, c.Caps.Monthly)
	e.Str(c.Allowlist)
}

func decodeKeyControls(d *Decoder) KeyControls {
	return KeyControls{
		Caps:      SpendCaps{PerTransaction: decodeCapOpt(d), Daily: decodeCapOpt(d), Monthly: decodeCapOpt(d)},
		Allowlist: d.Str(),
	}
}

// keyControlsVersion marks the controls section of a stored key.
const keyControlsVersion = 1

// encodeKeyControlsSection appends a key's controls and usage to its record.
func encodeKeyControlsSection(e *Encoder, k *APIKey) {
	e.U8(keyControlsVersion)
	c := KeyControls{Caps: k.Caps, Allowlist: k.Allowlist}
	c.encode(e)
	e.Varint(int64(k.Spent.Period.Day))
	e.Varint(int64(k.Spent.Period.Month))
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
	c := decodeKeyControls(d)
	k.Caps, k.Allowlist = c.Caps, c.Allowlist
	k.Spent.Period = decodeSpendPeriod(d)
	k.Spent.Day = Minor(d.Varint())
	k.Spent.Month = Minor(d.Varint())
}

// SetKeyControls changes a key's controls: each part whose Set flag is on.
type SetKeyControls struct {
	At    int64
	OrgID string
	KeyID string
	// Which controls change: a cap left unset keeps its value.
	SetPerTransaction, SetDaily, SetMonthly, SetAllowlist bool
	Controls                                              KeyControls
}

// CreateControlledKey creates a key with controls, in one step.
type CreateControlledKey struct {
	Key      CreateAPIKey
	Controls KeyControls
}

func (*SetKeyControls) Kind() Kind      { return KindSetKeyControls }
func (*CreateControlledKey) Kind() Kind { return KindCreateControlledKey }

func (c *SetKeyControls) Encode(e *Encoder) {
	e.Varint(c.At)
	e.Str(c.OrgID)
	e.Str(c.KeyID)
	var set uint8
	for i, b := range []bool{c.SetPerTransaction, c.SetDaily, c.SetMonthly, c.SetAllowlist} {
		if b {
			set |= 1 << i
		}
	}
	e.U8(set)
	c.Controls.encode(e)
}

func (c *CreateControlledKey) Encode(e *Encoder) {
	c.Key.Encode(e)
	c.Controls.encode(e)
}

func init() {
	RegisterCommand(KindSetKeyControls, func(d *Decoder) Command {
		c := &SetKeyControls{At: d.Varint(), OrgID: d.Str(), KeyID: d.Str()}
		set := d.U8()
		if set&^15 != 0 {
			d.Fail(Errorf(CodeValidation, "unknown key controls bits %#x", set))
		}
		c.SetPerTransaction, c.SetDaily, c.SetMonthly, c.SetAllowlist = set&1 != 0, set&2 != 0, set&4 != 0, set&8 != 0
		c.Controls = decodeKeyControls(d)
		return c
	})
	RegisterCommand(KindCreateControlledKey, func(d *Decoder) Command {
		return &CreateControlledKey{Key: decodeCreateAPIKey(d), Controls: decodeKeyControls(d)}
	})
}

// check re-validates controls chosen by the front end.
func (c *KeyControls) check() *Error {
	for _, cp := range []struct {
		name string
		v    *Minor
	}{{SpendCapPerTransaction, c.Caps.PerTransaction}, {SpendCapDaily, c.Caps.Daily}, {SpendCapMonthly, c.Caps.Monthly}} {
		if cp.v != nil && (*cp.v < 0 || *cp.v > AmountMax) {
			return FieldInvalid("spendCaps."+cp.name, "is out of range")
		}
	}
	if _, err := ParseAllowlist("ipAllowlist", AllowlistEntries(c.Allowlist)); err != nil {
		return err
	}
	return nil
}

func (c *CreateControlledKey) Apply(s *State) Result {
	if err := c.Controls.check(); err != nil {
		return Result{Err: err}
	}
	res := s.createAPIKey(&c.Key)
	if res.Err != nil {
		return res
	}
	key := *res.APIKey
	key.Caps, key.Allowlist = c.Controls.Caps, c.Controls.Allowlist
	s.keys.put(key)
	return Result{APIKey: &key}
}

func (c *SetKeyControls) Apply(s *State) Result {
	if err := c.Controls.check(); err != nil {
		return Result{Err: err}
	}
	key, ok := s.keys.owned(c.OrgID, c.KeyID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "API key not found")}
	}
	if key.Revoked {
		return Result{Err: Errorf(CodeConflict, "API key %s is revoked; a revoked key cannot be changed", key.ID)}
	}
	if c.SetPerTransaction {
		key.Caps.PerTransaction = c.Controls.Caps.PerTransaction
	}
	if c.SetDaily {
		key.Caps.Daily = c.Controls.Caps.Daily
	}
	if c.SetMonthly {
		key.Caps.Monthly = c.Controls.Caps.Monthly
	}
	if c.SetAllowlist {
		key.Allowlist = c.Controls.Allowlist
	}
	s.keys.put(key)
	return Result{APIKey: &key}
}

// APIKey returns an organization's key by id: another organization's id is
// as unknown as a made-up one.
func (r *Reader) APIKey(orgID, id string) (APIKey, bool) {
	k, ok := readRecord(r, apiKeyKind, id)
	if !ok || k.OrgID != orgID {
		return APIKey{}, false
	}
	return k, true
}
