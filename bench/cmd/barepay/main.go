// Command barepay is the bare server that `make bench` measures the service
// against: fasthttp, its router, goccy/go-json and apd doing a payout's
// parsing and encoding and nothing else (no authentication, no Raft, no
// ledger, no request log). Its throughput is the ceiling the HTTP stack
// allows on a machine; the service's req/s over it is the ratio the
// throughput issue sets a target for (≥ 35 % on 2 cores).
//
// It takes `payments serve`'s flags (so paybench's -spawn starts it the same
// way), uses only --http-addr, prints http_addr= and answers just what
// paybench's workloads send: setup's organizations, keys and funding, and
// POST /v1/payouts with 201 for a new reference and 200 for one it has
// seen (the replay workload). Not for production: it keeps every reference
// in memory, up to referencesMax.
package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/fasthttp/router"
	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"
)

const referencesMax = 20_000_000 // references remembered for replays

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "serve" {
		args = args[1:]
	}
	addr := "127.0.0.1:8080"
	for i := 0; i+1 < len(args); i++ { // --name value pairs; all but --http-addr ignored
		if args[i] == "--http-addr" || args[i] == "-http-addr" {
			addr = args[i+1]
		}
	}
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		fmt.Fprintln(stderr, "barepay:", err)
		return 2
	}
	srv := newServer()
	fmt.Fprintf(stdout, "http_addr=%s\n", ln.Addr())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() { <-sig; srv.Shutdown() }()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, net.ErrClosed) {
		fmt.Fprintln(stderr, "barepay:", err)
		return 1
	}
	return 0
}

func newServer() *fasthttp.Server {
	b := &bare{}
	r := router.New()
	r.RedirectTrailingSlash, r.RedirectFixedPath = false, false
	r.GET("/readyz", func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(200) })
	r.POST("/v1/payouts", b.payout)
	r.POST("/v1/organizations", b.created(`{"organization":{"id":"org_bare%[1]d"},"key":{"secret":"sk_test_bare%[1]d"}}`))
	r.POST("/v1/keys", b.created(`{"key":{"secret":"sk_test_bare%[1]d"}}`))
	r.POST("/v1/simulations/fund-balance", b.created(`{"id":"fund_%[1]d"}`))
	return &fasthttp.Server{Handler: r.Handler, Name: "barepay", ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute, MaxRequestBodySize: 1 << 20}
}

type bare struct {
	seq  atomic.Int64
	refs sync.Map // externalReference → struct{}
	n    atomic.Int64
}

func (b *bare) created(format string) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		n := b.seq.Add(1)
		ctx.SetStatusCode(201)
		ctx.SetContentType("application/json")
		fmt.Fprintf(ctx, format, n)
	}
}

type payoutIn struct {
	To struct {
		Code          string `json:"code"`
		Currency      string `json:"currency"`
		AccountNumber string `json:"accountNumber"`
		Amount        string `json:"amount"`
	} `json:"to"`
	ExternalReference string `json:"externalReference"`
}

type side struct {
	AccountNumber *string `json:"accountNumber,omitempty"`
	Code          string  `json:"code,omitempty"`
	Amount        string  `json:"amount"`
	Currency      string  `json:"currency"`
}

type payoutOut struct {
	Payout struct {
		ID                string `json:"id"`
		Status            string `json:"status"`
		From              side   `json:"from"`
		To                side   `json:"to"`
		Fee               side   `json:"fee"`
		ExternalReference string `json:"externalReference"`
		CreatedAt         string `json:"createdAt"`
		UpdatedAt         string `json:"updatedAt"`
	} `json:"payout"`
}

// payout decodes the body, converts the amount to minor units with apd (two
// decimal places, as GHS), and answers a payout-shaped body: 201 for a new
// reference, 200 for one seen before.
func (b *bare) payout(ctx *fasthttp.RequestCtx) {
	var in payoutIn
	if err := json.Unmarshal(ctx.PostBody(), &in); err != nil {
		ctx.Error(`{"error":{"code":"invalid_request"}}`, 400)
		return
	}
	minor, ok := minorUnits(in.To.Amount)
	if !ok || in.ExternalReference == "" {
		ctx.Error(`{"error":{"code":"invalid_amount"}}`, 400)
		return
	}
	status := 201
	if _, seen := b.refs.LoadOrStore(in.ExternalReference, struct{}{}); seen {
		status = 200
	} else if b.n.Add(1) > referencesMax {
		b.refs.Delete(in.ExternalReference)
		b.n.Add(-1)
	}
	fee := minor / 100
	var out payoutOut
	p := &out.Payout
	p.ID = "po_" + strconv.FormatInt(b.seq.Add(1), 36)
	p.Status = "pending"
	acct := "233241234567"
	p.From = side{Amount: text(minor + fee), Currency: in.To.Currency}
	p.To = side{AccountNumber: &acct, Code: in.To.Code, Amount: text(minor), Currency: in.To.Currency}
	p.Fee = side{Amount: text(fee), Currency: in.To.Currency}
	p.ExternalReference = in.ExternalReference
	p.CreatedAt = time.Now().UTC().Format(time.RFC3339Nano)
	p.UpdatedAt = p.CreatedAt
	body, err := json.Marshal(&out)
	if err != nil {
		ctx.Error(err.Error(), 500)
		return
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}

var decCtx = func() *apd.Context {
	c := apd.BaseContext.WithPrecision(34)
	c.Traps = apd.DefaultTraps | apd.Inexact | apd.Rounded
	return c
}()

// minorUnits parses a decimal amount with at most two places into minor
// units, as the service's money type does.
func minorUnits(s string) (int64, bool) {
	var d apd.Decimal
	if _, _, err := d.SetString(s); err != nil || d.Form != apd.Finite || d.Negative || d.Exponent < -2 {
		return 0, false
	}
	var q apd.Decimal
	if _, err := decCtx.Quantize(&q, &d, -2); err != nil {
		return 0, false
	}
	if !q.Coeff.IsInt64() {
		return 0, false
	}
	return q.Coeff.Int64(), true
}

// text prints minor units with two decimal places.
func text(minor int64) string {
	var d apd.Decimal
	d.SetFinite(minor, -2)
	return d.Text('f')
}
