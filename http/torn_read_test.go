package http_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// Answers built from several records agree with one committed state while
// commits land: each conversion debits GHS and credits USD in one command,
// so GET /v1/accounts shows as many conversions' worth spent in GHS as
// received in USD, and GET /v1/ledger and GET /v1/transactions show both
// legs of each conversion or neither. A torn read fails this only when a
// commit lands inside the read: the test makes many of both, but cannot
// force that interleaving.
func TestReadsSeeOneCommittedStateOverHTTP(t *testing.T) {
	st := newStack(t, stackOptions{rateLimit: 1_000_000})
	st.fund(st.key, "GHS", "1000.00", "seed")
	const conversions = 30 // 61 entries: one page of the journal holds them all
	var done atomic.Bool
	var wg sync.WaitGroup
	var reads atomic.Int64
	read := func(check func() bool) {
		defer wg.Done()
		for !done.Load() {
			if !check() {
				return
			}
			reads.Add(1)
		}
		check() // once more, after the last commit
	}
	var perConversion atomic.Int64 // USD minor units one conversion credits
	balances := func() bool {
		var ghs, usd int64
		for _, a := range st.do("GET", "/v1/accounts", st.key, nil).json(t)["data"].([]any) {
			acct := a.(map[string]any)
			switch acct["currency"] {
			case "GHS":
				ghs = minorOf(t, acct["totalBalance"].(string))
			case "USD":
				usd = minorOf(t, acct["totalBalance"].(string))
			}
		}
		spent := 100_000 - ghs
		if spent%1_000 != 0 {
			t.Errorf("GHS balance %d: not a whole number of conversions spent", ghs)
			return false
		}
		if u := perConversion.Load(); u != 0 && usd != spent/1_000*u {
			t.Errorf("GHS %d (%d conversions) next to USD %d (%d each): a torn read", ghs, spent/1_000, usd, u)
			return false
		}
		return true
	}
	legs := func(path, refField string) func() bool {
		return func() bool {
			seen := map[string]int{}
			for _, e := range st.do("GET", path, st.key, nil).json(t)["data"].([]any) {
				entry := e.(map[string]any)
				if ref, _ := entry[refField].(string); len(ref) > 5 && ref[:5] == "conv_" {
					seen[ref]++
				}
			}
			for ref, n := range seen {
				if n != 2 {
					t.Errorf("%s: conversion %s has %d of its 2 legs: a torn read", path, ref, n)
					return false
				}
			}
			return true
		}
	}
	wg.Add(3)
	go read(balances)
	go read(legs("/v1/ledger?limit=100", "referenceId"))
	go read(legs("/v1/transactions?limit=100", "relatedId"))

	for i := 0; i < conversions && !t.Failed(); i++ {
		q := st.do("POST", "/v1/conversions/quote", st.key, `{"from":{"amount":"10.00","currency":"GHS"},"to":{"currency":"USD"}}`)
		st.mustStatus(q, 201)
		id := q.json(t)["quote"].(map[string]any)["id"].(string)
		r := st.do("POST", "/v1/conversions", st.key, fmt.Sprintf(`{"quoteId":%q,"externalReference":"torn-%d"}`, id, i))
		st.mustStatus(r, 201)
		u := minorOf(t, r.json(t)["conversion"].(map[string]any)["to"].(map[string]any)["amount"].(string))
		if i == 0 {
			perConversion.Store(u)
		} else if u != perConversion.Load() {
			t.Fatalf("conversion %d credited %d, the first %d: the test needs a fixed rate", i, u, perConversion.Load())
		}
	}
	done.Store(true)
	wg.Wait()
	t.Logf("%d reads during %d conversions", reads.Load(), conversions)
}
