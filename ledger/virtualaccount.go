package ledger

import "strconv"

// Virtual accounts: a bank account number, issued in the organization's
// name, that a customer transfers into from any bank. Every transfer is a
// deposit (deposit.go): a collection of type virtual_account that credits
// the organization's balance in the account's currency.
//
//	active ──PATCH paused──▶ paused ──PATCH active──▶ active
//
// A paused account refuses deposits; its number never changes, so nothing a
// customer saved goes stale.

// Command kinds of virtual accounts (range 20–49, see extend.go).
const (
	KindCreateVirtualAccount Kind = 25
	KindUpdateVirtualAccount Kind = 26
)

// VirtualAccountStatus is whether a virtual account takes deposits.
type VirtualAccountStatus uint8

// Virtual account statuses. Values are frozen.
const (
	VirtualAccountActive VirtualAccountStatus = 1
	VirtualAccountPaused VirtualAccountStatus = 2
)

var virtualAccountStatusNames = EnumNames[VirtualAccountStatus]{"", "active", "paused"}

func (s VirtualAccountStatus) String() string { return virtualAccountStatusNames.String(s) }

// ParseVirtualAccountStatus returns the status with the given API name.
func ParseVirtualAccountStatus(name string) (VirtualAccountStatus, bool) {
	return virtualAccountStatusNames.Parse(name)
}

// VirtualAccount is a bank account number that credits an organization's
// balance.
type VirtualAccount struct {
	ID                string
	OrgID             string
	Status            VirtualAccountStatus
	Currency          string
	Bank              string // the bank that holds the account
	AccountNumber     string // ten digits, unique across the service
	AccountName       string // what the sender's bank shows: the organization's name
	ExternalReference string // the caller's, e.g. their customer id; may be empty
	Metadata          string // canonical JSON object, or ""
	CreatedAt         int64
	UpdatedAt         int64
}

// CreateVirtualAccount issues a virtual account. The account number is
// derived by the ledger, so every replica picks the same one. With an
// externalReference, it is idempotent per currency: the same reference and
// currency again returns the existing account (different metadata is a
// duplicate).
type CreateVirtualAccount struct {
	At                int64
	ID                string
	OrgID             string
	Currency          string
	Bank              string
	ExternalReference string
	Metadata          string
}

// UpdateVirtualAccount pauses or reactivates a virtual account.
type UpdateVirtualAccount struct {
	At     int64
	ID     string
	OrgID  string
	Status VirtualAccountStatus
}

func (*CreateVirtualAccount) Kind() Kind { return KindCreateVirtualAccount }
func (*UpdateVirtualAccount) Kind() Kind { return KindUpdateVirtualAccount }

func (c *CreateVirtualAccount) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.Currency)
	f.Str(&c.Bank)
	f.Str(&c.ExternalReference)
	f.Str(&c.Metadata)
}

func (c *CreateVirtualAccount) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *UpdateVirtualAccount) Encode(e *Encoder) {
	e.Varint(c.At)
	e.Str(c.ID)
	e.Str(c.OrgID)
	e.U8(uint8(c.Status))
}

func init() {
	registerFields[CreateVirtualAccount](KindCreateVirtualAccount)
	RegisterCommand(KindUpdateVirtualAccount, func(d *Decoder) Command {
		return &UpdateVirtualAccount{At: d.Varint(), ID: d.Str(), OrgID: d.Str(), Status: VirtualAccountStatus(d.U8())}
	})
}

func encodeVirtualAccount(e *Encoder, v *VirtualAccount) {
	e.Str(v.ID)
	e.Str(v.OrgID)
	e.U8(uint8(v.Status))
	e.Str(v.Currency)
	e.Str(v.Bank)
	e.Str(v.AccountNumber)
	e.Str(v.AccountName)
	e.Str(v.ExternalReference)
	e.Str(v.Metadata)
	e.Varint(v.CreatedAt)
	e.Varint(v.UpdatedAt)
}

func decodeVirtualAccount(d *Decoder) VirtualAccount {
	return VirtualAccount{
		ID: d.Str(), OrgID: d.Str(), Status: VirtualAccountStatus(d.U8()), Currency: d.Str(),
		Bank: d.Str(), AccountNumber: d.Str(), AccountName: d.Str(), ExternalReference: d.Str(),
		Metadata: d.Str(), CreatedAt: d.Varint(), UpdatedAt: d.Varint(),
	}
}

// vaRefKey scopes a virtual account's reference to its currency.
func vaRefKey(org, currency, ref string) orgKey { return orgKey{org, currency + "\x00" + ref} }

