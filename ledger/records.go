package ledger

import "payments/ledger/kv"

// Record codecs: the state store's records and events' subjects. Frozen
// with the state store's format (doc.go): a change of layout is a new
// format version. Each fields method both writes and reads its record
// (encodeByFields, decodeByFields).

func (o *Organization) fields(f *Codec) {
	f.Str(&o.ID)
	f.Str(&o.Name)
	f.Str(&o.Country)
	f.Str(&o.Timezone)
	f.Str(&o.DefaultCurrency)
	f.Str(&o.Status)
	f.Varint(&o.CreatedAt)
	f.Varint(&o.UpdatedAt)
}

func (k *APIKey) fields(f *Codec) {
	f.Str(&k.ID)
	f.Str(&k.OrgID)
	f.Str(&k.Name)
	f.Str(&k.Hash)
	f.Str(&k.Hint)
	kv.FieldU32(f, &k.Scopes)
	f.Bool(&k.Revoked)
	f.Varint(&k.CreatedAt)
	f.Varint(&k.RevokedAt)
	if d := f.Decoder(); d != nil {
		decodeKeyControlsSection(d, k)
	} else {
		encodeKeyControlsSection(f.Encoder(), k)
	}
}

func (a *Account) fields(f *Codec) {
	f.Str(&a.Number)
	f.Str(&a.OrgID)
	f.Str(&a.Currency)
	FieldU8(f, &a.Purpose)
	FieldMinor(f, &a.Total)
	FieldMinor(f, &a.Held)
	f.Uvarint(&a.Reservation)
	f.Varint(&a.CreatedAt)
	f.Varint(&a.LastEntryAt)
}

// fields are a payout as format 1 wrote it; the store and the subjects of
// later kinds append (encodeStoredPayout, fxpayout.go, routing.go).
func (p *Payout) fields(f *Codec) {
	f.Str(&p.ID)
	f.Str(&p.OrgID)
	f.Str(&p.AccountNumber)
	p.Spec.fields(f)
	FieldMethodType(f, &p.MethodType)
	FieldMinor(f, &p.Fee)
	f.Str(&p.ExternalReference)
	FieldU8(f, &p.Status)
	f.Str(&p.StatusMessage)
	f.Str(&p.ProviderReference)
	f.Varint(&p.CreatedAt)
	f.Varint(&p.UpdatedAt)
	f.Varint(&p.ProcessingAt)
	f.Varint(&p.CompletedAt)
	f.Varint(&p.FailedAt)
}

func (c *Collection) fields(f *Codec) {
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.Type)
	c.Spec.fields(f)
	FieldMethodType(f, &c.MethodType)
	FieldMinor(f, &c.Fee)
	f.Str(&c.ExternalReference)
	f.Str(&c.AccountNumber)
	FieldU8(f, &c.Status)
	f.Str(&c.StatusMessage)
	f.Varint(&c.CreatedAt)
	f.Varint(&c.UpdatedAt)
	f.Varint(&c.CompletedAt)
	f.Varint(&c.FailedAt)
}

// decodeAccount reads an account: one for every balance a payout moves.
func decodeAccount(d *Decoder) (a Account) {
	a.fields(d.Codec())
	return a
}

func (fu *Funding) fields(f *Codec) {
	f.Uvarint(&fu.EntrySeq)
	f.Str(&fu.OrgID)
	f.Str(&fu.AccountNumber)
	f.Str(&fu.Currency)
	FieldMinor(f, &fu.Amount)
	FieldMinor(f, &fu.BalanceAfter)
	f.Str(&fu.ExternalReference)
	f.Varint(&fu.At)
}
