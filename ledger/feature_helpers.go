package ledger

// Helpers that features' commands and readers share: the outcome a
// command left in Result.Value, and the record a command names by id.

// ValueOf returns the *V a feature's command left in Result.Value, or nil
// when it left none or another type: what each feature's XOf reader
// answers.
func ValueOf[V any](res Result) *V {
	v, _ := res.Value.(*V)
	return v
}

// ValueIn returns the *V a feature's command left in Result.Value, or the
// one in the *W it left there (in picks it out), or nil: what an XOf
// reader answers where a command leaves either the record or an outcome
// that holds it.
func ValueIn[V, W any](res Result, in func(*W) *V) *V {
	switch v := res.Value.(type) {
	case *V:
		return v
	case *W:
		return in(v)
	}
	return nil
}

// Found returns the record with id if it belongs to org (Owned), or the
// not_found refusal "<what> not found": another organization's record is
// as unknown as a made-up one.
func (st Store[V]) Found(org, id, what string) (V, *Error) {
	v, ok := st.t.owned(org, id)
	if !ok {
		return v, Errorf(CodeNotFound, "%s not found", what)
	}
	return v, nil
}

// LookupCrossPair is LookupCurrencyPair for a create that turns fromAmount
// of one currency into toAmount of another (a quote, a cross-currency
// payout): the currencies must differ, else the refusal is same, and each
// amount must be positive and at most AmountMax.
func LookupCrossPair(fromCurrency, toCurrency string, fromAmount, toAmount Minor, same *Error) (Currency, Currency, *Error) {
	from, to, err := lookupCurrencyPair(fromCurrency, toCurrency)
	if err != nil {
		return from, to, err
	}
	switch {
	case from.Code == to.Code:
		return from, to, same
	case fromAmount <= 0 || fromAmount > AmountMax:
		return from, to, FieldInvalid("from.amount", "is out of range")
	case toAmount <= 0 || toAmount > AmountMax:
		return from, to, FieldInvalid("to.amount", "is out of range")
	}
	return from, to, nil
}

// Change applies a command that changes the record with id of org in st,
// found as Found finds it: change edits the record and reports whether it
// changed, or the refusal; a changed record is put. The outcome is the
// record.
func Change[V any](st Store[V], org, id, what string, change func(*V) (bool, *Error)) Result {
	v, err := st.Found(org, id, what)
	if err != nil {
		return Result{Err: err}
	}
	changed, err := change(&v)
	if err != nil {
		return Result{Err: err}
	}
	if changed {
		st.Put(v)
	}
	return Result{Value: &v}
}