// virtualAccountKind: virtual accounts stay open for good (they can be
// paused and reactivated).
var virtualAccountKind = &kind[VirtualAccount]{
	tag: tagVirtualAccount, name: "virtual account",
	id:  func(v *VirtualAccount) (string, string) { return v.ID, v.OrgID },
	enc: encodeVirtualAccount, dec: decodeVirtualAccount,
}

func (s *State) indexVirtualAccount(v *VirtualAccount) {
	d := s.deposits
	d.vaByNumber[v.AccountNumber] = v.ID
	if v.ExternalReference != "" {
		d.vaByRef[vaRefKey(v.OrgID, v.Currency, v.ExternalReference)] = v.ID
	}
}

func (c *CreateVirtualAccount) Apply(s *State) Result {
	if err := CheckID(c.ID, "va_"); err != nil {
		return Result{Err: err}
	}
	org, ok := s.orgs.get(c.OrgID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Organization not found")}
	}
	cur, ok := LookupCurrency(c.Currency)
	if !ok || cur.Crypto {
		return Result{Err: FieldInvalid("currency", "is not a currency virtual accounts are issued in")}
	}
	if c.Bank == "" {
		return Result{Err: FieldInvalid("currency", "has no bank that issues virtual accounts")}
	}
	d := s.deposits
	if c.ExternalReference != "" {
		if id, ok := d.vaByRef[vaRefKey(c.OrgID, c.Currency, c.ExternalReference)]; ok {
			v, _ := d.virtualAccounts.get(id)
			if v.Metadata == c.Metadata {
				return Result{Replayed: true, VirtualAccount: &v}
			}
			return Result{Err: Duplicate("Virtual account", v.ID)}
		}
	}
	if _, ok := d.virtualAccounts.get(c.ID); ok {
		return Result{Err: Errorf(CodeConflict, "virtual account %s already exists", c.ID)}
	}
	v := VirtualAccount{
		ID:                c.ID,
		OrgID:             c.OrgID,
		Status:            VirtualAccountActive,
		Currency:          cur.Code,
		Bank:              c.Bank,
		AccountNumber:     s.newVirtualAccountNumber(),
		AccountName:       org.Name,
		ExternalReference: c.ExternalReference,
		Metadata:          c.Metadata,
		CreatedAt:         s.OrgNow(c.OrgID, c.At),
		UpdatedAt:         s.OrgNow(c.OrgID, c.At),
	}
	d.virtualAccounts.insert(v)
	s.indexVirtualAccount(&v)
	return Result{VirtualAccount: &v}
}

// newVirtualAccountNumber derives a ten-digit account number from the
// account's place among all virtual accounts, scrambled so numbers look
// unrelated, probing forward on a collision. It depends only on the state,
// so every replica picks the same number.
func (s *State) newVirtualAccountNumber() string {
	n := scramble(s.deposits.virtualAccounts.nextSeq()) % 9_000_000_000
	for {
		number := strconv.FormatUint(1_000_000_000+n, 10)
		if _, taken := s.deposits.vaByNumber[number]; !taken {
			return number
		}
		n = (n + 1) % 9_000_000_000
	}
}

func (c *UpdateVirtualAccount) Apply(s *State) Result {
	v, ok := s.deposits.virtualAccounts.owned(c.OrgID, c.ID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Virtual account not found")}
	}
	if c.Status != VirtualAccountActive && c.Status != VirtualAccountPaused {
		return Result{Err: FieldInvalid("status", "must be active or paused")}
	}
	if v.Status == c.Status {
		return Result{VirtualAccount: &v}
	}
	v.Status = c.Status
	v.UpdatedAt = s.OrgNow(c.OrgID, c.At)
	s.deposits.virtualAccounts.put(v)
	return Result{VirtualAccount: &v}
}

// VirtualAccount returns an organization's virtual account by id.
func (r *Reader) VirtualAccount(orgID, id string) (VirtualAccount, bool) {
	return readOwned(r, virtualAccountKind, orgID, id)
}

// VirtualAccountFilter selects virtual accounts in a list; zero fields match
// everything.
type VirtualAccountFilter struct {
	Status            VirtualAccountStatus
	Currency          string
	ExternalReference string
}

// VirtualAccounts lists an organization's virtual accounts newest first.
func (r *Reader) VirtualAccounts(orgID string, f VirtualAccountFilter, before Cursor, limit int) Page[VirtualAccount] {
	k := virtualAccountKind
	return readPage(r, k, k.listPrefix(orgID), before, limit, func(v *VirtualAccount) bool {
		return (f.Status == 0 || v.Status == f.Status) &&
			(f.Currency == "" || v.Currency == f.Currency) &&
			(f.ExternalReference == "" || v.ExternalReference == f.ExternalReference)
	})
}
