package ledger

import (
	"crypto/sha256"
)

// Final answers by reference.
//
// A create under an externalReference is idempotent: a retry gets the
// resource the first attempt made. Its refusals must be as final as its
// acceptances. A client whose first attempt broke in transit retries; if
// the retry is refused (insufficient_funds) while the first attempt is
// still on its way — held by a frozen node, or relayed late by a follower —
// the first attempt must not then succeed, or the client, told "refused",
// pays again under a new reference: a double payment. So Decided, which
// wraps such a create, records every refusal Apply decides from the
// state (not from the request alone) under the reference, and answers any
// later attempt under it from that record: the same request gets the same
// refusal again, replayed; a different one is a duplicate. A refused
// reference is never used again, as a created one is not.
//
// Decided also carries the request attempt that proposed the create (the
// id the first node gave the request, kept when a node relays it or
// re-sends it to a new leader), recorded on the resource it makes. A replay
// by the same attempt is that request's own creation, relayed twice, and is
// answered as a creation: a request sent once is answered 201, never 200.
//
// Refusals are history: a record closed from the start, found by its
// reference through the lookup filter, so a new reference costs no read.

// KindDecided wraps a create whose answer is final for its reference.
// Kinds 110–119 belong to final answers.
const KindDecided Kind = 110

// Decided applies Op, a create under an external reference, and makes its
// answer final for the reference (see above). Op is a CreatePayout, a
// key's spend charge wrapping a debit (a Wrapper of kind KindSpendCharged),
// or a feature's DecidedOp under a reference (RegisterDecided: a
// cross-currency payout, an order, an execution of a quote).
type Decided struct {
	Attempt string // the request attempt that proposed it; "" none
	Op      Command
}

func (*Decided) Kind() Kind { return KindDecided }

func (c *Decided) Encode(e *Encoder) {
	e.Str(c.Attempt)
	e.U8(uint8(c.Op.Kind()))
	c.Op.Encode(e)
}

func decodeDecided(d *Decoder) Command {
	c := &Decided{Attempt: d.Str()}
	if len(d.Rest()) == 0 || !decidable(Kind(d.Rest()[0])) {
		d.Fail(Errorf(CodeValidation, "a decided command wraps a create under a reference"))
		return c
	}
	op, err := decodeCommand(d)
	if err != nil {
		d.Fail(err)
		return c
	}
	if _, _, ref, _, _ := decidedOf(op); ref == "" {
		d.Fail(Errorf(CodeValidation, "a decided command wraps a create under a reference"))
		return c
	}
	c.Op = op
	return c
}

// decidable reports whether a command of kind k may be Decided's: a create
// under a reference (a charged debit's kind is checked by its charge).
func decidable(k Kind) bool {
	switch k {
	case KindCreatePayout, KindCreatePayoutRouted, KindCreateCollection, KindSpendCharged:
		return true
	}
	return decidedKinds[k] != nil
}

func init() { RegisterCommand(KindDecided, decodeDecided) }

// Refusal is a create refused under an external reference: what was asked
// (its digest) and the answer, kept so that every later attempt under the
// reference gets it.
type Refusal struct {
	ID        string // the id the resource would have had
	OrgID     string
	Resource  string // RefusedPayout, a feature's (orders.Refused, conversions.Refused)
	Reference string
	Request   string // sha256 of the request as the ledger compares it (requestDigest)
	Err       Error
	Attempt   string
	CreatedAt int64 // on the organization's clock
}

var refusalKind = newKind(tagRefusal, "refusal", func(r *Refusal) (string, string) { return r.ID, r.OrgID },
	finalWhileOpen(ClosedAtOnce[Refusal]),
	indexedBy(lookup[Refusal]{name: indexReference, key: func(r *Refusal) string { return refusalKey(r.OrgID, r.Resource, r.Reference) }}),
	unlisted)

// refusalKey is a refused reference as a lookup key: references are scoped
// by organization and by the kind of resource they name.
func refusalKey(org, resource, ref string) string {
	if ref == "" {
		return ""
	}
	return org + "\x00" + resource + "\x00" + ref
}

// The resources whose references Decided keeps refusals of: each has its
// own references. A feature names its own (DecidedResource).
const (
	RefusedPayout     = "payout"
	RefusedCollection = "collection"
)

func (c *Decided) Apply(s *State) Result {
	org, resource, ref, request, id := decidedOf(c.Op)
	if ref == "" {
		return Result{Err: Errorf(CodeValidation, "a decided command wraps a create under a reference")}
	}
	if prev, ok := s.refusals.find(indexReference, refusalKey(org, resource, ref)); ok && !s.referenced(resource, org, ref) {
		return prev.Replay(c.Op)
	}
	res := s.Apply(c.Op)
	switch {
	case res.Err != nil && !res.Replayed && finalRefusal(res.Err.Code):
		s.refusals.insert(Refusal{
			ID: id, OrgID: org, Resource: resource, Reference: ref, Request: request,
			Err: *res.Err, Attempt: c.Attempt, CreatedAt: s.OrgNow(org, opAt(c.Op)),
		})
	case res.Err == nil && !res.Replayed && c.Attempt != "":
		s.stampAttempt(resource, &res, c.Attempt)
	case res.Err == nil && res.Replayed && c.Attempt != "" && attemptOf(resource, &res) == c.Attempt:
		// The same request, relayed again after its first relay committed.
		res.Replayed = false
	}
	return res
}

