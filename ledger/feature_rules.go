package ledger

// Kernel rules features take part in beyond feature.go's hooks: deadlines
// in the kernel's one heap (Expirer), the holds Check counts
// (AddHoldCount), Decided's final answers by reference for a feature's
// creates (RegisterDecided), and the checks of currencies and rates that
// quotes share with cross-currency payouts.

// LookupCurrencyPair returns the two currencies of a conversion, or the
// validation error naming the side (from.currency, to.currency) that is
// not supported.
func LookupCurrencyPair(from, to string) (Currency, Currency, *Error) {
	return lookupCurrencyPair(from, to)
}

// ValidRate reports whether r is a rate the ledger records: a positive
// decimal without sign or exponent (quotes and cross-currency payouts).
func ValidRate(r string) bool { return validRate(r) }

// AddExpirer adds a feature's expirer and returns its number, which the
// feature passes to AddDeadline. It is called from the function a feature
// gives AddFeature.
func (s *State) AddExpirer(x Expirer) uint8 {
	return s.registerExpirer(x)
}

// AddDeadline records that the record id of expirer x falls due when its
// organization's clock reads due.
func (s *State) AddDeadline(x uint8, org string, due int64, id string) {
	s.addDeadline(x, org, due, id)
}

// DecidedOp is a feature's create that Decided may wrap (decided.go): it
// names its organization, its reference, the id it draws and its leader
// time, and writes to e the request as the ledger compares a retry with
// it (nothing the leader chose).
type DecidedOp interface {
	Command
	Decision(e *Encoder) (org, ref, id string, at int64)
}

// DecidedResource is a feature's kind of resource whose references Decided
// keeps refusals of: Resource is its name in a Refusal (frozen),
// Referenced reports whether an organization's reference names one,
// Attempt is the attempt recorded on the one a result carries ("" for
// none), and Stamp records attempt on the one a create just made.
type DecidedResource struct {
	Resource   string
	Referenced func(s *State, org, ref string) bool
	Attempt    func(res *Result) string
	Stamp      func(s *State, res *Result, attempt string)
}

// decidedKinds are the features' command kinds Decided may wrap, each a
// DecidedOp, with its resource.
var decidedKinds = map[Kind]*DecidedResource{}

// RegisterDecided lets Decided wrap commands of kind k, a DecidedOp's kind
// under a reference, whose resource is r. It is called from an init
// function.
func RegisterDecided(k Kind, r DecidedResource) {
	if _, dup := decidedKinds[k]; dup {
		panic("ledger: decided kind registered twice")
	}
	decidedKinds[k] = &r
}

// decidedResource is the feature's resource named resource, or nil.
func decidedResource(resource string) *DecidedResource {
	for _, r := range decidedKinds {
		if r.Resource == resource {
			return r
		}
	}
	return nil
}

// holdCounts count what a feature holds on accounts, for Check.
var holdCounts []func(r *Reader, hold func(account string, amount Minor))

// AddHoldCount registers count, which calls hold with every amount a
// feature's records hold on an account (an unresolved dispute's), so that
// Check finds every account's Held equal to the sum. It is called from an
// init function.
func AddHoldCount(count func(r *Reader, hold func(account string, amount Minor))) {
	holdCounts = append(holdCounts, count)
}
