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