// stampAttempt records on the resource a create just made the attempt that
// made it.
func (s *State) stampAttempt(resource string, res *Result, attempt string) {
	switch {
	case resource == RefusedPayout && res.Payout != nil:
		p := *res.Payout
		p.Attempt = attempt
		s.payouts.put(p)
		res.Payout = &p
	case resource == RefusedCollection && res.Collection != nil:
		c := *res.Collection
		c.Attempt = attempt
		s.collections.put(c)
		res.Collection = &c
	default:
		if r := decidedResource(resource); r != nil {
			r.Stamp(s, res, attempt)
		}
	}
}

// attemptOf is the attempt recorded on the resource a result names.
func attemptOf(resource string, res *Result) string {
	switch {
	case resource == RefusedPayout && res.Payout != nil:
		return res.Payout.Attempt
	case resource == RefusedCollection && res.Collection != nil:
		return res.Collection.Attempt
	default:
		if r := decidedResource(resource); r != nil {
			return r.Attempt(res)
		}
	}
	return ""
}

// referenced reports whether org's reference names a resource: one made by
// a create that no Decided wrapped (the log before Decided), which then
// answers for its reference itself.
func (s *State) referenced(resource, org, ref string) bool {
	var ok bool
	switch resource {
	case RefusedPayout:
		_, ok = s.payouts.byReference(org, ref)
	case RefusedCollection:
		_, ok = s.collections.byReference(org, ref)
	default:
		if r := decidedResource(resource); r != nil {
			ok = r.Referenced(s, org, ref)
		}
	}
	return ok
}

// finalRefusal reports whether a refusal with code was decided from the
// state, and so is recorded: not a malformed request (the same request
// always gets the same answer), not a duplicate (the reference names a
// resource), not a clash of identifiers or a bug.
func finalRefusal(code Code) bool {
	switch code {
	case CodeValidation, CodeDuplicate, CodeConflict, CodeInternal:
		return false
	}
	return true
}

// refusedReference is the answer to a different request under a refused
// reference.
func refusedReference(r Refusal) *Error {
	return &Error{Code: CodeDuplicate,
		Message: "A " + r.Resource + " under this externalReference was refused (" + string(r.Err.Code) +
			"); a reference is used once: send the new request under a new externalReference"}
}

// decidedOf returns what Decided needs of its create: the organization,
// the kind of resource and the reference, the digest of the request as the
// caller made it (a retry is the same request exactly when its digest is
// equal: nothing the leader chose is in it, neither ids nor times nor
// prices) and the id the create draws. ref is "" for a command Decided
// does not take.
func decidedOf(op Command) (org, resource, ref, request, id string) {
	if w, ok := op.(Wrapper); ok {
		op = w.Wrapped()
	}
	var e Encoder
	switch c := op.(type) {
	case *CreatePayout:
		e.U8(0)
		e.Str(c.Spec.Currency)
		c.Spec.fields(e.Codec())
		c.Spec.encodeRouting(&e)
		org, resource, ref, id = c.OrgID, RefusedPayout, c.ExternalReference, c.ID
	case *CreateCollection:
		c.Spec.fields(e.Codec())
		org, resource, ref, id = c.OrgID, RefusedCollection, c.ExternalReference, c.ID
	default:
		d, ok := op.(DecidedOp)
		r := decidedKinds[op.Kind()]
		if !ok || r == nil {
			return "", "", "", "", ""
		}
		org, ref, id, _ = d.Decision(&e)
		resource = r.Resource
	}
	sum := sha256.Sum256(e.Bytes())
	return org, resource, ref, string(sum[:]), id
}

// opAt is the leader's time a decided command carries.
func opAt(op Command) int64 {
	if w, ok := op.(Wrapper); ok {
		op = w.Wrapped()
	}
	switch c := op.(type) {
	case *CreatePayout:
		return c.At
	case *CreateCollection:
		return c.At
	case DecidedOp:
		_, _, _, at := c.Decision(new(Encoder))
		return at
	}
	return 0
}

// Refusal returns the refusal an organization's reference for resource
// (RefusedPayout, …) names, however old.
func (r *Reader) Refusal(orgID, resource, ref string) (Refusal, bool) {
	return readFind(r, refusalKind, indexReference, refusalKey(orgID, resource, ref))
}

// Repeats reports whether op, a create as Decided wraps it, repeats the
// request r refused.
func (r Refusal) Repeats(op Command) bool {
	_, _, _, request, _ := decidedOf(op)
	return request == r.Request
}

// Replay is the answer to op when it repeats the request r refused (the
// same refusal, replayed), and to any other request under r's reference
// (a duplicate).
func (r Refusal) Replay(op Command) Result {
	if r.Repeats(op) {
		e := r.Err
		return Result{Err: &e, Replayed: true}
	}
	return Result{Err: refusedReference(r)}
}

func (r *Refusal) fields(f *Codec) {
	f.Str(&r.ID, &r.OrgID, &r.Resource, &r.Reference, &r.Request)
	r.Err.fields(f)
	f.Str(&r.Attempt)
	f.Varint(&r.CreatedAt)
}

// fields are an error as a refusal keeps it: its code, message and the
// details of the codes a create refuses with.
func (er *Error) fields(f *Codec) {
	code := string(er.Code)
	f.Str(&code)
	er.Code = Code(code)
	f.Str(&er.Message)
	FieldMinor(f, &er.Available, &er.Required)
	f.Str(&er.Currency)
	capped := er.SpendCap != nil
	f.Bool(&capped)
	if !capped {
		return
	}
	if er.SpendCap == nil {
		er.SpendCap = new(SpendCapDetails)
	}
	sc := er.SpendCap
	f.Str(&sc.Cap)
	FieldMinor(f, &sc.Limit, &sc.Used, &sc.Attempted)
}
