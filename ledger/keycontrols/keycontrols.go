// Package keycontrols is the controls an API key may carry: spend caps in
// US dollars on what it sends out of the organization's balances, and an
// allowlist of the caller addresses it may be used from, set when the key
// is created and changed later. It is a feature of the ledger's kernel
// (ledger/feature.go): its commands are applied by ledger.State.Apply in
// log order like every other, and the charges of debits not yet settled
// are kept in the state store under tag ledger.TagSpendCharge.
//
// The controls and the key's usage are fields of the kernel's
// ledger.APIKey (Caps, Allowlist, Spent), kept in a section of the key's
// record (ledger/export_keycontrols.go); this package holds the rules that
// read and change them.
package keycontrols

import (
	"net/netip"
	"strconv"
	"strings"

	"payments/ledger"
)

// Command kinds of key controls.
const (
	KindSet       ledger.Kind = 90
	KindCreateKey ledger.Kind = 91
	KindCharged               = ledger.KindSpendCharged // 92
)

// AllowlistEntriesMax bounds a key's allowlist.
const AllowlistEntriesMax = 100

// ParseAllowlist validates an allowlist given as CIDR prefixes (IPv4 or
// IPv6; a single address is its /32 or /128) and returns it in canonical
// form: the prefixes, comma-separated. The errors name the entry by its
// index under field.
func ParseAllowlist(field string, entries []string) (string, *ledger.Error) {
	if len(entries) > AllowlistEntriesMax {
		return "", ledger.FieldInvalid(field, "has more than "+strconv.Itoa(AllowlistEntriesMax)+" entries")
	}
	var problems []ledger.FieldError
	out := make([]string, 0, len(entries))
	for i, raw := range entries {
		name := field + "." + strconv.Itoa(i)
		p, msg := parseAllowlistEntry(strings.TrimSpace(raw))
		if msg != "" {
			problems = append(problems, ledger.FieldError{Field: name, Message: msg})
			continue
		}
		out = append(out, p.String())
	}
	if problems != nil {
		return "", &ledger.Error{Code: ledger.CodeValidation, Message: "Invalid IP allowlist", Fields: problems}
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

// Controls are the controls a create or a change sets.
type Controls struct {
	Caps      ledger.SpendCaps
	Allowlist string // canonical (ParseAllowlist)
}

func (c *Controls) encode(e *ledger.Encoder) {
	c.Caps.Encode(e)
	e.Str(c.Allowlist)
}

func decodeControls(d *ledger.Decoder) Controls {
	return Controls{Caps: ledger.DecodeSpendCaps(d), Allowlist: d.Str()}
}

// Set changes a key's controls: each part whose Set flag is on.
type Set struct {
	At    int64
	OrgID string
	KeyID string
	// Which controls change: a cap left unset keeps its value.
	SetPerTransaction, SetDaily, SetMonthly, SetAllowlist bool
	Controls                                              Controls
}

// CreateKey creates a key with controls, in one step.
type CreateKey struct {
	Key      ledger.CreateAPIKey
	Controls Controls
}

func (*Set) Kind() ledger.Kind       { return KindSet }
func (*CreateKey) Kind() ledger.Kind { return KindCreateKey }

func (c *Set) Encode(e *ledger.Encoder) {
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

func (c *CreateKey) Encode(e *ledger.Encoder) {
	c.Key.Encode(e)
	c.Controls.encode(e)
}

func init() {
	ledger.RegisterCommand(KindSet, func(d *ledger.Decoder) ledger.Command {
		c := &Set{At: d.Varint(), OrgID: d.Str(), KeyID: d.Str()}
		set := d.U8()
		if set&^15 != 0 {
			d.Fail(ledger.Errorf(ledger.CodeValidation, "unknown key controls bits %#x", set))
		}
		c.SetPerTransaction, c.SetDaily, c.SetMonthly, c.SetAllowlist = set&1 != 0, set&2 != 0, set&4 != 0, set&8 != 0
		c.Controls = decodeControls(d)
		return c
	})
	ledger.RegisterCommand(KindCreateKey, func(d *ledger.Decoder) ledger.Command {
		return &CreateKey{Key: ledger.DecodeCreateAPIKey(d), Controls: decodeControls(d)}
	})
}

// check re-validates controls chosen by the front end.
func (c *Controls) check() *ledger.Error {
	for _, cp := range []struct {
		name string
		v    *ledger.Minor
	}{{CapPerTransaction, c.Caps.PerTransaction}, {CapDaily, c.Caps.Daily}, {CapMonthly, c.Caps.Monthly}} {
		if cp.v != nil && (*cp.v < 0 || *cp.v > ledger.AmountMax) {
			return ledger.FieldInvalid("spendCaps."+cp.name, "is out of range")
		}
	}
	if _, err := ParseAllowlist("ipAllowlist", AllowlistEntries(c.Allowlist)); err != nil {
		return err
	}
	return nil
}

func (c *CreateKey) Apply(s *ledger.State) ledger.Result {
	if err := c.Controls.check(); err != nil {
		return ledger.Result{Err: err}
	}
	res := s.Apply(&c.Key)
	if res.Err != nil {
		return res
	}
	key := *res.APIKey
	key.Caps, key.Allowlist = c.Controls.Caps, c.Controls.Allowlist
	s.PutAPIKey(key)
	return ledger.Result{APIKey: &key}
}

func (c *Set) Apply(s *ledger.State) ledger.Result {
	if err := c.Controls.check(); err != nil {
		return ledger.Result{Err: err}
	}
	key, ok := s.APIKey(c.OrgID, c.KeyID)
	if !ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeNotFound, "API key not found")}
	}
	if key.Revoked {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "API key %s is revoked; a revoked key cannot be changed", key.ID)}
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
	s.PutAPIKey(key)
	return ledger.Result{APIKey: &key}
}
