package ledger

// Payouts to a named bank. A bank payout may name the receiving bank by
// its routing number (PayoutSpec.RoutingNumber: the bank code the method
// lists among its routingNumber field's options). The field came after
// the payout's frozen codecs, so it is appended (doc.go, "Appended
// fields"): a payout without one encodes byte for byte as before, and one
// with one is
//
//	command kind 13   CreatePayout with str(routingNumber) appended
//	                  (instead of 5)
//	command kind 14   fxpayouts.Create with str(routingNumber) appended
//	                  (instead of 12)
//	subject kind 13   a payout event's subject, str(routingNumber) after
//	                  the payout (instead of 1)
//	subject kind 14   a cross-currency payout's, after its FX details
//	                  (instead of 11)
//	payout ('p')      str(attempt), then str(routingNumber)
//
// and a refused request's digest (decided.go) has it after the spec.

// Command kinds of payouts that name their bank.
const (
	KindCreatePayoutRouted   Kind = 13
	KindCreateFXPayoutRouted Kind = 14
)

// Subject kinds of the events of payouts that name their bank. Frozen.
const (
	SubjectPayoutRouted   SubjectKind = 13
	SubjectFXPayoutRouted SubjectKind = 14
)

func init() {
	RegisterCommand(KindCreatePayoutRouted, func(d *Decoder) Command {
		c := decodeFields[CreatePayout](d)
		c.Spec.RoutingNumber = readRoutingNumber(d)
		return c
	})
	registerPayoutSubject(SubjectPayoutRouted, withRouting)
	registerPayoutSubject(SubjectFXPayoutRouted, withFX|withRouting)
}

// routingField reads or writes the routing number a routed kind appends.
func (s *PayoutSpec) routingField(f *Codec) {
	if d := f.Decoder(); d != nil {
		s.RoutingNumber = readRoutingNumber(d)
		return
	}
	f.Encoder().Str(s.RoutingNumber)
}

// readRoutingNumber reads an appended routing number: one is there exactly
// when the kind says so, so an empty one is a malformed record.
func readRoutingNumber(d *Decoder) string {
	s := d.Str()
	if s == "" && d.Err() == nil {
		d.Fail(Errorf(CodeValidation, "a routed payout names no routing number"))
	}
	return s
}

// routingNumberMax bounds a routing number, in bytes.
const routingNumberMax = 64

func checkRoutingNumber(spec *PayoutSpec) *Error {
	if len(spec.RoutingNumber) > routingNumberMax {
		return FieldInvalid("to.routingNumber", "is too long")
	}
	return nil
}

// encodeRouting appends the routing number to a request's digest, when
// there is one: the digests of requests without one are what they were.
func (s *PayoutSpec) encodeRouting(e *Encoder) {
	if s.RoutingNumber != "" {
		e.Str(s.RoutingNumber)
	}
}
