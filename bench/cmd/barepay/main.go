// Command barepay is the bare server make bench measures the service
// against: fasthttp, its router and go-json doing what POST /v1/payouts
// does at the edge — parse the body, turn the amount into minor units with
// apd, encode a payout-shaped answer — and nothing behind it (no key
// lookup, no ledger, no log). Its throughput is the ceiling the service's
// is a share of.
//
// It takes `payments serve`'s command line, so paybench spawns it as it
// spawns the service: it listens on --http-addr, prints http_addr=, answers
// /readyz, and answers the set-up calls paybench makes (organizations,
// keys, fundings) with made-up ids. A reference seen before is answered
// 200, as the service replays it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/apd/v3"
	"github.com/fasthttp/router"
	"github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

type payoutBody struct {
	To struct {
		Code          string          `json:"code"`
		Currency      string          `json:"currency"`
		AccountNumber string          `json:"accountNumber"`
		Amount        json.RawMessage `json:"amount"`
	} `json:"to"`
	ExternalReference string `json:"externalReference"`
}

type side struct {
	AccountNumber string `json:"accountNumber,omitempty"`
	Code          string `json:"code,omitempty"`
	Amount        string `json:"amount"`
	Currency      string `json:"currency"`
}

type payout struct {
	ID                string `json:"id"`
	Status            string `json:"status"`
	From              side   `json:"from"`
	To                side   `json:"to"`
	Fee               side   `json:"fee"`
	ExternalReference string `json:"externalReference"`
	CreatedAt         string `json:"createdAt"`
	UpdatedAt         string `json:"updatedAt"`
}

var (
	seq  atomic.Uint64
	seen sync.Map // externalReference → its payout, for replays
	cur  = apd.BaseContext.WithPrecision(34)
)

func main() {
	fs := flag.NewFlagSet("barepay", flag.ExitOnError)
	addr := fs.String("http-addr", "127.0.0.1:0", "")
	fs.String("data-dir", "", "")
	fs.String("raft-addr", "", "")
	fs.String("bootstrap-key", "", "")
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	}
	fs.Parse(onlyKnown(fs, args))

	srv := &fasthttp.Server{Handler: routes().Handler, Name: "barepay"}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "barepay:", err)
		os.Exit(1)
	}
	fmt.Printf("http_addr=%s\n", l.Addr())
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		srv.Shutdown()
	}()
	if err := srv.Serve(l); err != nil {
		fmt.Fprintln(os.Stderr, "barepay:", err)
		os.Exit(1)
	}
}

// routes are the bare server's: the payout and what paybench's set-up
// calls.
func routes() *router.Router {
	r := router.New()
	r.GET("/readyz", func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(200) })
	r.POST("/v1/organizations", func(ctx *fasthttp.RequestCtx) {
		n := strconv.FormatUint(seq.Add(1), 10)
		reply(ctx, 201, map[string]any{"organization": map[string]string{"id": "org_" + n}, "key": map[string]string{"secret": "sk_test_bare" + n}})
	})
	r.POST("/v1/keys", func(ctx *fasthttp.RequestCtx) {
		reply(ctx, 201, map[string]any{"key": map[string]string{"secret": "sk_test_bare" + strconv.FormatUint(seq.Add(1), 10)}})
	})
	r.POST("/v1/simulations/fund-balance", func(ctx *fasthttp.RequestCtx) { reply(ctx, 201, map[string]any{}) })
	r.POST("/v1/payouts", createPayout)

	return r
}

func createPayout(ctx *fasthttp.RequestCtx) {
	if len(ctx.Request.Header.Peek("Authorization")) == 0 {
		reply(ctx, 401, map[string]string{"error": "unauthorized"})
		return
	}
	var in payoutBody
	if err := json.Unmarshal(ctx.PostBody(), &in); err != nil {
		reply(ctx, 400, map[string]string{"error": "validation_error", "message": err.Error()})
		return
	}
	minor, err := amountMinor(in.To.Amount, 2)
	if err != nil || in.To.Code == "" || in.To.AccountNumber == "" || in.ExternalReference == "" {
		reply(ctx, 400, map[string]string{"error": "validation_error"})
		return
	}
	if p, ok := seen.Load(in.ExternalReference); ok {
		reply(ctx, 200, map[string]any{"payout": p})
		return
	}
	fee := minor / 100
	p := &payout{
		ID: "pay_ghs_" + strconv.FormatUint(seq.Add(1), 36), Status: "pending",
		From: side{AccountNumber: "GHS00000001", Amount: format(minor + fee), Currency: in.To.Currency},
		To:   side{AccountNumber: in.To.AccountNumber, Code: in.To.Code, Amount: format(minor), Currency: in.To.Currency},
		Fee:  side{Amount: format(fee), Currency: in.To.Currency}, ExternalReference: in.ExternalReference,
		CreatedAt: "2026-11-26T00:00:00.000Z", UpdatedAt: "2026-11-26T00:00:00.000Z",
	}
	seen.Store(in.ExternalReference, p)
	reply(ctx, 201, map[string]any{"payout": p})
}

// amountMinor parses an amount given as a JSON number or string into
// minor units of a currency with exponent decimal places.
func amountMinor(raw json.RawMessage, exponent int32) (int64, error) {
	s := string(raw)
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	var d apd.Decimal
	if _, _, err := d.SetString(s); err != nil {
		return 0, err
	}
	if d.Negative {
		return 0, errors.New("a negative amount")
	}
	d.Exponent += exponent
	var minor apd.Decimal
	if _, err := cur.Quantize(&minor, &d, 0); err != nil {
		return 0, err
	}
	if minor.Cmp(&d) != 0 {
		return 0, errors.New("more decimal places than the currency has")
	}
	return minor.Int64()
}

func format(minor int64) string {
	return strconv.FormatInt(minor/100, 10) + "." + fmt.Sprintf("%02d", minor%100)
}

func reply(ctx *fasthttp.RequestCtx, status int, v any) {
	b, _ := json.Marshal(v)
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// onlyKnown drops the flags of `payments serve` this server does not
// take (and their values), so that paybench's -server-args pass through.
func onlyKnown(fs *flag.FlagSet, args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		name, _, withValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		takesNext := !withValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-")
		if fs.Lookup(name) != nil {
			out = append(out, args[i])
			if takesNext {
				out = append(out, args[i+1])
			}
		}
		if takesNext {
			i++
		}
	}
	return out
}
