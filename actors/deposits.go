package actors

import (
	"context"
	"errors"
	"time"

	"payments/ledger"
	"payments/ledger/deposits"
)

// The deposit watcher: on the leader, one goroutine per provider instance
// with a deposit feed polls it from the cursor committed in the log, and
// commits what each poll reported together with the cursor it returned
// (deposits.RecordFeed), so a new leader resumes exactly where the
// old one stopped. The ledger credits each transfer once, by its identity,
// after the instance's confirmations; the watcher only relays. A poll the
// ledger refuses because the cursor moved (a deposed leader's, late) is
// dropped and the next poll starts from the committed cursor.

// DepositPollIntervalDefault is how often a deposit feed is polled.
const DepositPollIntervalDefault = 2 * time.Second

// startDepositWatchers starts the term's watchers; they stop with ctx.
func (d *deps) startDepositWatchers(ctx context.Context) {
	if d.providers == nil {
		return
	}
	for _, p := range d.providers.All() {
		if p.HasDepositFeed() {
			go d.watchDeposits(ctx, p)
		}
	}
}

func (d *deps) watchDeposits(ctx context.Context, p Provider) {
	defer stopOnClosedStore()
	w := &worker{deps: d, ctx: ctx}
	ids := newIDSource()
	if st, ok := deposits.ProviderState(d.state.Reader(), p.Name()); ok {
		p.NoteDepositIndexes(st.DepositIndexes)
	}
	for ctx.Err() == nil {
		st, _ := deposits.ProviderState(d.state.Reader(), p.Name())
		reported, next, err := p.PollDeposits(ctx, []byte(st.DepositCursor))
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			d.logger.Warn("polling a deposit feed failed", "provider", p.Name(), "err", err)
			if !w.waitRetry(err) {
				return
			}
			continue
		}
		w.delay = 0
		if len(reported) > 0 || string(next) != st.DepositCursor {
			if !d.recordPoll(w, ids, p, st.DepositCursor, reported, next) {
				return
			}
		}
		if !w.sleep(d.depositPoll) {
			return
		}
	}
}

// recordPoll commits one poll; false when the watcher must stop.
func (d *deps) recordPoll(w *worker, ids *idSource, p Provider, from string, reported []FeedDeposit, next []byte) bool {
	for len(reported) > 0 || from != string(next) {
		batch := reported
		cursor := string(next)
		if len(batch) > deposits.FeedMax {
			// Never happens with the bounded feeds we have; if it does,
			// the cursor cannot be split, so the poll is not committed.
			d.logger.Error("a deposit poll reported more than a log entry takes; not committed", "provider", p.Name(), "deposits", len(batch))
			return w.backoff()
		}
		cmd := &deposits.RecordFeed{At: d.now().UnixMilli(), Provider: p.Name(), From: from, Cursor: cursor,
			Deposits: make([]deposits.FeedDeposit, len(batch))}
		for i, dep := range batch {
			cmd.Deposits[i] = deposits.FeedDeposit{
				Identity: dep.Identity, Chain: dep.Chain, Currency: dep.Currency, Amount: dep.Amount, To: dep.To, Tag: dep.Tag,
				SourceReference: dep.Hash, Confirmations: uint32(max(dep.Confirmations, 0)), Required: uint32(max(dep.Required, 0)),
				Confirmed: dep.Confirmed(), Dropped: dep.Dropped,
				Fee:       dep.Fee,
				DepositID: ids.next("cdp_"), CollectionID: ids.next("col_"),
			}
		}
		res, ok := w.propose(cmd)
		if !ok {
			return false
		}
		switch {
		case res.Err == nil:
			return true
		case errors.Is(res.Err, ledger.ErrConflict):
			if st, _ := deposits.ProviderState(d.state.Reader(), p.Name()); st.DepositCursor != from {
				return true // the feed moved on: poll again from where it is
			}
			// Identifiers taken: drawn afresh on the next pass.
		default:
			d.logger.Error("the ledger refused a deposit poll", "provider", p.Name(), "code", res.Err.Code, "message", res.Err.Message)
			return w.backoff()
		}
	}
	return true
}
