package ledger

import "fmt"

// What package instructions (ledger/instructions) needs of the kernel: the
// production rails' instructions to provider instances and the treasury,
// the floats that the money those instances carry moves through. The
// kernel settles payouts and collections; the feature says which account
// they settle against (SetMovesThrough), opens providers' floats for the
// kernel and package deposits (SetFloatAccount, FloatAccount) and closes
// an instruction when its payout or collection ends (AddPayoutMoved,
// AddCollectionSettled: closing one emits nothing).

// InstructionFieldMax bounds a provider instance's name, in instructions
// and in the deposit feeds' provider records alike (package deposits
// checks it, and may not import package instructions).
const InstructionFieldMax = 256

var (
	movesThrough func(s *State, id, currency string, at int64) (string, bool)
	floatAccount func(s *State, provider, currency string, at int64) string
)

// SetMovesThrough sets fn, the one resolver of which account a payout's
// principal goes to, or a collection's credit is paid from, when it
// completes: the float of the provider instance that carried it. ok false
// (or no resolver) leaves the sandbox's rail settlement or collections
// source account, as for every payout and collection no provider carried.
// It is called from an init function.
func SetMovesThrough(fn func(s *State, id, currency string, at int64) (account string, ok bool)) {
	movesThrough = fn
}

// SetFloatAccount sets fn, which returns a provider instance's float in a
// currency, opening it on first use: package instructions keeps the
// floats, package deposits pays a feed's credit from one (FloatAccount).
// It is called from an init function.
func SetFloatAccount(fn func(s *State, provider, currency string, at int64) string) {
	floatAccount = fn
}

// FloatAccount returns a provider instance's float in currency, opening it
// on first use: a deposit feed's credit is paid from it. The feature that
// keeps floats must be linked (SetFloatAccount).
func (s *State) FloatAccount(provider, currency string, at int64) string {
	if floatAccount == nil {
		panic(fmt.Sprintf("ledger: no feature keeps providers' floats (%s): link package instructions", provider))
	}
	return floatAccount(s, provider, currency, at)
}

// railAccount is where a payout's principal goes when it completes: the
// float of the provider instance that carried it, or the sandbox's rail
// settlement account.
func (s *State) railAccount(id, currency string, at int64) string {
	return s.movedThrough(id, currency, at, PurposeRailSettlement)
}

// collectionSource is what pays a collection when it completes: the float
// of the provider instance that carried it, or the sandbox's collections
// source.
func (s *State) collectionSource(id, currency string, at int64) string {
	return s.movedThrough(id, currency, at, PurposeCollectionsSource)
}

// movedThrough asks the resolver (SetMovesThrough) which account the
// payout or collection id moved through; without an answer, it is the
// service's sandbox account of purpose.
func (s *State) movedThrough(id, currency string, at int64, sandbox AccountPurpose) string {
	if movesThrough != nil {
		if a, ok := movesThrough(s, id, currency, at); ok {
			return a
		}
	}
	return s.systemAccount(sandbox, currency, at)
}

// RegisterPurpose adds an account purpose outside the built-in range: a
// provider's float, the treasury. It is called from init functions.
func RegisterPurpose(p AccountPurpose, name string) { registerPurpose(p, name) }

// SystemAccountNumber is the number of the service's account for a
// purpose and currency: a provider's float is numbered after it.
func SystemAccountNumber(p AccountPurpose, currency string) string {
	return systemAccountNumber(p, currency)
}

// OpenAccount returns number, opening it as a system account of purpose p
// in currency on first use: a provider's float, one per instance and
// currency. Accounts stay in memory, so finding it costs a map lookup.
func (s *State) OpenAccount(number, currency string, p AccountPurpose, at int64) string {
	if _, ok := s.accounts.get(number); ok {
		return number
	}
	s.accounts.insert(Account{Number: number, Currency: currency, Purpose: p, CreatedAt: at})
	return number
}

// ReadAccount returns the account with number, of whatever purpose (a
// provider's float), as of the Reader's moment; Reader.Account answers
// only merchant accounts.
func ReadAccount(r *Reader, number string) (Account, bool) {
	return readRecord(r, accountKind, number)
}
