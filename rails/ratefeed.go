package rails

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/apd/v3"

	"payments/ledger"
)

// FeedRates is production's rate source: mid-market rates fetched from a
// configured HTTP feed, with the house's spread taken as the sandbox takes
// it. A rate older than the staleness limit is never served: past it every
// cross-currency pair answers ErrRateUnavailable (503 rate_unavailable),
// so no stale price, and no sandbox one, ever reaches a production quote.
//
// The feed is a JSON document giving units of each currency per one unit
// of the base currency, and when they were observed:
//
//	{"base": "USD", "asOf": "2026-11-26T10:00:00Z", "rates": {"GHS": "15.6", "EUR": "0.92"}}
//
// Rates are decimal strings (a JSON number is refused: no float reaches a
// price). The feed is fetched every Interval by Run, and once on demand
// when nothing fresh is held.
type FeedRates struct {
	URL               string
	Interval          time.Duration // how often Run fetches; default 30s
	Staleness         time.Duration // the oldest asOf served; default 2m
	SpreadBasisPoints int64
	Client            *http.Client // default: 10s timeout
	Now               func() time.Time

	mu      sync.Mutex
	base    string
	mids    map[string]apd.Decimal // units per one unit of base
	asOf    time.Time
	lastErr error
	fetchMu sync.Mutex // one fetch at a time
}

// ErrRatesStale: the feed's newest rates are older than the staleness
// limit (or none were ever fetched).
var ErrRatesStale = fmt.Errorf("%w: the rate feed is stale", ErrRateUnavailable)

// feedDocument is the feed's JSON.
type feedDocument struct {
	Base  string                     `json:"base"`
	AsOf  time.Time                  `json:"asOf"`
	Rates map[string]json.RawMessage `json:"rates"`
}

// feedBytesMax bounds a feed document.
const feedBytesMax = 1 << 20

func (f *FeedRates) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func (f *FeedRates) staleness() time.Duration {
	if f.Staleness > 0 {
		return f.Staleness
	}
	return 2 * time.Minute
}

// Run fetches the feed every Interval until ctx ends.
func (f *FeedRates) Run(ctx context.Context) {
	interval := f.Interval
	if interval <= 0 {
		interval = 30 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		f.Fetch(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Fetch reads the feed once and keeps its rates if they are newer than
// those held.
func (f *FeedRates) Fetch(ctx context.Context) error {
	f.fetchMu.Lock()
	defer f.fetchMu.Unlock()
	err := f.fetch(ctx)
	f.mu.Lock()
	f.lastErr = err
	f.mu.Unlock()
	return err
}

func (f *FeedRates) fetch(ctx context.Context) error {
	client := f.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.URL, nil)
	if err != nil {
		return fmt.Errorf("rails: rate feed: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("rails: rate feed: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("rails: rate feed answered %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, feedBytesMax+1))
	if err != nil {
		return fmt.Errorf("rails: rate feed: %w", err)
	}
	if len(body) > feedBytesMax {
		return errors.New("rails: rate feed document is too large")
	}
	base, mids, asOf, err := parseFeed(body)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if asOf.After(f.asOf) {
		f.base, f.mids, f.asOf = base, mids, asOf
	}
	return nil
}

// parseFeed reads a feed document: every rate a positive decimal string of
// a currency the ledger holds, the base among them at 1.
func parseFeed(body []byte) (base string, mids map[string]apd.Decimal, asOf time.Time, err error) {
	var doc feedDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		return "", nil, time.Time{}, fmt.Errorf("rails: rate feed: %w", err)
	}
	if _, ok := ledger.LookupCurrency(doc.Base); !ok {
		return "", nil, time.Time{}, fmt.Errorf("rails: rate feed: unknown base currency %q", doc.Base)
	}
	if doc.AsOf.IsZero() {
		return "", nil, time.Time{}, errors.New("rails: rate feed: asOf is required")
	}
	mids = map[string]apd.Decimal{}
	for cur, raw := range doc.Rates {
		if _, ok := ledger.LookupCurrency(cur); !ok {
			continue // a currency the ledger does not hold is not priced
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", nil, time.Time{}, fmt.Errorf("rails: rate feed: %s: rates are decimal strings", cur)
		}
		var d apd.Decimal
		if _, _, err := d.SetString(s); err != nil || d.Form != apd.Finite || d.Sign() <= 0 {
			return "", nil, time.Time{}, fmt.Errorf("rails: rate feed: %s: %q is not a positive decimal", cur, s)
		}
		mids[cur] = d
	}
	var one apd.Decimal
	one.SetInt64(1)
	mids[doc.Base] = one
	return doc.Base, mids, doc.AsOf, nil
}

// Rate implements RateSource: mid(to)/mid(from) less the spread, rounded
// down to RateSignificantDigits, from rates no older than the staleness
// limit.
func (f *FeedRates) Rate(from, to string) (Rate, error) {
	if _, ok := ledger.LookupCurrency(from); !ok {
		return Rate{}, fmt.Errorf("%w: %s", ErrUnsupportedCurrency, from)
	}
	if _, ok := ledger.LookupCurrency(to); !ok {
		return Rate{}, fmt.Errorf("%w: %s", ErrUnsupportedCurrency, to)
	}
	out := Rate{From: from, To: to}
	if from == to {
		out.Value.SetInt64(1)
		return out, nil
	}
	if !f.fresh() {
		// Nothing fresh held: one fetch on demand (the feed may have
		// recovered since the last tick).
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		f.Fetch(ctx)
		cancel()
		if !f.fresh() {
			return Rate{}, ErrRatesStale
		}
	}
	f.mu.Lock()
	mf, ok1 := f.mids[from]
	mt, ok2 := f.mids[to]
	f.mu.Unlock()
	if !ok1 || !ok2 {
		return Rate{}, fmt.Errorf("%w: the rate feed does not price %s", ErrRateUnavailable, missing(ok1, from, to))
	}
	crossRate(&out.Value, &mf, &mt, f.SpreadBasisPoints)
	return out, nil
}

func missing(fromOK bool, from, to string) string {
	if fromOK {
		return to
	}
	return from
}

func (f *FeedRates) fresh() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mids != nil && f.now().Sub(f.asOf) <= f.staleness()
}

// Status says what the feed holds, for operators: when its rates were
// observed, which currencies it prices, and its last error.
func (f *FeedRates) Status() (asOf time.Time, currencies []string, lastErr error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.mids {
		currencies = append(currencies, c)
	}
	sort.Strings(currencies)
	return f.asOf, currencies, f.lastErr
}

// String names the source without its URL's secrets (a query's key).
func (f *FeedRates) String() string {
	u, _, _ := strings.Cut(f.URL, "?")
	return "rate feed " + u
}
