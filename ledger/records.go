package ledger

// Record codecs: the state store's records and events' subjects. Frozen
// with the state store's format (doc.go): a change of layout is a new
// format version.

func encodeOrganization(e *encoder, o *Organization) {
	e.str(o.ID)
	e.str(o.Name)
	e.str(o.Country)
	e.str(o.Timezone)
	e.str(o.DefaultCurrency)
	e.str(o.Status)
	e.varint(o.CreatedAt)
	e.varint(o.UpdatedAt)
}

func decodeOrganization(d *decoder) Organization {
	return Organization{
		ID: d.str(), Name: d.str(), Country: d.str(), Timezone: d.str(), DefaultCurrency: d.str(),
		Status: d.str(), CreatedAt: d.varint(), UpdatedAt: d.varint(),
	}
}

func encodeAPIKey(e *encoder, k *APIKey) {
	e.str(k.ID)
	e.str(k.OrgID)
	e.str(k.Name)
	e.str(k.Hash)
	e.str(k.Hint)
	e.uvarint(uint64(k.Scopes))
	e.bool(k.Revoked)
	e.varint(k.CreatedAt)
	e.varint(k.RevokedAt)
	encodeKeyControlsSection(e, k)
}

func decodeAPIKey(d *decoder) APIKey {
	k := APIKey{
		ID: d.str(), OrgID: d.str(), Name: d.str(), Hash: d.str(), Hint: d.str(),
		Scopes: Scopes(d.u32()), Revoked: d.bool(), CreatedAt: d.varint(), RevokedAt: d.varint(),
	}
	decodeKeyControlsSection(d, &k)
	return k
}

func encodeAccount(e *encoder, a *Account) {
	e.str(a.Number)
	e.str(a.OrgID)
	e.str(a.Currency)
	e.u8(uint8(a.Purpose))
	e.minor(a.Total)
	e.minor(a.Held)
	e.uvarint(a.Reservation)
	e.varint(a.CreatedAt)
	e.varint(a.LastEntryAt)
}

func decodeAccount(d *decoder) Account {
	return Account{
		Number: d.str(), OrgID: d.str(), Currency: d.str(), Purpose: AccountPurpose(d.u8()),
		Total: d.minor(), Held: d.minor(), Reservation: d.uvarint(), CreatedAt: d.varint(),
		LastEntryAt: d.varint(),
	}
}

func encodePayout(e *encoder, p *Payout) {
	e.str(p.ID)
	e.str(p.OrgID)
	e.str(p.AccountNumber)
	p.Spec.encode(e)
	e.methodType(p.MethodType)
	e.minor(p.Fee)
	e.str(p.ExternalReference)
	e.u8(uint8(p.Status))
	e.str(p.StatusMessage)
	e.str(p.ProviderReference)
	e.varint(p.CreatedAt)
	e.varint(p.UpdatedAt)
	e.varint(p.ProcessingAt)
	e.varint(p.CompletedAt)
	e.varint(p.FailedAt)
}

func decodePayout(d *decoder) Payout {
	return Payout{
		ID: d.str(), OrgID: d.str(), AccountNumber: d.str(), Spec: decodePayoutSpec(d),
		MethodType: d.methodType(), Fee: d.minor(), ExternalReference: d.str(), Status: PayoutStatus(d.u8()),
		StatusMessage: d.str(), ProviderReference: d.str(), CreatedAt: d.varint(), UpdatedAt: d.varint(),
		ProcessingAt: d.varint(), CompletedAt: d.varint(), FailedAt: d.varint(),
	}
}

func encodeCollection(e *encoder, c *Collection) {
	e.str(c.ID)
	e.str(c.OrgID)
	e.str(c.Type)
	c.Spec.encode(e)
	e.methodType(c.MethodType)
	e.minor(c.Fee)
	e.str(c.ExternalReference)
	e.str(c.AccountNumber)
	e.u8(uint8(c.Status))
	e.str(c.StatusMessage)
	e.varint(c.CreatedAt)
	e.varint(c.UpdatedAt)
	e.varint(c.CompletedAt)
	e.varint(c.FailedAt)
}

func decodeCollection(d *decoder) Collection {
	return Collection{
		ID: d.str(), OrgID: d.str(), Type: d.str(), Spec: decodeCollectionSpec(d), MethodType: d.methodType(),
		Fee: d.minor(), ExternalReference: d.str(), AccountNumber: d.str(),
		Status: CollectionStatus(d.u8()), StatusMessage: d.str(), CreatedAt: d.varint(),
		UpdatedAt: d.varint(), CompletedAt: d.varint(), FailedAt: d.varint(),
	}
}

func encodeFunding(e *encoder, f *Funding) {
	e.uvarint(f.EntrySeq)
	e.str(f.OrgID)
	e.str(f.AccountNumber)
	e.str(f.Currency)
	e.minor(f.Amount)
	e.minor(f.BalanceAfter)
	e.str(f.ExternalReference)
	e.varint(f.At)
}

func decodeFunding(d *decoder) Funding {
	return Funding{
		EntrySeq: d.uvarint(), OrgID: d.str(), AccountNumber: d.str(), Currency: d.str(),
		Amount: d.minor(), BalanceAfter: d.minor(), ExternalReference: d.str(), At: d.varint(),
	}
}

func encodeEntry(e *encoder, en *Entry) {
	e.str(en.Account)
	e.u8(uint8(en.Type))
	e.minor(en.Amount)
	e.minor(en.BalanceAfter)
	e.str(en.RefID)
	e.str(en.ExternalRef)
	e.varint(en.At)
}

func decodeEntry(d *decoder) Entry {
	return Entry{
		Account: d.str(), Type: EntryType(d.u8()), Amount: d.minor(), BalanceAfter: d.minor(),
		RefID: d.str(), ExternalRef: d.str(), At: d.varint(),
	}
}
