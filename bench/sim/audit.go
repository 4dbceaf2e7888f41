package sim

import (
	"bytes"
	"context"
	"path/filepath"
	"time"

	"payments/ledger"
	"payments/ledger/conversions"
	"payments/ledger/orders"
	"payments/ledger/paymentlinks"
	"payments/ledger/webhooks"
	"payments/raft"
)

// settleWait bounds how long, once the network has healed, the cluster
// may take to elect a leader, finish every payout and collection, and
// bring every replica to the same index.
const settleWait = 20 * time.Second

// audit checks the healed cluster against what the clients were told.
func audit(cl *clients, rep *Report, opts Options) {
	ctx := context.Background()
	reader := func() *ledger.Reader {
		deadline := time.Now().Add(settleWait)
		for time.Now().Before(deadline) {
			if n := cl.c.leader(); n != nil {
				if _, sys := n.running(); sys != nil {
					return sys.Reader()
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	}
	if reader() == nil {
		rep.violate("no leader within %s of the network healing", settleWait)
		return
	}

	// Nothing stuck: every payout and collection reaches its end.
	if !settled(reader, settleWait) {
		r := reader()
		ps, _, _ := r.OpenPayouts("", 10)
		cs, _, _ := r.OpenCollections("", 10)
		for _, p := range ps {
			rep.violate("stuck: payout %s (%s) still %s %s after the network healed", p.ID, p.ExternalReference, p.Status, settleWait)
		}
		for _, c := range cs {
			rep.violate("stuck: collection %s (%s) still %s %s after the network healed", c.ID, c.ExternalReference, c.Status, settleWait)
		}
	}

	// What each client was told holds; each reference named one resource.
	r := reader()
	credited := map[string]ledger.Minor{} // hot org → fundings that exist
	for _, req := range cl.requests {
		switch req.kind {
		case "payout":
			p, found := r.PayoutByReference(req.org, req.ref)
			checkTold(rep, req, found, p.ID, p.Spec.Amount)
		case "collection":
			c, found := r.CollectionByReference(req.org, req.ref)
			checkTold(rep, req, found, c.ID, c.Spec.Amount)
		case "order":
			o, found := orders.ByReference(r, req.org, req.ref)
			checkTold(rep, req, found, o.ID, o.Spec.Amount)
			if found && !o.Status.Terminal() {
				rep.violate("stuck: order %s (%s) still %v %s after the network healed", o.ID, o.ExternalReference, o.Status, settleWait)
			}
		case "payment_link":
			l, found := paymentLinkByReference(r, req.org, req.ref)
			checkTold(rep, req, found, l.ID, l.Spec.Amount)
		case "checkout":
			// The client's one attempt: at most one session on its link.
			link, _ := paymentLinkByReference(r, req.org, req.ref)
			var sess paymentlinks.Session
			sessions := paymentlinks.LinkSessions(r, req.org, link.ID)
			if len(sessions) > 1 {
				rep.violate("payment link %s has %d checkout sessions; its client made one attempt", link.ID, len(sessions))
			}
			found := len(sessions) > 0
			if found {
				sess = sessions[len(sessions)-1]
			}
			checkTold(rep, req, found, sess.ID, sess.DestAmount)
			if !found {
				continue
			}
			// A mobile money session made its collection; a bank-transfer or
			// stablecoin one has one once its deposit applied. Either way the
			// link is paid exactly when that collection completed, for the
			// link's amount.
			var col ledger.Collection
			var colFound bool
			if sess.Method == paymentlinks.MobileMoney {
				col, colFound = r.Collection(sess.CollectionID)
			} else if d, ok := paymentlinks.DepositByReference(r, req.org, "dep-"+req.ref); ok {
				col, colFound = r.Collection(d.CollectionID)
			}
			switch {
			case !colFound && sess.Method == paymentlinks.MobileMoney:
				rep.violate("checkout session %s has no collection", sess.ID)
			case !colFound && link.Status == paymentlinks.LinkPaid:
				rep.violate("payment link %s is paid though its %v checkout %s has no deposit", link.ID, sess.Method, sess.ID)
			case !colFound:
			case col.Spec.Amount != sess.DestAmount:
				rep.violate("checkout session %s's collection %s credits %s, not the link's %s", sess.ID, col.ID, money(col.Spec.Amount), money(sess.DestAmount))
			case col.Status == ledger.CollectionCompleted && link.Status != paymentlinks.LinkPaid:
				rep.violate("payment link %s is %v though its checkout's collection %s completed", link.ID, link.Status, col.ID)
			case col.Status != ledger.CollectionCompleted && link.Status == paymentlinks.LinkPaid:
				rep.violate("payment link %s is paid though its checkout's collection %s is %v", link.ID, col.ID, col.Status)
			}
		case "checkout_deposit":
			// Its collection, which the deposit makes completed at once.
			var col ledger.Collection
			d, found := paymentlinks.DepositByReference(r, req.org, req.ref)
			if found {
				col, found = r.Collection(d.CollectionID)
			}
			checkTold(rep, req, found, col.ID, col.Spec.Amount)
			if found && col.Status != ledger.CollectionCompleted {
				rep.violate("checkout deposit %s/%s made collection %s, %v", req.org, req.ref, col.ID, col.Status)
			}
		case "quote":
			_, found := conversions.GetQuote(r, req.org, req.ref, cl.stamp())
			if req.outcome == acked && !found {
				rep.violate("acknowledged write lost: quote %s/%s", req.org, req.ref)
			}
		case "conversion":
			q, found := conversions.GetQuote(r, req.org, req.ref, cl.stamp())
			switch {
			case !found:
				rep.violate("the quote of conversion %s/%s is gone", req.org, req.ref)
			case req.outcome == acked:
				conv, ok := conversions.Get(r, req.org, req.id)
				if !ok || q.ConversionID != req.id || conv.QuoteID != req.ref || conv.FromAmount != req.amount {
					rep.violate("acknowledged write lost: conversion %s of quote %s/%s (the quote names %q)", req.id, req.org, req.ref, q.ConversionID)
				}
			case req.outcome == refused && q.ConversionID != "":
				rep.violate("refused write applied: the execution of quote %s/%s was refused %s, and it made conversion %s", req.org, req.ref, req.code, q.ConversionID)
			}
		case "fund":
			if req.outcome == refused {
				continue
			}
			// No reader looks a funding up: send it again. An acknowledged
			// one must come back replayed; an unknown one exists after.
			again := cl.fund(ctx, req.org, req.ref, req.amount)
			switch {
			case again.outcome != acked:
				rep.violate("funding %s/%s resent at the audit: %s %s", req.org, req.ref, again.outcome, again.code)
			case req.outcome == acked && !again.replayed:
				rep.violate("acknowledged write lost: funding %s/%s was created again when resent", req.org, req.ref)
			}
			credited[req.org] += req.amount
		}
	}
	sent := map[string]bool{}
	for _, req := range cl.requests {
		sent[req.org+"/"+req.ref] = true
	}
	for _, org := range append(append([]string{}, hotOrgs...), otherOrg) {
		seen := map[string]string{}
		eachPayout(r, org, func(p ledger.Payout) {
			if prev, dup := seen[p.ExternalReference]; dup {
				rep.violate("reference %s/%s produced two payouts: %s and %s", org, p.ExternalReference, prev, p.ID)
			}
			seen[p.ExternalReference] = p.ID
			if _, leg := orders.Get(r, org, p.ExternalReference); !leg && !sent[org+"/"+p.ExternalReference] { // an order's payout carries its id
				rep.violate("payout %s has a reference no client sent: %s", p.ID, p.ExternalReference)
			}
		})
	}

	converted := map[string]string{}
	eachConversion(r, otherOrg, func(conv conversions.Conversion) {
		if prev, dup := converted[conv.QuoteID]; dup {
			rep.violate("quote %s executed twice: conversions %s and %s", conv.QuoteID, prev, conv.ID)
		}
		converted[conv.QuoteID] = conv.ID
	})

	// The hot balances follow from the records: fundings in, payouts out.
	for _, org := range hotOrgs {
		want := credited[org]
		eachPayout(r, org, func(p ledger.Payout) {
			if p.Status != ledger.PayoutFailed {
				want -= p.Debit()
			}
		})
		a, _ := r.AccountFor(org, currency)
		if a.Total != want {
			rep.violate("money: %s's balance is %s; its fundings less its payouts make %s", org, money(a.Total), money(want))
		}
		if a.Total < 0 || a.Available() < 0 {
			rep.violate("money: %s's balance is negative: total %s, available %s", org, money(a.Total), money(a.Available()))
		}
		// No reservation left behind: with nothing in flight, a payout of
		// the whole available balance goes through.
		amount := a.Available() * 100 / 101 / 100 * 100
		for amount > 0 && amount+simFees.payout.Fee(amount) > a.Available() {
			amount -= 100
		}
		if amount >= 100 {
			if req := cl.payout(ctx, org, "audit-drain", amount); req.outcome != acked {
				rep.violate("reservation left behind: a payout of %s from %s's available %s was %s %s", money(amount), org, money(a.Available()), req.outcome, req.code)
			}
		}
	}
	if !settled(reader, settleWait) {
		rep.violate("stuck: the audit's payouts did not settle")
	}

	checkWebhooks(cl, rep, reader)

	// Every replica: the ledger's invariants (journal sums to zero per
	// currency, running balances, no negative balance) and the same bytes
	// at the same applied index.
	checkReplicas(cl.c, rep)

	ok, visual, err := checkLinearizable(cl.history, filepath.Join(opts.Dir, "porcupine"), 30*time.Second)
	switch {
	case err != nil:
		rep.violate("linearizability: %v", err)
	case !ok:
		rep.violate("linearizability: the hot accounts' reads and writes are not linearizable")
		rep.Visual = visual
	}
	rep.Reads = 0
	for _, o := range cl.history {
		if o.in.kind == opRead {
			rep.Reads++
		}
	}
}

// paymentLinkByReference returns an organization's link by its
// customerReference.
func paymentLinkByReference(r *ledger.Reader, org, ref string) (paymentlinks.Link, bool) {
	page := paymentlinks.Links(r, org, paymentlinks.LinkFilter{CustomerReference: ref}, ledger.CursorStart, 1)
	if len(page.Items) == 0 {
		return paymentlinks.Link{}, false
	}
	return page.Items[0], true
}

func checkTold(rep *Report, req *request, found bool, id string, amount ledger.Minor) {
	switch req.outcome {
	case acked:
		if !found {
			rep.violate("acknowledged write lost: %s %s/%s (%s)", req.kind, req.org, req.ref, req.id)
		} else if id != req.id || amount != req.amount {
			rep.violate("acknowledged %s %s/%s was %s of %s; the ledger has %s of %s", req.kind, req.org, req.ref, req.id, money(req.amount), id, money(amount))
		}
	case refused:
		if found && req.code != ledger.CodeDuplicate {
			rep.violate("refused write applied: %s %s/%s (refused %s) exists as %s", req.kind, req.org, req.ref, req.code, id)
		}
	}
}

func eachPayout(r *ledger.Reader, org string, fn func(ledger.Payout)) {
	cursor := ledger.CursorStart
	for {
		page := r.Payouts(org, ledger.PayoutFilter{}, cursor, 100)
		for _, p := range page.Items {
			fn(p)
		}
		if !page.HasMore {
			return
		}
		cursor = page.Next
	}
}

func eachConversion(r *ledger.Reader, org string, fn func(conversions.Conversion)) {
	cursor := ledger.CursorStart
	for {
		page := conversions.List(r, org, cursor, 100)
		for _, c := range page.Items {
			fn(c)
		}
		if !page.HasMore {
			return
		}
		cursor = page.Next
	}
}

// openOrders counts the other organization's orders not yet ended.
func openOrders(r *ledger.Reader) int {
	var open int
	cursor := ledger.CursorStart
	for {
		page := orders.List(r, otherOrg, orders.Filter{}, cursor, 100)
		for _, o := range page.Items {
			if !o.Status.Terminal() {
				open++
			}
		}
		if !page.HasMore {
			return open
		}
		cursor = page.Next
	}
}

// settled waits until the leader has no open payout, collection or order.
func settled(reader func() *ledger.Reader, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if r := reader(); r != nil {
			ps, _, _ := r.OpenPayouts("", 1)
			cs, _, _ := r.OpenCollections("", 1)
			if len(ps) == 0 && len(cs) == 0 && openOrders(r) == 0 {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// checkReplicas waits for every node to apply the same index, then
// compares their state stores' digests and checks each one's invariants.
func checkReplicas(c *cluster, rep *Report) {
	deadline := time.Now().Add(settleWait)
	for {
		var nodes []*raft.Node
		for _, n := range c.nodes {
			if node, _ := n.running(); node != nil {
				nodes = append(nodes, node)
			}
		}
		type digest struct {
			sum     [32]byte
			applied uint64
		}
		var ds []digest
		for _, node := range nodes {
			sum, applied, err := node.StateDigest()
			if err != nil {
				rep.violate("state digest of %s: %v", node.ID(), err)
				return
			}
			ds = append(ds, digest{sum, applied})
		}
		same := len(ds) == len(c.nodes)
		for _, d := range ds[1:] {
			same = same && d.applied == ds[0].applied
		}
		if same {
			for i, d := range ds[1:] {
				if !bytes.Equal(d.sum[:], ds[0].sum[:]) {
					rep.violate("replicas differ: %s and %s at applied index %d", nodes[0].ID(), nodes[i+1].ID(), d.applied)
				}
			}
			for _, node := range nodes {
				if err := node.CheckState(); err != nil {
					rep.violate("invariants of %s: %v", node.ID(), err)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			rep.violate("replicas did not reach the same applied index within %s: %v", settleWait, ds)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkWebhooks: every event of the organization with the endpoint has a
// delivery, every delivery ends delivered, and the receiver took each one
// under its webhook-id, with the same body on every attempt.
func checkWebhooks(cl *clients, rep *Report, reader func() *ledger.Reader) {
	deadline := time.Now().Add(settleWait)
	for webhooks.PendingDeliveryCount(reader()) > 0 {
		if time.Now().After(deadline) {
			rep.violate("stuck: %d webhook deliveries still pending %s after the network healed", webhooks.PendingDeliveryCount(reader()), settleWait)
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := reader()
	delivered := map[string]bool{} // event id → has a delivery
	for seq := uint64(1); seq <= webhooks.DeliveryCount(r); seq++ {
		d, ok := webhooks.DeliveryAt(r, seq)
		if !ok {
			rep.violate("webhook delivery %d is missing", seq)
			continue
		}
		delivered[d.EventID] = true
		if d.Status != webhooks.Success {
			rep.violate("webhook delivery %s of event %s ended %v after %d attempts: %s", d.ID, d.EventID, d.Status, d.Attempts, d.LastError)
		} else if !cl.recv.received(d.ID) {
			rep.violate("webhook delivery %s of event %s is recorded delivered, and the receiver never took it", d.ID, d.EventID)
		}
	}
	for seq := uint64(1); seq <= r.EventCount(); seq++ {
		if ev, ok := r.EventAt(seq); ok && ev.OrgID == otherOrg && !delivered[ev.ID] {
			rep.violate("event %s (%s) of %s has no webhook delivery", ev.ID, ev.Type, otherOrg)
		}
	}
	cl.recv.mu.Lock()
	for _, id := range cl.recv.changed {
		rep.violate("webhook %s was sent again with a different body", id)
	}
	rep.Webhooks = cl.recv.attempts
	cl.recv.mu.Unlock()
}
