package ledger

// Record codecs: the state store's records and events' subjects. Frozen
// with the state store's format (doc.go): a change of layout is a new
// format version. Each fields method both writes and reads its record
// (encodeByFields, decodeByFields).

func (o *Organization) fields(f *fieldCodec) {
	f.str(&o.ID)
	f.str(&o.Name)
	f.str(&o.Country)
	f.str(&o.Timezone)
	f.str(&o.DefaultCurrency)
	f.str(&o.Status)
	f.varint(&o.CreatedAt)
	f.varint(&o.UpdatedAt)
}

func (k *APIKey) fields(f *fieldCodec) {
	f.str(&k.ID)
	f.str(&k.OrgID)
	f.str(&k.Name)
	f.str(&k.Hash)
	f.str(&k.Hint)
	f.scopes(&k.Scopes)
	f.bool(&k.Revoked)
	f.varint(&k.CreatedAt)
	f.varint(&k.RevokedAt)
	if f.enc != nil {
		encodeKeyControlsSection(f.enc, k)
	} else {
		decodeKeyControlsSection(f.dec, k)
	}
}

func (a *Account) fields(f *fieldCodec) {
	f.str(&a.Number)
	f.str(&a.OrgID)
	f.str(&a.Currency)
	fieldU8(f, &a.Purpose)
	f.minor(&a.Total)
	f.minor(&a.Held)
	f.uvarint(&a.Reservation)
	f.varint(&a.CreatedAt)
	f.varint(&a.LastEntryAt)
}

// fields are a payout as format 1 wrote it; the store and the subjects of
// later kinds append (encodeStoredPayout, fxpayout.go, routing.go).
func (p *Payout) fields(f *fieldCodec) {
	f.str(&p.ID)
	f.str(&p.OrgID)
	f.str(&p.AccountNumber)
	p.Spec.fields(f)
	f.methodType(&p.MethodType)
	f.minor(&p.Fee)
	f.str(&p.ExternalReference)
	fieldU8(f, &p.Status)
	f.str(&p.StatusMessage)
	f.str(&p.ProviderReference)
	f.varint(&p.CreatedAt)
	f.varint(&p.UpdatedAt)
	f.varint(&p.ProcessingAt)
	f.varint(&p.CompletedAt)
	f.varint(&p.FailedAt)
}

func (c *Collection) fields(f *fieldCodec) {
	f.str(&c.ID)
	f.str(&c.OrgID)
	f.str(&c.Type)
	c.Spec.fields(f)
	f.methodType(&c.MethodType)
	f.minor(&c.Fee)
	f.str(&c.ExternalReference)
	f.str(&c.AccountNumber)
	fieldU8(f, &c.Status)
	f.str(&c.StatusMessage)
	f.varint(&c.CreatedAt)
	f.varint(&c.UpdatedAt)
	f.varint(&c.CompletedAt)
	f.varint(&c.FailedAt)
}

// decodeAccount reads an account: one for every balance a payout moves.
func decodeAccount(d *decoder) (a Account) {
	a.fields(d.codec())
	return a
}

func (fu *Funding) fields(f *fieldCodec) {
	f.uvarint(&fu.EntrySeq)
	f.str(&fu.OrgID)
	f.str(&fu.AccountNumber)
	f.str(&fu.Currency)
	f.minor(&fu.Amount)
	f.minor(&fu.BalanceAfter)
	f.str(&fu.ExternalReference)
	f.varint(&fu.At)
}
