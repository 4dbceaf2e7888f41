package ledger

// Crypto addresses: a deposit address for one asset on one chain. Every
// transfer to it is a deposit (deposit.go): a collection of type crypto that
// credits the organization's balance in the asset. An organization has at
// most one address per currency and chain; asking again returns it.

// Command kinds of crypto addresses (range 20–49, see extend.go).
const (
	KindCreateCryptoAddress Kind = 27
	KindUpdateCryptoAddress Kind = 28
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

func (*CreateCryptoAddress) Kind() Kind { return KindCreateCryptoAddress }
func (*UpdateCryptoAddress) Kind() Kind { return KindUpdateCryptoAddress }

func (c *CreateCryptoAddress) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.Currency)
	f.Str(&c.Chain)
	f.Str(&c.Address)
	f.Str(&c.Tag)
	f.Str(&c.ExternalReference)
	f.Str(&c.Metadata)
}

func (c *CreateCryptoAddress) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *UpdateCryptoAddress) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.Metadata)
}

func (c *UpdateCryptoAddress) Encode(e *Encoder) { c.fields(e.Codec()) }

func init() {
	registerFields[CreateCryptoAddress](KindCreateCryptoAddress)
	registerFields[UpdateCryptoAddress](KindUpdateCryptoAddress)
}

func encodeCryptoAddress(e *Encoder, a *CryptoAddress) {
	e.Str(a.ID)
	e.Str(a.OrgID)
	e.Str(a.Currency)
	e.Str(a.Chain)
	e.Str(a.Address)
	e.Str(a.Tag)
	e.Str(a.ExternalReference)
	e.Str(a.Metadata)
	e.Varint(a.CreatedAt)
	e.Varint(a.UpdatedAt)
}

func decodeCryptoAddress(d *Decoder) CryptoAddress {
	return CryptoAddress{
		ID: d.Str(), OrgID: d.Str(), Currency: d.Str(), Chain: d.Str(), Address: d.Str(), Tag: d.Str(),
		ExternalReference: d.Str(), Metadata: d.Str(), CreatedAt: d.Varint(), UpdatedAt: d.Varint(),
	}
}

// addressPairKey is an organization's (currency, chain) pair.
func addressPairKey(org, currency, chain string) orgKey {
	return orgKey{org, currency + "\x00" + chain}
}

// addressLocation is where a deposit lands on chain: the address, its tag
// and the asset. No two addresses share one, so a deposit has one owner.
func addressLocation(a *CryptoAddress) string {
	return a.Chain + "\x00" + a.Address + "\x00" + a.Tag + "\x00" + a.Currency
}

// cryptoAddressKind: crypto addresses stay open for good.
var cryptoAddressKind = &kind[CryptoAddress]{
	tag: tagCryptoAddress, name: "crypto address",
	id:  func(a *CryptoAddress) (string, string) { return a.ID, a.OrgID },
	enc: encodeCryptoAddress, dec: decodeCryptoAddress,
}

func (s *State) indexCryptoAddress(a *CryptoAddress) {
	d := s.deposits
	d.addressByPair[addressPairKey(a.OrgID, a.Currency, a.Chain)] = a.ID
	d.addressByLocation[addressLocation(a)] = a.ID
}

func (c *CreateCryptoAddress) Apply(s *State) Result {
	if err := s.checkNew(c.ID, "addr_", c.OrgID); err != nil {
		return Result{Err: err}
	}
	if cur, ok := LookupCurrency(c.Currency); !ok || !cur.Crypto {
		return Result{Err: FieldInvalid("currency", "is not a crypto currency")}
	}
	if c.Chain == "" {
		return Result{Err: FieldInvalid("chain", "is required")}
	}
	if c.Address == "" {
		return Result{Err: FieldInvalid("chain", "has no address generator")}
	}
	d := s.deposits
	if id, ok := d.addressByPair[addressPairKey(c.OrgID, c.Currency, c.Chain)]; ok {
		a, _ := d.cryptoAddresses.get(id)
		return Result{Replayed: true, CryptoAddress: &a}
	}
	if _, ok := d.cryptoAddresses.get(c.ID); ok {
		return Result{Err: Errorf(CodeConflict, "crypto address %s already exists", c.ID)}
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
	if _, taken := d.addressByLocation[addressLocation(&a)]; taken {
		return Result{Err: Errorf(CodeConflict, "the derived %s address is already in use; nothing was created", c.Chain)}
	}
	d.cryptoAddresses.insert(a)
	s.indexCryptoAddress(&a)
	return Result{CryptoAddress: &a}
}

func (c *UpdateCryptoAddress) Apply(s *State) Result {
	a, ok := s.deposits.cryptoAddresses.owned(c.OrgID, c.ID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "Crypto address not found")}
	}
	if a.Metadata == c.Metadata {
		return Result{CryptoAddress: &a}
	}
	a.Metadata = c.Metadata
	a.UpdatedAt = s.OrgNow(c.OrgID, c.At)
	s.deposits.cryptoAddresses.put(a)
	return Result{CryptoAddress: &a}
}

// CryptoAddress returns an organization's crypto address by id.
func (r *Reader) CryptoAddress(orgID, id string) (CryptoAddress, bool) {
	return readOwned(r, cryptoAddressKind, orgID, id)
}

// CryptoAddressFilter selects crypto addresses in a list; zero fields match
// everything.
type CryptoAddressFilter struct {
	Currency          string
	Chain             string
	ExternalReference string
}

// CryptoAddresses lists an organization's crypto addresses newest first.
func (r *Reader) CryptoAddresses(orgID string, f CryptoAddressFilter, before Cursor, limit int) Page[CryptoAddress] {
	k := cryptoAddressKind
	return readPage(r, k, k.listPrefix(orgID), before, limit, func(a *CryptoAddress) bool {
		return (f.Currency == "" || a.Currency == f.Currency) &&
			(f.Chain == "" || a.Chain == f.Chain) &&
			(f.ExternalReference == "" || a.ExternalReference == f.ExternalReference)
	})
}
