package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	nethttp "net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"payments/actors"
	"payments/ledger"
	"payments/ledger/instructions"
	"payments/raft"
	"payments/rails/evm"
	"payments/rails/momo"
	"payments/rails/mpesa"
	"payments/rails/provider"
)

// Production providers: the file given with --providers configures the
// provider instances (rails/provider.Config); each instance's adapter is
// built by the factory of its kind, with its secrets read from files or
// the environment (never from the file itself, never logged: a
// provider.Secret prints as [secret]). The sandbox takes no providers file:
// its rails are simulated, and the simulator is never a production
// instance.

// providerFactories are the adapters a providers file may name.
func providerFactories() map[string]provider.Factory {
	return map[string]provider.Factory{
		evm.Kind:   evm.Factory,
		momo.Kind:  momo.Factory,
		mpesa.Kind: mpesa.Factory,
	}
}

// loadProviders reads and builds a providers file.
func loadProviders(path string) (*provider.Registry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--providers: %w", err)
	}
	cfg, err := provider.ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("--providers %s: %w", path, err)
	}
	reg, err := provider.Build(cfg, providerFactories(), os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("--providers %s: %w", path, err)
	}
	return reg, nil
}

// The admin API's treasury endpoints (treasuryRoutes):
//
//	GET  /v1/treasury/floats?provider=&currency=   a float account, as the ledger holds it
//	POST /v1/treasury/fundings                     {"provider","currency","amount","reference"}: record money
//	                                               the operator moved to (amount > 0) or from a provider
type floatJSON struct {
	Provider string `json:"provider"`
	Currency string `json:"currency"`
	Account  string `json:"account"`
	// Held is what the provider holds of ours by the ledger (the float's
	// total negated), in the currency's minor units and as a decimal.
	HeldMinor int64  `json:"heldMinor"`
	Held      string `json:"held"`
	Exponent  int    `json:"exponent"`
}

func treasuryRoutes(mux *nethttp.ServeMux, sys *actors.System, reply func(nethttp.ResponseWriter, int, any), fail func(nethttp.ResponseWriter, error)) {
	mux.HandleFunc("GET /v1/treasury/floats", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		q := r.URL.Query()
		name, cur := q.Get("provider"), q.Get("currency")
		c, ok := ledger.LookupCurrency(cur)
		if name == "" || !ok {
			reply(w, 400, adminError{"validation_error", "provider and a supported currency are required", ""})
			return
		}
		a, _ := instructions.Float(sys.Reader(), name, c.Code)
		held := -a.Total
		reply(w, 200, floatJSON{Provider: name, Currency: c.Code, Account: instructions.FloatAccountNumber(name, c.Code),
			HeldMinor: int64(held), Held: ledger.FormatMinor(held, c), Exponent: c.Decimals})
	})
	mux.HandleFunc("POST /v1/treasury/fundings", func(w nethttp.ResponseWriter, r *nethttp.Request) {
		var body struct {
			Provider  string `json:"provider"`
			Currency  string `json:"currency"`
			Amount    string `json:"amount"`
			Reference string `json:"reference"`
		}
		if err := json.NewDecoder(nethttp.MaxBytesReader(w, r.Body, 4096)).Decode(&body); err != nil {
			reply(w, 400, adminError{"validation_error", "the body must be {\"provider\", \"currency\", \"amount\", \"reference\"}", ""})
			return
		}
		c, ok := ledger.LookupCurrency(body.Currency)
		if !ok {
			reply(w, 400, adminError{"validation_error", "currency is not a supported currency", ""})
			return
		}
		negative := strings.HasPrefix(body.Amount, "-")
		amount, err := ledger.ParseAmount(strings.TrimPrefix(body.Amount, "-"), c)
		if err != nil {
			reply(w, 400, adminError{"validation_error", "amount: " + err.Error(), ""})
			return
		}
		if negative {
			amount = -amount
		}
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		res := sys.Propose(ctx, &instructions.FundFloat{At: sys.Now().UnixMilli(), ID: actors.NewID("ffd_"),
			Provider: body.Provider, Currency: c.Code, Amount: amount, Reference: body.Reference})
		switch {
		case errors.Is(res.Err, actors.ErrNotLeader):
			fail(w, raft.ErrNotLeading)
		case res.Err != nil:
			fail(w, res.Err)
		case res.Result.Err != nil:
			reply(w, 400, adminError{string(res.Result.Err.Code), res.Result.Err.Message, ""})
		default:
			f := instructions.FundingOf(res.Result)
			reply(w, 200, map[string]any{"funding": f.ID, "replayed": res.Result.Replayed, "provider": f.Provider,
				"currency": f.Currency, "amount": ledger.FormatMinor(f.Amount, c), "reference": f.Reference})
		}
	})
}

const reconcileUsage = `Usage:
  payments reconcile --providers <file> --admin-addr host:port,… --admin-token-file <file>
      compare each provider instance's balances (as the provider reports them) with its
      float in the ledger; prints one line per instance and currency, and exits 1 on a
      difference (or when a side cannot be read)
  payments reconcile fund --provider <name> --currency USDC --amount 1000.00 --reference <ref>
                          --admin-addr host:port,… --admin-token-file <file>
      record money the operator moved to a provider (a negative amount: from it), so that
      its float matches
`

