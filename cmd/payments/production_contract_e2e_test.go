package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"payments/rails/momo/momofake"
)

// problem is the contract's error envelope.
type problem struct {
	Error   string `json:"error"`
	Message string `json:"message"`
	Details struct {
		Fields []struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"fields"`
	} `json:"details"`
}

// on reports whether the problem names field, with a message holding
// words ("" for any).
func (p problem) on(field, words string) bool {
	for _, d := range p.Details.Fields {
		if d.Field == field && strings.Contains(d.Message, words) {
			return true
		}
	}
	return false
}

// The contract of a production node configured with --providers: MoMo
// serves gh_mtn (payouts, collections), an EVM instance USDC on Ethereum
// (payouts, deposits). Capabilities, validation and the hosted checkout
// offer exactly those; a method no provider serves is a 400 in the
// contract's shape on payouts, collections, orders, deposit addresses,
// virtual accounts and validation, never a 503; no sandbox rate and no
// simulated deposit exists. The EVM node is never reached (nothing here
// sends on the chain): the checks need no local chain.
func TestProductionContract(t *testing.T) {
	endToEnd(t)
	fake := newMoMoFake(t)
	fake.SetName("233241234567", "Ama Mensah")
	node := newProductionNode(t)
	// A node URL nothing listens on: the deposit feed's polls fail and
	// are retried, which the contract does not see.
	usdc := common.HexToAddress("0x5FbDB2315678afecb367f032d93F642f64180aa3")
	providers := providersFile(t, node.dir, momoInstance(t, node.dir, fake, node.callbacks()), evmInstanceAt(t, node.dir, "http://127.0.0.1:9", usdc))
	p := node.start(t, providers)

	type refusal struct {
		name, method, path string
		body               any
		status             int
		code, field, words string
	}
	refuse := func(r refusal) {
		t.Helper()
		var e problem
		st, err := liveCall(p.addr, r.method, r.path, r.body, &e)
		if err != nil || st != r.status || e.Error != r.code || r.field != "" && !e.on(r.field, r.words) {
			t.Errorf("%s: %s %s answered %d %v %+v, want %d %s on %s (%q)", r.name, r.method, r.path, st, err, e, r.status, r.code, r.field, r.words)
		}
	}
	const noProvider = "no provider serves this method"

	// Capabilities list exactly the configured methods and directions.
	var caps struct {
		Capabilities struct {
			Payouts, Collections []capabilityGroup
			Deposits             []struct {
				Currency string `json:"currency"`
				Chains   []struct {
					Code  string `json:"code"`
					Chain string `json:"chain"`
				} `json:"chains"`
			} `json:"deposits"`
		} `json:"capabilities"`
	}
	if st, err := liveCall(p.addr, "GET", "/v1/capabilities", nil, &caps); err != nil || st != 200 {
		t.Fatalf("capabilities: %d %v", st, err)
	}
	if got := countryMethods(caps.Capabilities.Payouts); got != "GH:gh_mtn" {
		t.Errorf("payout capabilities: %q, want GH:gh_mtn", got)
	}
	if got := countryMethods(caps.Capabilities.Collections); got != "GH:gh_mtn" {
		t.Errorf("collection capabilities: %q, want GH:gh_mtn", got)
	}
	var deposits []string
	for _, d := range caps.Capabilities.Deposits {
		for _, n := range d.Chains {
			deposits = append(deposits, d.Currency+":"+n.Code)
		}
	}
	if strings.Join(deposits, " ") != "USDC:usdc_ethereum" {
		t.Errorf("deposit capabilities: %v, want USDC:usdc_ethereum", deposits)
	}
	var country struct {
		Capabilities struct {
			Payouts []struct {
				Methods []struct {
					Code string `json:"code"`
				} `json:"methods"`
			} `json:"payouts"`
		} `json:"capabilities"`
	}
	if st, err := liveCall(p.addr, "GET", "/v1/capabilities/GH", nil, &country); err != nil || st != 200 ||
		len(country.Capabilities.Payouts) != 1 || len(country.Capabilities.Payouts[0].Methods) != 1 || country.Capabilities.Payouts[0].Methods[0].Code != "gh_mtn" {
		t.Errorf("GH capabilities: %d %v %+v, want gh_mtn alone", st, err, country)
	}
	for path, want := range map[string]int{
		"/v1/capabilities/GH/gh_mtn":        200,
		"/v1/capabilities/GH/usdc_ethereum": 200,
		"/v1/capabilities/GH/gh_ghipss":     404,
		"/v1/capabilities/GH/usdt_tron":     404,
		"/v1/capabilities/KE":               404,
		"/v1/capabilities/KE/ke_mpesa":      404,
	} {
		if st, err := liveCall(p.addr, "GET", path, nil, nil); err != nil || st != want {
			t.Errorf("GET %s: %d %v, want %d", path, st, err, want)
		}
	}

	// Validation: a served method is checked with its provider (MoMo's
	// account holder name); one left out is refused by name.
	var v struct {
		Validation struct {
			Valid       bool   `json:"valid"`
			AccountName string `json:"accountName"`
		} `json:"validation"`
	}
	if st, err := liveCall(p.addr, "POST", "/v1/validate", map[string]any{"code": "gh_mtn", "accountNumber": "233241234567"}, &v); err != nil || st != 200 ||
		!v.Validation.Valid || v.Validation.AccountName != "Ama Mensah" {
		t.Errorf("validate gh_mtn: %d %v %+v, want valid, named by MoMo", st, err, v)
	}

	for _, r := range []refusal{
		{name: "validate an unserved method", method: "POST", path: "/v1/validate", body: map[string]any{"code": "ke_mpesa", "accountNumber": "254712345678"},
			status: 400, code: "validation_error", field: "code", words: noProvider},
		{name: "validate an unserved network", method: "POST", path: "/v1/validate", body: map[string]any{"code": "usdt_tron", "address": "TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy"},
			status: 400, code: "validation_error", field: "code", words: noProvider},
		{name: "a payout by an unserved method", method: "POST", path: "/v1/payouts", body: map[string]any{
			"to": map[string]any{"code": "ke_mpesa", "currency": "KES", "accountNumber": "254712345678", "amount": "10.00"}, "externalReference": "c-1"},
			status: 400, code: "validation_error", field: "to.code", words: noProvider},
		{name: "a payout on an unserved chain", method: "POST", path: "/v1/payouts", body: map[string]any{
			"to": map[string]any{"code": "usdt_tron", "currency": "USDT", "address": "TLsV52sRDL79HXGGm9yzwKibb6BeruhUzy", "amount": "10.00"}, "externalReference": "c-2"},
			status: 400, code: "validation_error", field: "to.code", words: noProvider},
		{name: "a collection by an unserved method", method: "POST", path: "/v1/collections", body: map[string]any{
			"from": map[string]any{"accountNumber": "254712345678", "code": "ke_mpesa", "amount": "100.00", "currency": "KES"},
			"to":   map[string]any{"currency": "KES"}, "externalReference": "c-3"},
			status: 400, code: "validation_error", field: "from.code", words: noProvider},
		{name: "an order to an unserved method", method: "POST", path: "/v1/orders", body: map[string]any{
			"from": map[string]any{"code": "gh_mtn", "currency": "GHS", "accountNumber": "233241234567", "amount": "100.00"},
			"to":   map[string]any{"code": "gh_ghipss", "currency": "GHS", "accountNumber": "1234567890"}, "externalReference": "c-5"},
			status: 400, code: "validation_error", field: "to.code", words: noProvider},
		// The chain's deposits reach the deployment only at the addresses
		// its provider issues for crypto addresses: an order paid on
		// chain has none yet, and bank transfers have no provider.
		{name: "an order paid on chain", method: "POST", path: "/v1/orders", body: map[string]any{
			"from": map[string]any{"code": "usdc_ethereum", "currency": "USDC", "amount": "50"},
			"to":   map[string]any{"code": "usdc_ethereum", "currency": "USDC", "accountNumber": "0x90F79bf6EB2c4f870365E785982E1f101E93b906"}, "externalReference": "c-6"},
			status: 400, code: "validation_error", field: "from.code", words: "mobile money"},
		{name: "an order paid by bank transfer", method: "POST", path: "/v1/orders", body: map[string]any{
			"from": map[string]any{"code": "gh_ghipss", "currency": "GHS", "amount": "50"},
			"to":   map[string]any{"code": "gh_mtn", "currency": "GHS", "accountNumber": "233241234567"}, "externalReference": "c-7"},
			status: 400, code: "validation_error", field: "from.code", words: noProvider},
		{name: "a deposit address on an unserved chain", method: "POST", path: "/v1/crypto-addresses", body: map[string]any{"currency": "USDT", "chain": "tron"},
			status: 400, code: "validation_error", field: "chain", words: "takes no deposits"},
		{name: "a virtual account with no bank provider", method: "POST", path: "/v1/virtual-accounts", body: map[string]any{"currency": "GHS"},
			status: 400, code: "validation_error", field: "currency", words: "no provider"},
		{name: "a checkout taking bank transfers", method: "POST", path: "/v1/payment-links", body: map[string]any{"email": "ama@example.com", "amount": "25.00",
			"currency": "GHS", "title": "Invoice", "allowedMethods": []string{"bank_transfer"}},
			status: 400, code: "validation_error", field: "allowedMethods", words: ""},
		// No sandbox rate: with no feed configured, nothing is priced.
		{name: "a rate", method: "GET", path: "/v1/rates/USD/GHS", status: 503, code: "rate_unavailable"},
		{name: "a quote", method: "POST", path: "/v1/conversions/quote", body: map[string]any{"from": map[string]any{"currency": "GHS", "amount": "100"}, "to": map[string]any{"currency": "USD"}},
			status: 503, code: "rate_unavailable"},
		{name: "a cross-currency payout", method: "POST", path: "/v1/payouts", body: map[string]any{
			"from": map[string]any{"currency": "USD"},
			"to":   map[string]any{"code": "gh_mtn", "currency": "GHS", "accountNumber": "233241234567", "amount": "10.00"}, "externalReference": "c-8"},
			status: 503, code: "rate_unavailable"},
		// No simulated deposit, nor any other simulation.
		{name: "a simulated crypto deposit", method: "POST", path: "/v1/simulations/crypto-deposit", body: map[string]any{"cryptoAddressId": "addr_x", "amount": "1"}, status: 404, code: "not_found"},
		{name: "a simulated bank deposit", method: "POST", path: "/v1/simulations/virtual-account-deposit", body: map[string]any{"virtualAccountId": "va_x", "amount": "1"}, status: 404, code: "not_found"},
		{name: "a simulated order deposit", method: "POST", path: "/v1/simulations/order-deposit", body: map[string]any{"orderId": "ord_x"}, status: 404, code: "not_found"},
		{name: "a simulated checkout deposit", method: "POST", path: "/v1/simulations/checkout-deposit", body: map[string]any{"checkoutSessionId": "cs_x"}, status: 404, code: "not_found"},
		{name: "a funded balance", method: "POST", path: "/v1/simulations/fund-balance", body: map[string]any{"amount": "1000.00", "currency": "GHS", "externalReference": "f-1"}, status: 404, code: "not_found"},
	} {
		refuse(r)
	}

	// A deposit address on the served chain comes from the provider's
	// deposit tree (no node is asked), once per asset and chain.
	var a1, a2 struct {
		Address struct {
			ID      string `json:"id"`
			Address string `json:"address"`
		} `json:"address"`
	}
	if st, err := liveCall(p.addr, "POST", "/v1/crypto-addresses", map[string]any{"currency": "USDC", "chain": "ethereum"}, &a1); err != nil || st != 201 || !common.IsHexAddress(a1.Address.Address) {
		t.Errorf("a USDC address on Ethereum: %d %v %+v", st, err, a1)
	}
	if st, err := liveCall(p.addr, "POST", "/v1/crypto-addresses", map[string]any{"currency": "USDC", "chain": "ethereum"}, &a2); err != nil || st != 201 || a2.Address != a1.Address {
		t.Errorf("the address again: %d %v %+v, want %+v", st, err, a2, a1)
	}

	// The hosted checkout offers mobile money through the served network
	// alone, and no test mode.
	var link struct {
		PaymentLink struct {
			ID string `json:"id"`
		} `json:"paymentLink"`
	}
	if st, err := liveCall(p.addr, "POST", "/v1/payment-links", map[string]any{"email": "ama@example.com", "amount": "25.00", "currency": "GHS",
		"title": "Invoice", "allowedMethods": []string{"mobile_money"}}, &link); err != nil || st != 201 {
		t.Fatalf("a payment link: %d %v", st, err)
	}
	var page struct {
		Checkout struct {
			AllowedMethods []struct {
				Method string `json:"method"`
			} `json:"allowedMethods"`
			MobileMoneyNetworks []struct {
				Networks []struct {
					Code string `json:"code"`
				} `json:"networks"`
			} `json:"mobileMoneyNetworks"`
			TestMode bool `json:"testMode"`
		} `json:"checkout"`
	}
	if st, err := callWith(client, "", nil, p.addr, "GET", "/v1/checkout/"+link.PaymentLink.ID, nil, &page); err != nil || st != 200 {
		t.Fatalf("the checkout: %d %v", st, err)
	}
	var offered []string
	for _, m := range page.Checkout.AllowedMethods {
		offered = append(offered, m.Method)
	}
	for _, g := range page.Checkout.MobileMoneyNetworks {
		for _, n := range g.Networks {
			offered = append(offered, n.Code)
		}
	}
	if strings.Join(offered, " ") != "mobile_money gh_mtn" || page.Checkout.TestMode {
		t.Errorf("the checkout offers %v (test mode %v), want mobile_money by gh_mtn", offered, page.Checkout.TestMode)
	}

	// Nothing the refusals named was created.
	for _, path := range []string{"/v1/payouts", "/v1/collections", "/v1/orders", "/v1/virtual-accounts"} {
		var list struct {
			Data []any `json:"data"`
		}
		if st, err := liveCall(p.addr, "GET", path, nil, &list); err != nil || st != 200 || len(list.Data) != 0 {
			t.Errorf("GET %s after the refusals: %d %v %d items", path, st, err, len(list.Data))
		}
	}

	// And the checkout moves real money: a session by MTN prompts the
	// payer through MoMo (one request to pay) and the link is paid by the
	// fake's callback.
	var sess struct {
		CheckoutSession struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"checkoutSession"`
	}
	if st, err := liveCall(p.addr, "POST", "/v1/payment-links/"+link.PaymentLink.ID+"/sessions",
		map[string]any{"method": "mobile_money", "code": "gh_mtn", "accountNumber": "233241234567"}, &sess); err != nil || st != 201 || sess.CheckoutSession.Status != "processing" {
		t.Fatalf("a checkout session by MTN: %d %v %+v", st, err, sess)
	}
	waitUntil(t, 20*time.Second, "the link paid through MoMo", func() bool {
		var paid struct {
			Checkout struct {
				PaidAt *string `json:"paidAt"`
			} `json:"checkout"`
		}
		st, err := callWith(client, "", nil, p.addr, "GET", "/v1/checkout/"+link.PaymentLink.ID, nil, &paid)
		return err == nil && st == 200 && paid.Checkout.PaidAt != nil
	})
	if n := fake.Count(momofake.OpRequestToPay); n != 1 {
		t.Errorf("%d requests to pay for one checkout session", n)
	}
}
