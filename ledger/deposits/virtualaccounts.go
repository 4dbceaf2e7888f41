package deposits

import (
	"strconv"

	"payments/ledger"
)

// Virtual accounts: a bank account number, issued in the organization's
// name, that a customer transfers into from any bank. Every transfer is a
// deposit (deposits.go): a collection of type virtual_account that credits
// the organization's balance in the account's currency.
//
//	active ──PATCH paused──▶ paused ──PATCH active──▶ active
//
// A paused account refuses deposits; its number never changes, so nothing a
// customer saved goes stale.

// Command kinds of virtual accounts (range 20–49, see ledger/extend.go).
const (
	KindCreateVirtualAccount ledger.Kind = 25
	KindUpdateVirtualAccount ledger.Kind = 26
)

// VirtualAccountStatus is whether a virtual account takes deposits.
type VirtualAccountStatus uint8

// Virtual account statuses. Values are frozen.
const (
	VirtualAccountActive VirtualAccountStatus = 1
	VirtualAccountPaused VirtualAccountStatus = 2
)

var virtualAccountStatusNames = ledger.EnumNames[VirtualAccountStatus]{"", "active", "paused"}

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

func (*CreateVirtualAccount) Kind() ledger.Kind { return KindCreateVirtualAccount }
func (*UpdateVirtualAccount) Kind() ledger.Kind { return KindUpdateVirtualAccount }

// VirtualAccountOf returns the virtual account a command made or changed,
// or nil.
func VirtualAccountOf(res ledger.Result) *VirtualAccount { return ledger.ValueOf[VirtualAccount](res) }

// Fields is the command's codec, in its frozen order.
func (c *CreateVirtualAccount) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.Currency, &c.Bank, &c.ExternalReference, &c.Metadata)
}

func (c *CreateVirtualAccount) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

// Fields is the command's codec, in its frozen order.
func (c *UpdateVirtualAccount) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID)
	ledger.FieldU8(f, &c.Status)
}

func (c *UpdateVirtualAccount) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (v *VirtualAccount) fields(f *ledger.Codec) {
	f.Str(&v.ID, &v.OrgID)
	ledger.FieldU8(f, &v.Status)
	f.Str(&v.Currency, &v.Bank, &v.AccountNumber, &v.AccountName, &v.ExternalReference, &v.Metadata)
	f.Varint(&v.CreatedAt, &v.UpdatedAt)
}

// virtualAccountKind: virtual accounts stay open for good (they can be
// paused and reactivated), every one in memory.
var virtualAccountKind = ledger.NewRecordKind(ledger.RecordSpec[VirtualAccount]{
	Tag: ledger.TagVirtualAccount, Name: "virtual account",
	ID:     func(v *VirtualAccount) (string, string) { return v.ID, v.OrgID },
	Fields: (*VirtualAccount).fields,
})

// vaRefKey scopes a virtual account's reference to its currency.
func vaRefKey(org, currency, ref string) orgKey { return orgKey{org, currency + "\x00" + ref} }

func (b *book) indexVirtualAccount(v *VirtualAccount) {
	b.vaByNumber[v.AccountNumber] = v.ID
	if v.ExternalReference != "" {
		b.vaByRef[vaRefKey(v.OrgID, v.Currency, v.ExternalReference)] = v.ID
	}
}

func (c *CreateVirtualAccount) Apply(s *ledger.State) ledger.Result {
	if err := ledger.CheckID(c.ID, "va_"); err != nil {
		return ledger.Result{Err: err}
	}
	name, ok := s.OrgName(c.OrgID)
	if !ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeNotFound, "Organization not found")}
	}
	cur, ok := ledger.LookupCurrency(c.Currency)
	if !ok || cur.Crypto {
		return ledger.Result{Err: ledger.FieldInvalid("currency", "is not a currency virtual accounts are issued in")}
	}
	if c.Bank == "" {
		return ledger.Result{Err: ledger.FieldInvalid("currency", "has no bank that issues virtual accounts")}
	}
	b := feature.Of(s)
	if c.ExternalReference != "" {
		if id, ok := b.vaByRef[vaRefKey(c.OrgID, c.Currency, c.ExternalReference)]; ok {
			v, _ := b.virtualAccounts.Get(id)
			if v.Metadata == c.Metadata {
				return ledger.Result{Replayed: true, Value: &v}
			}
			return ledger.Result{Err: ledger.Duplicate("Virtual account", v.ID)}
		}
	}
	if _, ok := b.virtualAccounts.Get(c.ID); ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "virtual account %s already exists", c.ID)}
	}
	v := VirtualAccount{
		ID:                c.ID,
		OrgID:             c.OrgID,
		Status:            VirtualAccountActive,
		Currency:          cur.Code,
		Bank:              c.Bank,
		AccountNumber:     b.newVirtualAccountNumber(),
		AccountName:       name,
		ExternalReference: c.ExternalReference,
		Metadata:          c.Metadata,
		CreatedAt:         s.OrgNow(c.OrgID, c.At),
		UpdatedAt:         s.OrgNow(c.OrgID, c.At),
	}
	b.virtualAccounts.Insert(v)
	b.indexVirtualAccount(&v)
	return ledger.Result{Value: &v}
}

// newVirtualAccountNumber derives a ten-digit account number from the
// account's place among all virtual accounts, scrambled so numbers look
// unrelated, probing forward on a collision. It depends only on the state,
// so every replica picks the same number.
func (b *book) newVirtualAccountNumber() string {
	n := ledger.Scramble(b.virtualAccounts.NextSeq()) % 9_000_000_000
	for {
		number := strconv.FormatUint(1_000_000_000+n, 10)
		if _, taken := b.vaByNumber[number]; !taken {
			return number
		}
		n = (n + 1) % 9_000_000_000
	}
}

func (c *UpdateVirtualAccount) Apply(s *ledger.State) ledger.Result {
	return ledger.Change(feature.Of(s).virtualAccounts, c.OrgID, c.ID, "Virtual account", func(v *VirtualAccount) (bool, *ledger.Error) {
		if c.Status != VirtualAccountActive && c.Status != VirtualAccountPaused {
			return false, ledger.FieldInvalid("status", "must be active or paused")
		}
		if v.Status == c.Status {
			return false, nil
		}
		v.Status = c.Status
		v.UpdatedAt = s.OrgNow(c.OrgID, c.At)
		return true, nil
	})
}

// GetVirtualAccount returns an organization's virtual account by id.
func GetVirtualAccount(r *ledger.Reader, orgID, id string) (VirtualAccount, bool) {
	return ledger.ReadOwned(r, virtualAccountKind, orgID, id)
}

// VirtualAccountFilter selects virtual accounts in a list; zero fields match
// everything.
type VirtualAccountFilter struct {
	Status            VirtualAccountStatus
	Currency          string
	ExternalReference string
}

// ListVirtualAccounts lists an organization's virtual accounts newest
// first.
func ListVirtualAccounts(r *ledger.Reader, orgID string, f VirtualAccountFilter, before ledger.Cursor, limit int) ledger.Page[VirtualAccount] {
	return ledger.ReadList(r, virtualAccountKind, orgID, before, limit, func(v *VirtualAccount) bool {
		return (f.Status == 0 || v.Status == f.Status) &&
			(f.Currency == "" || v.Currency == f.Currency) &&
			(f.ExternalReference == "" || v.ExternalReference == f.ExternalReference)
	})
}