// reconcileCommand runs `payments reconcile …` and returns the exit status.
func reconcileCommand(args []string, stdout, stderr io.Writer) int {
	fund := len(args) > 0 && args[0] == "fund"
	if fund {
		args = args[1:]
	}
	fs := flag.NewFlagSet("reconcile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, reconcileUsage) }
	providersFile := fs.String("providers", "", "the providers file the nodes run with")
	addrs, tokenFile := adminClientFlags(fs, "admin API addresses, comma-separated")
	name := fs.String("provider", "", "fund: the instance")
	currency := fs.String("currency", "", "fund: the currency")
	amount := fs.String("amount", "", "fund: the amount, a decimal (negative: money taken from the provider)")
	reference := fs.String("reference", "", "fund: a reference unique to this movement (a retry with it changes nothing)")
	if err := applyEnv(fs); err != nil {
		fmt.Fprintln(stderr, "payments reconcile:", err)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	c := newAdminClient("reconcile", *tokenFile, *addrs, stderr)
	if c == nil {
		return 2
	}
	if fund {
		if *name == "" || *currency == "" || *amount == "" || *reference == "" {
			fmt.Fprint(stderr, reconcileUsage)
			return 2
		}
		if err := c.onLeader(stdout, "POST", "/v1/treasury/fundings", map[string]string{
			"provider": *name, "currency": *currency, "amount": *amount, "reference": *reference}); err != nil {
			fmt.Fprintln(stderr, "payments reconcile fund:", err)
			return 1
		}
		return 0
	}
	if *providersFile == "" {
		fmt.Fprint(stderr, reconcileUsage)
		return 2
	}
	reg, err := loadProviders(*providersFile)
	if err != nil {
		fmt.Fprintln(stderr, "payments reconcile:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	different, err := reconcile(ctx, reg, c, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "payments reconcile:", err)
		return 1
	}
	if different {
		return 1
	}
	return 0
}

// reconcile prints, for each instance that reports balances and each
// currency it reports, what the provider holds and what the ledger says it
// holds; it reports whether any differ.
func reconcile(ctx context.Context, reg *provider.Registry, c *adminClient, stdout io.Writer) (different bool, err error) {
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tCURRENCY\tPROVIDER HOLDS\tLEDGER SAYS\tDIFFERENCE\tACCOUNT")
	var failures []string
	for _, in := range reg.Instances() {
		b, ok := in.Adapter.(provider.Balancer)
		if !ok {
			fmt.Fprintf(tw, "%s\t-\t(the provider reports no balances)\t\t\t\n", in.Name)
			continue
		}
		balances, err := b.Balances(ctx)
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: balances: %v", in.Name, err))
			continue
		}
		// One line per currency: a provider may hold one currency in
		// several accounts (MoMo's collection and disbursement), and the
		// float is the instance's whole holding of it.
		held := map[string]ledger.Minor{}
		accounts := map[string][]string{}
		for _, bal := range balances {
			cur, ok := ledger.LookupCurrency(bal.Currency)
			if !ok {
				failures = append(failures, fmt.Sprintf("%s: %s is not a currency of the ledger", in.Name, bal.Currency))
				continue
			}
			v, ok := minorIn(bal.AmountMinor, bal.Exponent, cur.Decimals)
			if !ok {
				failures = append(failures, fmt.Sprintf("%s: the %s balance does not convert to the ledger's precision", in.Name, bal.Currency))
				continue
			}
			held[cur.Code] += v
			accounts[cur.Code] = append(accounts[cur.Code], bal.Account)
		}
		for _, code := range slices.Sorted(maps.Keys(held)) {
			cur, _ := ledger.LookupCurrency(code)
			theirs := held[code]
			var f floatJSON
			if err := c.eachUntilLeader("GET", "/v1/treasury/floats?provider="+url.QueryEscape(in.Name)+"&currency="+code, nil, &f); err != nil {
				failures = append(failures, fmt.Sprintf("%s: the ledger's %s float: %v", in.Name, code, err))
				continue
			}
			diff := theirs - ledger.Minor(f.HeldMinor)
			mark := "0"
			if diff != 0 {
				different = true
				mark = ledger.FormatMinor(diff, cur)
				if diff > 0 {
					mark = "+" + mark
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", in.Name, code, ledger.FormatMinor(theirs, cur), f.Held, mark, strings.Join(accounts[code], ","))
		}
	}
	tw.Flush()
	if len(failures) > 0 {
		return true, errors.New(strings.Join(failures, "; "))
	}
	return different, nil
}

// minorIn converts minor units of exponent from to exponent to, exactly.
func minorIn(v int64, from, to int) (ledger.Minor, bool) {
	for ; from < to; from++ {
		if v > int64(ledger.AmountMax)/10 || v < -int64(ledger.AmountMax)/10 {
			return 0, false
		}
		v *= 10
	}
	for ; from > to; from-- {
		if v%10 != 0 {
			return 0, false
		}
		v /= 10
	}
	return ledger.Minor(v), true
}

// logProviders says which instances serve what, once at start.
func logProviders(logger *slog.Logger, reg *provider.Registry) {
	for _, in := range reg.Instances() {
		logger.Info("provider instance", "name", in.Name, "kind", in.Kind, "methods", strings.Join(in.Methods(), ","))
	}
}
