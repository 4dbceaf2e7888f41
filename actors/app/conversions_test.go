package app_test

import (
	"testing"

	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/conversions"
)

// A quote is priced at the current rate, the side left out computed so
// that the house never gives more than the rate; executing it converts,
// once.
func TestQuoteAndConvert(t *testing.T) {
	h := startMoney(t, app.Config{})
	h.rates.set("GHS", "NGN", "99.5")
	h.rates.set("NGN", "GHS", "0.001")
	tests := []struct {
		name     string
		in       app.QuoteInput
		from, to ledger.Minor
		code     ledger.Code
		message  string
	}{
		{name: "from side: the bought amount rounds down", in: app.QuoteInput{FromCurrency: "GHS", ToCurrency: "NGN", Side: ledger.SideFrom, Amount: 1_001},
			from: 1_001, to: 99_599},
		{name: "to side: the sold amount rounds up", in: app.QuoteInput{FromCurrency: "GHS", ToCurrency: "NGN", Side: ledger.SideTo, Amount: 99_599},
			from: 1_001, to: 99_599},
		{name: "buys nothing", in: app.QuoteInput{FromCurrency: "NGN", ToCurrency: "GHS", Side: ledger.SideFrom, Amount: 100},
			code: ledger.CodeValidation, message: "Request validation failed: from.amount is too small: at the rate 0.001 it buys less than the smallest unit of GHS"},
		{name: "no rate right now", in: app.QuoteInput{FromCurrency: "GHS", ToCurrency: "KES", Side: ledger.SideFrom, Amount: 100},
			code: ledger.CodeRateUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.app.CreateQuote(h.caller(""), tt.in)
			if tt.code != "" {
				refusedWith(t, r, tt.code, tt.message)
				return
			}
			if r.Err != nil || r.Result.Err != nil {
				t.Fatalf("refused: %v %v", r.Err, r.Result.Err)
			}
			if q := conversions.QuoteOf(r.Result); q.FromAmount != tt.from || q.ToAmount != tt.to || q.Rate != "99.5" {
				t.Fatalf("quote %d → %d at %s, want %d → %d at 99.5", q.FromAmount, q.ToAmount, q.Rate, tt.from, tt.to)
			}
		})
	}

	h.fund("GHS", 100_000)
	q := h.app.CreateQuote(h.caller(""), app.QuoteInput{FromCurrency: "GHS", ToCurrency: "NGN", Side: ledger.SideFrom, Amount: 10_000})
	if q.Err != nil || q.Result.Err != nil {
		t.Fatalf("quote: %v %v", q.Err, q.Result.Err)
	}
	first := h.app.ExecuteConversion(h.caller("x1"), conversions.QuoteOf(q.Result).ID, "conv-1")
	if first.Err != nil || first.Result.Err != nil || conversions.Of(first.Result).ToAmount != 995_000 {
		t.Fatalf("execute: %v %+v", first.Err, first.Result)
	}
	again := h.app.ExecuteConversion(h.caller("x2"), conversions.QuoteOf(q.Result).ID, "conv-1")
	if again.Result.Err != nil || !again.Result.Replayed || conversions.Of(again.Result).ID != conversions.Of(first.Result).ID {
		t.Fatalf("retry: %+v, want a replay of the conversion", again.Result)
	}
	if got := h.available("GHS"); got != 90_000 {
		t.Fatalf("GHS available %d after converting 100.00 once, want 900.00", got)
	}
}
