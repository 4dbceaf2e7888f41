package instructions

import "payments/ledger"

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
//     topped up, a disbursement account funded): FundFloat, against the
//     treasury account of the currency.
//
// Money held at the provider is so the float's total negated: deposits
// and fundings push the float down, payouts push it up. `payments
// reconcile` compares that with what the provider reports (Balancer).

// Account purposes and entry types of the treasury (feature ranges:
// purposes from 30, entry types from 60).
const (
	PurposeProviderFloat ledger.AccountPurpose = 30 // an instance's float in one currency
	PurposeTreasury      ledger.AccountPurpose = 31 // where fundings of floats come from

	EntryFloatFunding ledger.EntryType = 60 // money moved to (or from) a provider's float by the operator
)

// KindFundFloat records a funding of a provider's float.
const KindFundFloat ledger.Kind = 127

func init() {
	ledger.RegisterPurpose(PurposeProviderFloat, "provider_float")
	ledger.RegisterPurpose(PurposeTreasury, "treasury")
	ledger.RegisterEntryType(EntryFloatFunding, "float_funding", "treasury")
}

// FloatAccountNumber is the number of a provider instance's float account
// in a currency.
func FloatAccountNumber(provider, currency string) string {
	return ledger.SystemAccountNumber(PurposeProviderFloat, currency) + ":" + provider
}

// floatAccount returns the float account of provider in currency,
// creating it on first use (ledger.SetFloatAccount). Accounts stay in
// memory, so finding it costs a map lookup.
func floatAccount(s *ledger.State, provider, currency string, at int64) string {
	return s.OpenAccount(FloatAccountNumber(provider, currency), currency, PurposeProviderFloat, at)
}

// movesThrough is the float of the provider instance that carried the
// payout or collection id, when it has an open instruction
// (ledger.SetMovesThrough); the sandbox's payouts and collections have
// none.
func movesThrough(s *ledger.State, id, currency string, at int64) (string, bool) {
	st := feature.Of(s).instructions
	if !st.Taken(id) {
		return "", false
	}
	in, _ := st.Get(id)
	return floatAccount(s, in.Provider, currency, at), true
}

// FundFloat records money the operator moved to a provider instance
// (Amount positive: a hot wallet topped up) or from it (negative), so that
// the float matches what the provider holds. It is idempotent by
// Reference: the same funding again is a replay, another under the same
// reference a conflict.
type FundFloat struct {
	At        int64
	ID        string // ffd_…, drawn by the leader
	Provider  string
	Currency  string
	Amount    ledger.Minor
	Reference string
}

func (*FundFloat) Kind() ledger.Kind { return KindFundFloat }

func (c *FundFloat) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.Provider, &c.Currency)
	ledger.FieldMinor(f, &c.Amount)
	f.Str(&c.Reference)
}

func (c *FundFloat) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

// FloatFunding is a recorded FundFloat.
type FloatFunding struct {
	ID        string
	Provider  string
	Currency  string
	Amount    ledger.Minor
	Reference string
	At        int64
}

// FundingOf returns the funding a FundFloat left, or nil.
func FundingOf(res ledger.Result) *FloatFunding { return ledger.ValueOf[FloatFunding](res) }

func (f *FloatFunding) fields(c *ledger.Codec) {
	c.Str(&f.ID, &f.Provider, &f.Currency)
	ledger.FieldMinor(c, &f.Amount)
	c.Str(&f.Reference)
	c.Varint(&f.At)
}

// floatFundingKind: fundings are history from the start, in the state
// store only, found again by their reference.
var floatFundingKind = ledger.NewUnlistedRecordKind(ledger.ReceiptSpec(ledger.RecordSpec[FloatFunding]{
	Tag: ledger.TagFloatFunding, Name: "float funding",
	ID:     func(f *FloatFunding) (string, string) { return f.ID, "" },
	Fields: (*FloatFunding).fields,
}, func(f *FloatFunding) (string, string) { return "", f.Reference }))

func (c *FundFloat) Apply(s *ledger.State) ledger.Result {
	if err := ledger.CheckID(c.ID, "ffd_"); err != nil {
		return ledger.Result{Err: err}
	}
	if c.Provider == "" || len(c.Provider) > fieldMax {
		return ledger.Result{Err: ledger.FieldInvalid("provider", "is required")}
	}
	if _, ok := ledger.LookupCurrency(c.Currency); !ok {
		return ledger.Result{Err: ledger.FieldInvalid("currency", "is not a supported currency")}
	}
	if c.Amount == 0 || c.Amount > ledger.AmountMax || c.Amount < -ledger.AmountMax {
		return ledger.Result{Err: ledger.FieldInvalid("amount", "is out of range")}
	}
	if c.Reference == "" {
		return ledger.Result{Err: ledger.FieldInvalid("reference", "is required")}
	}
	fundings := feature.Of(s).fundings
	if prev, ok := fundings.Find(ledger.IndexReference, ledger.RefKey("", c.Reference)); ok {
		if prev.Provider == c.Provider && prev.Currency == c.Currency && prev.Amount == c.Amount {
			return ledger.Result{Replayed: true, Value: &prev}
		}
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "reference %s names another funding", c.Reference)}
	}
	if fundings.Taken(c.ID) {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "funding %s already exists", c.ID)}
	}
	postings := []ledger.Posting{
		{Account: floatAccount(s, c.Provider, c.Currency, c.At), Type: EntryFloatFunding, Amount: -c.Amount},
		{Account: s.SystemAccount(PurposeTreasury, c.Currency, c.At), Type: EntryFloatFunding, Amount: c.Amount},
	}
	if _, err := s.Book(c.At, c.ID, c.Reference, postings); err != nil {
		return ledger.Result{Err: err}
	}
	f := FloatFunding{ID: c.ID, Provider: c.Provider, Currency: c.Currency, Amount: c.Amount, Reference: c.Reference, At: c.At}
	fundings.Insert(f)
	return ledger.Result{Value: &f}
}

// Float returns a provider instance's float account in a currency; ok is
// false while nothing moved through it.
func Float(r *ledger.Reader, provider, currency string) (ledger.Account, bool) {
	return ledger.ReadAccount(r, FloatAccountNumber(provider, currency))
}
