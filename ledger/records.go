package ledger

import "payments/ledger/kv"

// Record codecs: the state store's records and events' subjects. Frozen
// with the state store's format (doc.go): a change of layout is a new
// format version. Each fields method both writes and reads its record
// (encodeByFields, decodeByFields).

func (o *Organization) fields(f *Codec) {
	f.Str(&o.ID, &o.Name, &o.Country, &o.Timezone, &o.DefaultCurrency, &o.Status)
	f.Varint(&o.CreatedAt, &o.UpdatedAt)
}

func (k *APIKey) fields(f *Codec) {
	f.Str(&k.ID, &k.OrgID, &k.Name, &k.Hash, &k.Hint)
	kv.FieldU32(f, &k.Scopes)
	f.Bool(&k.Revoked)
	f.Varint(&k.CreatedAt, &k.RevokedAt)
	if d := f.Decoder(); d != nil {
		decodeKeyControlsSection(d, k)
	} else {
		encodeKeyControlsSection(f.Encoder(), k)
	}
}

func (a *Account) fields(f *Codec) {
	f.Str(&a.Number, &a.OrgID, &a.Currency)
	FieldU8(f, &a.Purpose)
	FieldMinor(f, &a.Total, &a.Held)
	f.Uvarint(&a.Reservation)
	f.Varint(&a.CreatedAt, &a.LastEntryAt)
}

// fields are a payout as format 1 wrote it; the store and the subjects of
// later kinds append (encodeStoredPayout, fxpayout.go, routing.go).
func (p *Payout) fields(f *Codec) {
	f.Str(&p.ID, &p.OrgID, &p.AccountNumber)
	p.Spec.fields(f)
	FieldMethodType(f, &p.MethodType)
	FieldMinor(f, &p.Fee)
	f.Str(&p.ExternalReference)
	FieldU8(f, &p.Status)
	f.Str(&p.StatusMessage, &p.ProviderReference)
	f.Varint(&p.CreatedAt, &p.UpdatedAt, &p.ProcessingAt, &p.CompletedAt, &p.FailedAt)
}

func (c *Collection) fields(f *Codec) {
	f.Str(&c.ID, &c.OrgID, &c.Type)
	c.Spec.fields(f)
	FieldMethodType(f, &c.MethodType)
	FieldMinor(f, &c.Fee)
	f.Str(&c.ExternalReference, &c.AccountNumber)
	FieldU8(f, &c.Status)
	f.Str(&c.StatusMessage)
	f.Varint(&c.CreatedAt, &c.UpdatedAt, &c.CompletedAt, &c.FailedAt)
}

// decodeAccount reads an account: one for every balance a payout moves.
func decodeAccount(d *Decoder) (a Account) {
	a.fields(d.Codec())
	return a
}

func (fu *Funding) fields(f *Codec) {
	f.Uvarint(&fu.EntrySeq)
	f.Str(&fu.OrgID, &fu.AccountNumber, &fu.Currency)
	FieldMinor(f, &fu.Amount, &fu.BalanceAfter)
	f.Str(&fu.ExternalReference)
	f.Varint(&fu.At)
}
