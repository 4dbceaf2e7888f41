package ledger

// Funding is a sandbox top-up: a credit to an organization's balance from the
// sandbox funding source, idempotent by the caller's reference.
type Funding struct {
	EntrySeq          uint64 // the credit entry; its EntryID is the transaction id
	OrgID             string
	AccountNumber     string
	Currency          string
	Amount            Minor
	BalanceAfter      Minor // the account's total right after the credit
	ExternalReference string
	At                int64
}

// FundBalance credits a sandbox balance. Crypto currencies are refused: a
// stablecoin balance is funded by a deposit on its chain.
type FundBalance struct {
	At                int64
	OrgID             string
	Currency          string
	Amount            Minor
	ExternalReference string
}

// fundingKind: a funding never changes once made. Its id is its
// organization and reference (fundingKey).
var fundingKind = newKind(tagFunding, "funding", func(f *Funding) (string, string) { return fundingKey(f.OrgID, f.ExternalReference), f.OrgID },
	writtenClosed, unlisted)

// fundingKey keys a funding by its organization and reference.
func fundingKey(orgID, ref string) string { return orgID + "\x00" + ref }

func (s *State) fundBalance(c *FundBalance) Result {
	if err := s.CheckOrg(c.OrgID); err != nil {
		return Result{Err: err}
	}
	cur, ok := LookupCurrency(c.Currency)
	if !ok {
		return Result{Err: FieldInvalid("currency", "is not a supported currency")}
	}
	if cur.Crypto {
		return Result{Err: FieldInvalid("currency", "is a crypto currency; fund it with a deposit instead")}
	}
	if c.Amount <= 0 || c.Amount > AmountMax {
		return Result{Err: FieldInvalid("amount", "is out of range")}
	}
	if c.ExternalReference == "" {
		return Result{Err: FieldInvalid("externalReference", "is required")}
	}
	key := fundingKey(c.OrgID, c.ExternalReference)
	if f, ok := s.fundings.get(key); ok {
		if f.Currency == c.Currency && f.Amount == c.Amount {
			return Result{Replayed: true, Funding: &f}
		}
		return Result{Err: FundingConflict()}
	}
	account, _ := s.merchantAccount(c.OrgID, cur.Code, c.At, true)
	source := s.orgSystemAccount(PurposeSandboxFunding, c.OrgID, cur.Code, c.At)
	postings := []Posting{
		{source, EntryFundingSource, -c.Amount},
		{account.Number, EntryManualCredit, c.Amount},
	}
	// The credit is the second posting; its entry id is the transaction id
	// that the entries refer to.
	creditSeq := s.journal.seq + 2
	if _, err := s.book(c.At, EntryID(creditSeq), c.ExternalReference, postings); err != nil {
		return Result{Err: err}
	}
	credited, _ := s.accounts.get(account.Number)
	f := Funding{
		EntrySeq:          creditSeq,
		OrgID:             c.OrgID,
		AccountNumber:     account.Number,
		Currency:          cur.Code,
		Amount:            c.Amount,
		BalanceAfter:      credited.Total,
		ExternalReference: c.ExternalReference,
		At:                s.OrgNow(c.OrgID, c.At),
	}
	s.fundings.insert(f)
	s.emitCredited(c.At, account.Number)
	return Result{Funding: &f}
}
