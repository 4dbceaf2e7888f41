package app

import (
	"context"
	"errors"
	"strings"
	"time"

	"payments/actors"
	"payments/ledger"
	"payments/rails"
)

// Config wires an App.
type Config struct {
	System    *actors.System
	Catalogue *rails.Catalogue // default: rails.DefaultCatalogue()
	Rates     rails.RateSource // default: the sandbox's, or none on production
	Live      bool             // the production stack
	// NoProvider: a production deployment without provider adapters, on
	// which money movement is refused.
	NoProvider bool
	// CommitTimeout bounds how long a write proposed straight to the log
	// (not through an actor) waits for its commit; default 10s.
	CommitTimeout time.Duration
}

// SandboxSpreadBasisPoints is the spread the sandbox takes on every
// cross-currency rate.
const SandboxSpreadBasisPoints = 100

// App is the application API. Its methods are safe for concurrent use.
type App struct {
	cfg Config
	sys *actors.System
}

// New builds an App.
func New(cfg Config) *App {
	if cfg.Catalogue == nil {
		cfg.Catalogue = rails.DefaultCatalogue()
	}
	if cfg.Rates == nil {
		cfg.Rates = rails.SandboxRates{SpreadBasisPoints: SandboxSpreadBasisPoints}
		if cfg.Live {
			cfg.Rates = rails.NoRates{}
		}
	}
	if cfg.CommitTimeout <= 0 {
		cfg.CommitTimeout = 10 * time.Second
	}
	return &App{cfg: cfg, sys: cfg.System}
}

// Caller is who asks for an operation.
type Caller struct {
	OrgID string
	// Key is the API key the request came with (its spend caps count the
	// operation); nil for the dashboard's members and the hosted checkout.
	Key *ledger.APIKey
	// Member is the dashboard member acting, "" for an API key.
	Member string
	// Attempt names the client's request across relays and re-sends (see
	// actors.PayoutRequest.Attempt); "" for none.
	Attempt string
}

// Catalogue is the catalogue of methods the App prices and checks with.
func (a *App) Catalogue() *rails.Catalogue { return a.cfg.Catalogue }

// Reader is the state as the actors publish it, for the reads the front
// ends make themselves.
func (a *App) Reader() *ledger.Reader { return a.sys.Reader() }

// Now is the leader's clock.
func (a *App) Now() time.Time { return a.sys.Now() }

// Rate is the all-in rate a conversion, cross-currency payout or order
// would apply now: an unsupported currency is the caller's mistake
// (bad_request), an unavailable source is not (rate_unavailable).
func (a *App) Rate(from, to string) (rails.Rate, *ledger.Error) {
	r, err := a.cfg.Rates.Rate(from, to)
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, rails.ErrUnsupportedCurrency):
		return r, &ledger.Error{Code: ledger.CodeBadRequest, Message: "Unsupported currency: " + strings.TrimPrefix(err.Error(), rails.ErrUnsupportedCurrency.Error()+": ")}
	default:
		return r, &ledger.Error{Code: ledger.CodeRateUnavailable, Message: "Exchange rate is temporarily unavailable; nothing was done, retry shortly"}
	}
}

// propose commits a command no actor owns and waits, at most the commit
// timeout, for its result.
func (a *App) propose(cmd ledger.Command) actors.Reply {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.CommitTimeout)
	defer cancel()
	return a.sys.Propose(ctx, cmd)
}
