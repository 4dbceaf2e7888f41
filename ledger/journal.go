package ledger

// The journal as an organization sees it: every entry on its balance
// accounts, newest first, across currencies. It is a merge of the accounts'
// statements (entriesByAccount), so it needs no index of its own.

// JournalFilter selects entries in an organization's journal; zero fields
// match everything.
type JournalFilter struct {
	Account  string // one balance account, by number
	Currency string // the balance account in this currency
	Type     EntryType
	RefID    string
	From     int64 // unix ms, inclusive; 0 for no bound
	To       int64 // unix ms, inclusive; 0 for no bound
}

// JournalCursor returns the cursor that continues a journal listing below
// the entry with sequence seq.
func journalCursor(seq uint64) Cursor { return Cursor(seq) }

// Journal lists an organization's entries newest first (by sequence),
// starting below before: a Cursor from an earlier page of the journal, or
// CursorStart. Paging to the end of one account's journal and summing the
// amounts gives its total.
func (s *State) Journal(orgID string, f JournalFilter, before Cursor, limit int) Page[NumberedEntry] {
	var numbers []string
	for _, n := range s.accountsByOrg[orgID] {
		a, _ := s.accounts.get(n)
		if (f.Account == "" || a.Number == f.Account) && (f.Currency == "" || a.Currency == f.Currency) {
			numbers = append(numbers, n)
		}
	}
	// One head per account: the index of its newest entry below before.
	type head struct {
		list *appendList[uint64]
		i    int // next index to take, -1 when exhausted
	}
	heads := make([]head, 0, len(numbers))
	for _, n := range numbers {
		l := s.entriesByAccount[n]
		if l == nil {
			continue
		}
		// The first index whose sequence is at or above before.
		lo, hi := 0, l.len()
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if Cursor(l.at(mid)) < before {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		heads = append(heads, head{l, lo - 1})
	}
	var p Page[NumberedEntry]
	for {
		best := -1
		var seq uint64
		for k, h := range heads {
			if h.i >= 0 {
				if v := h.list.at(h.i); best < 0 || v > seq {
					best, seq = k, v
				}
			}
		}
		if best < 0 {
			return p
		}
		heads[best].i--
		e, _ := s.Entry(seq)
		if (f.Type != 0 && e.Type != f.Type) || (f.RefID != "" && e.RefID != f.RefID) ||
			(f.From != 0 && e.At < f.From) || (f.To != 0 && e.At > f.To) {
			continue
		}
		if len(p.Items) == limit {
			p.HasMore = true
			p.Next = journalCursor(p.Items[len(p.Items)-1].Seq)
			return p
		}
		p.Items = append(p.Items, NumberedEntry{Seq: seq, Entry: e})
	}
}

// OrgEntry returns the entry with sequence seq if it is on one of the
// organization's balance accounts, with that account.
func (s *State) OrgEntry(orgID string, seq uint64) (NumberedEntry, Account, bool) {
	e, ok := s.Entry(seq)
	if !ok {
		return NumberedEntry{}, Account{}, false
	}
	a, ok := s.accounts.get(e.Account)
	if !ok || a.Purpose != PurposeMerchant || a.OrgID != orgID {
		return NumberedEntry{}, Account{}, false
	}
	return NumberedEntry{Seq: seq, Entry: e}, a, true
}
