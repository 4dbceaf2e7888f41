package ledger

// What package conversions (quotes and conversions, ledger/conversions)
// needs of the kernel, each a thin wrapper over its internals: it books
// journal postings against merchant and system accounts, announces the
// credited balance, expires quotes through the kernel's deadlines, finds a
// conversion by its reference, reads and writes the fields its layouts
// append, and takes part in Decided's final answers by reference.

// LookupCurrencyPair returns the two currencies of a conversion, or the
// validation error naming the side (from.currency, to.currency) that is
// not supported.
func LookupCurrencyPair(from, to string) (Currency, Currency, *Error) {
	return lookupCurrencyPair(from, to)
}

// ValidRate reports whether r is a rate the ledger records: a positive
// decimal without sign or exponent (quotes and cross-currency payouts).
func ValidRate(r string) bool { return validRate(r) }

// ReadByReference returns the record of kind k an organization's
// reference names, however old.
func ReadByReference[V any](r *Reader, k RecordKind[V], org, ref string) (V, bool) {
	return readByReference(r, k.k, org, ref)
}

// InMemory is how many records of the store memory holds: once a batch
// is committed, the open ones.
func (st Store[V]) InMemory() int { return len(st.t.rows) }

// Expirer is a feature's deadline-driven transitions (clock.go's
// expirer): Each calls add for every open deadline at Load and after a
// clock jump, Deadline is a record's deadline now on its organization's
// clock (ok false once met), and Expire makes the transition of a record
// whose deadline passed at leader time at.
type Expirer struct {
	Each     func(s *State, add func(org string, due int64, id string))
	Deadline func(s *State, id string) (org string, due int64, ok bool)
	Expire   func(s *State, id string, at int64)
}

// AddExpirer adds a feature's expirer and returns its number, which the
// feature passes to AddDeadline. It is called from the function a feature
// gives AddFeature.
func (s *State) AddExpirer(x Expirer) uint8 {
	return s.registerExpirer(x.expirer())
}

// AddDeadline records that the record id of expirer x falls due when its
// organization's clock reads due.
func (s *State) AddDeadline(x uint8, org string, due int64, id string) {
	s.addDeadline(x, org, due, id)
}

// More reports, while decoding, whether bytes remain: a record read where
// an older layout ended has none of the fields appended since (doc.go,
// "Appended fields").
func (f *Codec) More() bool { return f.dec != nil && f.dec.more() }

// AppendedRef reads the reference a command kind "with the reference"
// appends to its base kind's fields (KindExecuteQuoteRef); it is never
// empty. Writing, it writes a reference that is not empty.
func (f *Codec) AppendedRef(p *string) {
	if f.enc != nil {
		if *p != "" {
			f.enc.str(*p)
		}
		return
	}
	*p = f.dec.appendedRef()
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
