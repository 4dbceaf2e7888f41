package ledger

// Treasury: each provider instance has its float in the ledger, one system
// account per instance and currency ("SYS:provider_float:USDC:evm_main"),
// the other side of every movement through the instance:
//
//   - a payout the instance carried completes: its principal leaves the
//     payouts clearing account for the float (instead of the rail
//     settlement account of the sandbox);
//   - a collection it carried completes, or a deposit it reported is
//     credited: the float pays the balance (instead of the collections
//     source);
//   - the operator moves money to or from the provider (a hot wallet
//     topped up, a disbursement account funded): FundProviderFloat, against
//     the treasury account of the currency.
//
// Money held at the provider is so the float's total negated: deposits
// and fundings push the float down, payouts push it up. `payments
// reconcile` compares that with what the provider reports (Balancer).

// Account purposes and entry types of the treasury (feature ranges:
// purposes from 30, entry types from 60).
const (
	PurposeProviderFloat AccountPurpose = 30 // an instance's float in one currency
	PurposeTreasury      AccountPurpose = 31 // where fundings of floats come from

	EntryFloatFunding EntryType = 60 // money moved to (or from) a provider's float by the operator
)

// KindFundProviderFloat records a funding of a provider's float.
const KindFundProviderFloat Kind = 127

func init() {
	registerPurpose(PurposeProviderFloat, "provider_float")
	registerPurpose(PurposeTreasury, "treasury")
	registerEntryType(EntryFloatFunding, "float_funding", "treasury")
	registerFields[FundProviderFloat](KindFundProviderFloat)
}

// FloatAccountNumber is the number of a provider instance's float account
// in a currency.
func FloatAccountNumber(provider, currency string) string {
	return systemAccountNumber(PurposeProviderFloat, currency) + ":" + provider
}

// floatAccount returns the float account of provider in currency,
// creating it on first use. Accounts stay in memory, so finding it costs
// a map lookup.
func (s *State) floatAccount(provider, currency string, at int64) string {
	number := FloatAccountNumber(provider, currency)
	if _, ok := s.accounts.get(number); ok {
		return number
	}
	a := Account{Number: number, Currency: currency, Purpose: PurposeProviderFloat, CreatedAt: at}
	s.accounts.insert(a)
	return number
}

// railAccount is where a payout's principal goes when it completes: the
// float of the provider instance that carried it, or the sandbox's rail
// settlement account.
func (s *State) railAccount(id, currency string, at int64) string {
	if p := s.instructionProvider(id); p != "" {
		return s.floatAccount(p, currency, at)
	}
	return s.systemAccount(PurposeRailSettlement, currency, at)
}

// collectionSource is what pays a collection when it completes: the float
// of the provider instance that carried it, or the sandbox's collections
// source.
func (s *State) collectionSource(id, currency string, at int64) string {
	if p := s.instructionProvider(id); p != "" {
		return s.floatAccount(p, currency, at)
	}
	return s.systemAccount(PurposeCollectionsSource, currency, at)
}

// instructionProvider is the provider instance of id's open instruction,
// "" when it has none (the sandbox's payouts and collections).
func (s *State) instructionProvider(id string) string {
	if !s.instructions.taken(id) {
		return ""
	}
	in, _ := s.instructions.get(id)
	return in.Provider
}

// FundProviderFloat records money the operator moved to a provider
// instance (Amount positive: a hot wallet topped up) or from it
// (negative), so that the float matches what the provider holds. It is
// idempotent by Reference: the same funding again is a replay, another
// under the same reference a conflict.
type FundProviderFloat struct {
	At        int64
	ID        string // ffd_…, drawn by the leader
	Provider  string
	Currency  string
	Amount    Minor
	Reference string
}

func (*FundProviderFloat) Kind() Kind { return KindFundProviderFloat }

func (c *FundProviderFloat) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.Provider)
	f.Str(&c.Currency)
	FieldMinor(f, &c.Amount)
	f.Str(&c.Reference)
}

func (c *FundProviderFloat) Encode(e *Encoder) { c.fields(e.Codec()) }

// FloatFunding is a recorded FundProviderFloat.
type FloatFunding struct {
	ID        string
	Provider  string
	Currency  string
	Amount    Minor
	Reference string
	At        int64
}

var floatFundingKind = &kind[FloatFunding]{
	tag: tagFloatFunding, name: "float funding",
	id: func(f *FloatFunding) (string, string) { return f.ID, "" },
	enc: func(e *Encoder, f *FloatFunding) {
		e.Str(f.ID)
		e.Str(f.Provider)
		e.Str(f.Currency)
		e.Varint(int64(f.Amount))
		e.Str(f.Reference)
		e.Varint(f.At)
	},
	dec: func(d *Decoder) FloatFunding {
		return FloatFunding{ID: d.Str(), Provider: d.Str(), Currency: d.Str(), Amount: Minor(d.Varint()), Reference: d.Str(), At: d.Varint()}
	},
	open: func(*FloatFunding) bool { return false },
	lookups: []lookup[FloatFunding]{
		{name: indexReference, key: func(f *FloatFunding) string { return refKey("", f.Reference) }},
	},
	unlisted: true,
}

func (c *FundProviderFloat) Apply(s *State) Result {
	if err := CheckID(c.ID, "ffd_"); err != nil {
		return Result{Err: err}
	}
	if c.Provider == "" || len(c.Provider) > instructionFieldMax {
		return Result{Err: FieldInvalid("provider", "is required")}
	}
	if _, ok := LookupCurrency(c.Currency); !ok {
		return Result{Err: FieldInvalid("currency", "is not a supported currency")}
	}
	if c.Amount == 0 || c.Amount > AmountMax || c.Amount < -AmountMax {
		return Result{Err: FieldInvalid("amount", "is out of range")}
	}
	if c.Reference == "" {
		return Result{Err: FieldInvalid("reference", "is required")}
	}
	if prev, ok := s.floatFundings.byReference("", c.Reference); ok {
		if prev.Provider == c.Provider && prev.Currency == c.Currency && prev.Amount == c.Amount {
			return Result{Replayed: true, FloatFunding: &prev}
		}
		return Result{Err: Errorf(CodeConflict, "reference %s names another funding", c.Reference)}
	}
	if s.floatFundings.taken(c.ID) {
		return Result{Err: Errorf(CodeConflict, "funding %s already exists", c.ID)}
	}
	postings := []Posting{
		{s.floatAccount(c.Provider, c.Currency, c.At), EntryFloatFunding, -c.Amount},
		{s.systemAccount(PurposeTreasury, c.Currency, c.At), EntryFloatFunding, c.Amount},
	}
	if _, err := s.book(c.At, c.ID, c.Reference, postings); err != nil {
		return Result{Err: err}
	}
	f := FloatFunding{ID: c.ID, Provider: c.Provider, Currency: c.Currency, Amount: c.Amount, Reference: c.Reference, At: c.At}
	s.floatFundings.insert(f)
	return Result{FloatFunding: &f}
}

// ProviderFloat returns a provider instance's float account in a
// currency; ok is false while nothing moved through it.
func (r *Reader) ProviderFloat(provider, currency string) (Account, bool) {
	return readRecord(r, accountKind, FloatAccountNumber(provider, currency))
}
