package deposits

import "payments/ledger"

// Crypto addresses: a deposit address for one asset on one chain. Every
// transfer to it is a deposit (deposits.go): a collection of type crypto
// that credits the organization's balance in the asset. An organization has
// at most one address per currency and chain; asking again returns it.

// Command kinds of crypto addresses (range 20–49, see ledger/extend.go).
const (
	KindCreateCryptoAddress ledger.Kind = 27
	KindUpdateCryptoAddress ledger.Kind = 28
)

// CryptoAddress is a deposit address.
type CryptoAddress struct {
	ID                string
	OrgID             string
	Currency          string // the asset, e.g. USDC
	Chain             string // the catalogue's chain id, e.g. solana
	Address           string
	Tag               string // memo the sender must include (Stellar); "" elsewhere
	ExternalReference string
	Metadata          string // canonical JSON object, or ""
	CreatedAt         int64
	UpdatedAt         int64
}

// CreateCryptoAddress provisions a deposit address. The address is derived
// by the caller (package rails) and carried in the command. An organization
// that already has an address for the currency and chain gets that one back,
// unchanged (Replayed).
type CreateCryptoAddress struct {
	At                int64
	ID                string
	OrgID             string
	Currency          string
	Chain             string
	Address           string
	Tag               string
	ExternalReference string
	Metadata          string
}

// UpdateCryptoAddress replaces an address's metadata, the only part that
// can change.
type UpdateCryptoAddress struct {
	At       int64
	ID       string
	OrgID    string
	Metadata string
}

func (*CreateCryptoAddress) Kind() ledger.Kind { return KindCreateCryptoAddress }
func (*UpdateCryptoAddress) Kind() ledger.Kind { return KindUpdateCryptoAddress }

// CryptoAddressOf returns the crypto address a command made or changed, or
// nil.
func CryptoAddressOf(res ledger.Result) *CryptoAddress { return ledger.ValueOf[CryptoAddress](res) }

// Fields is the command's codec, in its frozen order.
func (c *CreateCryptoAddress) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.Currency, &c.Chain,
		&c.Address, &c.Tag, &c.ExternalReference, &c.Metadata)
}

func (c *CreateCryptoAddress) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

// Fields is the command's codec, in its frozen order.
func (c *UpdateCryptoAddress) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.Metadata)
}

func (c *UpdateCryptoAddress) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (a *CryptoAddress) fields(f *ledger.Codec) {
	f.Str(&a.ID, &a.OrgID, &a.Currency, &a.Chain,
		&a.Address, &a.Tag, &a.ExternalReference, &a.Metadata)
	f.Varint(&a.CreatedAt, &a.UpdatedAt)
}

// cryptoAddressKind: crypto addresses stay open for good, every one in
// memory.
var cryptoAddressKind = ledger.NewRecordKind(ledger.RecordSpec[CryptoAddress]{
	Tag: ledger.TagCryptoAddress, Name: "crypto address",
	ID:     func(a *CryptoAddress) (string, string) { return a.ID, a.OrgID },
	Fields: (*CryptoAddress).fields,
})

// addressPairKey is an organization's (currency, chain) pair.
func addressPairKey(org, currency, chain string) orgKey {
	return orgKey{org, currency + "\x00" + chain}
}

// addressLocation is where a deposit lands on chain: the address, its tag
// and the asset. No two addresses share one, so a deposit has one owner.
func addressLocation(chain, address, tag, currency string) string {
	return chain + "\x00" + address + "\x00" + tag + "\x00" + currency
}

func (b *book) indexCryptoAddress(a *CryptoAddress) {
	b.addressByPair[addressPairKey(a.OrgID, a.Currency, a.Chain)] = a.ID
	b.addressByLocation[addressLocation(a.Chain, a.Address, a.Tag, a.Currency)] = a.ID
}

func (c *CreateCryptoAddress) Apply(s *ledger.State) ledger.Result {
	if err := ledger.CheckID(c.ID, "addr_"); err != nil {
		return ledger.Result{Err: err}
	}
	if err := s.CheckOrg(c.OrgID); err != nil {
		return ledger.Result{Err: err}
	}
	if cur, ok := ledger.LookupCurrency(c.Currency); !ok || !cur.Crypto {
		return ledger.Result{Err: ledger.FieldInvalid("currency", "is not a crypto currency")}
	}
	if c.Chain == "" {
		return ledger.Result{Err: ledger.FieldInvalid("chain", "is required")}
	}
	if c.Address == "" {
		return ledger.Result{Err: ledger.FieldInvalid("chain", "has no address generator")}
	}
	b := feature.Of(s)
	if id, ok := b.addressByPair[addressPairKey(c.OrgID, c.Currency, c.Chain)]; ok {
		a, _ := b.cryptoAddresses.Get(id)
		return ledger.Result{Replayed: true, Value: &a}
	}
	if _, ok := b.cryptoAddresses.Get(c.ID); ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "crypto address %s already exists", c.ID)}
	}
	a := CryptoAddress{
		ID:                c.ID,
		OrgID:             c.OrgID,
		Currency:          c.Currency,
		Chain:             c.Chain,
		Address:           c.Address,
		Tag:               c.Tag,
		ExternalReference: c.ExternalReference,
		Metadata:          c.Metadata,
		CreatedAt:         s.OrgNow(c.OrgID, c.At),
		UpdatedAt:         s.OrgNow(c.OrgID, c.At),
	}
	if _, taken := b.addressByLocation[addressLocation(a.Chain, a.Address, a.Tag, a.Currency)]; taken {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "the derived %s address is already in use; nothing was created", c.Chain)}
	}
	b.cryptoAddresses.Insert(a)
	b.indexCryptoAddress(&a)
	return ledger.Result{Value: &a}
}

func (c *UpdateCryptoAddress) Apply(s *ledger.State) ledger.Result {
	return ledger.Change(feature.Of(s).cryptoAddresses, c.OrgID, c.ID, "Crypto address", func(a *CryptoAddress) (bool, *ledger.Error) {
		if a.Metadata == c.Metadata {
			return false, nil
		}
		a.Metadata = c.Metadata
		a.UpdatedAt = s.OrgNow(c.OrgID, c.At)
		return true, nil
	})
}

// GetCryptoAddress returns an organization's crypto address by id.
func GetCryptoAddress(r *ledger.Reader, orgID, id string) (CryptoAddress, bool) {
	return ledger.ReadOwned(r, cryptoAddressKind, orgID, id)
}

// CryptoAddressFilter selects crypto addresses in a list; zero fields match
// everything.
type CryptoAddressFilter struct {
	Currency          string
	Chain             string
	ExternalReference string
}

// ListCryptoAddresses lists an organization's crypto addresses newest
// first.
func ListCryptoAddresses(r *ledger.Reader, orgID string, f CryptoAddressFilter, before ledger.Cursor, limit int) ledger.Page[CryptoAddress] {
	return ledger.ReadList(r, cryptoAddressKind, orgID, before, limit, func(a *CryptoAddress) bool {
		return (f.Currency == "" || a.Currency == f.Currency) &&
			(f.Chain == "" || a.Chain == f.Chain) &&
			(f.ExternalReference == "" || a.ExternalReference == f.ExternalReference)
	})
}
