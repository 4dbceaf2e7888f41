package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Setup talks to the server before the measured phase: it creates
// organizations and keys, funds balances, creates the payouts a replay
// re-sends, and gives the noisy neighbour its history. It is not measured, but it is bounded: every call has a timeout,
// at most setupConcurrency calls are in flight, a rate-limited call is
// retried at most setupRetriesMax times, and the whole setup runs under
// Config.SetupTimeout.

// Limits of setup.
const (
	setupConcurrency  = 32                    // calls in flight at once
	setupRetriesMax   = 50                    // retries of a call answered 429
	setupRetryDelay   = 20 * time.Millisecond // first wait after a 429; grows linearly
	setupCallTimeout  = 15 * time.Second      // one call, queueing for a connection included
	setupBodyBytesMax = 16 << 20              // a response body setup reads: an export of 10,000 rows is about 2 MB
	// keyFanout is how many keys one key creates in a round of growKeys:
	// well under the per-key rate limit, so a key used in two rounds stays
	// under it too.
	keyFanout = 40
)

// setup is a client for the calls that prepare a workload. It is safe for
// concurrent use.
type setup struct {
	base string // http://host:port
	hc   *fasthttp.HostClient
	sem  chan struct{} // one token per call in flight
	// keyLimit is the ratelimit-limit the server last announced: requests
	// per second allowed per key. Zero until a response carried it.
	keyLimit atomic.Int64

	orgsMu  sync.Mutex
	orgsOut io.Writer // Config.OrgsOut
}

func newSetup(addr string) *setup {
	return &setup{
		base: "http://" + addr,
		hc: &fasthttp.HostClient{
			Addr:                      addr,
			Name:                      "paybench-setup",
			MaxConns:                  setupConcurrency,
			ReadTimeout:               setupCallTimeout,
			WriteTimeout:              setupCallTimeout,
			MaxConnWaitTimeout:        setupCallTimeout,
			MaxResponseBodySize:       setupBodyBytesMax,
			MaxIdemponentCallAttempts: 1,
		},
		sem: make(chan struct{}, setupConcurrency),
	}
}

func (s *setup) close() { s.hc.CloseIdleConnections() }

// post sends body (bytes sent as they are, anything else encoded as JSON) to
// path with key and decodes the response into out when its status is want.
// A 429 is retried after a short wait; any other status than want is an
// error quoting the response.
func (s *setup) post(ctx context.Context, key, path string, body any, want int, out any) error {
	raw, ok := body.([]byte)
	if !ok {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return fmt.Errorf("POST %s: %w", path, err)
		}
	}
	return s.expect(ctx, fasthttp.MethodPost, key, path, raw, want, out)
}

// get reads path with key and decodes the response into out when its
// status is want, retrying a 429 like post.
func (s *setup) get(ctx context.Context, key, path string, want int, out any) error {
	return s.expect(ctx, fasthttp.MethodGet, key, path, nil, want, out)
}

// expect makes a call and checks its status: want, or an error quoting the
// response. It decodes a JSON response into out unless out is nil.
func (s *setup) expect(ctx context.Context, method, key, path string, body []byte, want int, out any) error {
	code, resp, err := s.call(ctx, method, key, path, body)
	if err != nil {
		return err
	}
	if code != want {
		return fmt.Errorf("%s %s: got %d, want %d: %s", method, path, code, want, truncate(resp, 300))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp, out); err != nil {
		return fmt.Errorf("%s %s: decode %d response: %w", method, path, code, err)
	}
	return nil
}

// call sends method to path with key and body (nil for none), retries a
// 429 at most setupRetriesMax times after a growing wait, and returns the
// final status and a copy of the response body. An error means no usable
// answer: a transport error, or ctx ended.
func (s *setup) call(ctx context.Context, method, key, path string, body []byte) (int, []byte, error) {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, ctx.Err())
	}
	defer func() { <-s.sem }()

	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(s.base + path)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.SetContentType("application/json")
		req.SetBodyRaw(body)
	}

	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		if err := s.hc.DoTimeout(req, resp, setupCallTimeout); err != nil {
			return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		if v, err := strconv.Atoi(string(resp.Header.Peek("ratelimit-limit"))); err == nil && v > 0 {
			s.keyLimit.Store(int64(v))
		}
		code := resp.StatusCode()
		if code != fasthttp.StatusTooManyRequests || attempt >= setupRetriesMax {
			return code, append([]byte(nil), resp.Body()...), nil
		}
		select {
		case <-time.After(time.Duration(attempt+1) * setupRetryDelay):
		case <-ctx.Done():
			return 0, nil, fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		}
	}
}

// org is an organization setup created, with the secrets of its keys.
type org struct {
	id   string
	keys []string // keys[0] is the organization's first key
}

// createOrg creates an organization with the bootstrap key.
func (s *setup) createOrg(ctx context.Context, bootstrapKey, name string) (*org, error) {
	var out struct {
		Organization struct {
			ID string `json:"id"`
		} `json:"organization"`
		Key struct {
			Secret string `json:"secret"`
		} `json:"key"`
	}
	body := map[string]string{"name": name, "country": "GH"}
	if err := s.post(ctx, bootstrapKey, "/v1/organizations", body, fasthttp.StatusCreated, &out); err != nil {
		return nil, err
	}
	if out.Organization.ID == "" || out.Key.Secret == "" {
		return nil, fmt.Errorf("POST /v1/organizations: response without an organization id or key secret")
	}
	return &org{id: out.Organization.ID, keys: []string{out.Key.Secret}}, nil
}

// growKeys creates keys for o until it has n. Each round, every key o
// already has creates at most keyFanout more, so the keys grow
// geometrically and no key nears its rate limit.
func (s *setup) growKeys(ctx context.Context, o *org, n int) error {
	for round := 0; len(o.keys) < n; round++ {
		have := len(o.keys)
		batch := min(n-have, have*keyFanout)
		created := make([]string, batch)
		err := parallel(ctx, batch, func(ctx context.Context, i int) error {
			var out struct {
				Key struct {
					Secret string `json:"secret"`
				} `json:"key"`
			}
			body := map[string]string{"name": "bench-" + strconv.Itoa(have+i)}
			if err := s.post(ctx, o.keys[i%have], "/v1/keys", body, fasthttp.StatusCreated, &out); err != nil {
				return err
			}
			if out.Key.Secret == "" {
				return fmt.Errorf("POST /v1/keys: response without a key secret")
			}
			created[i] = out.Key.Secret
			return nil
		})
		if err != nil {
			return fmt.Errorf("organization %s: %w", o.id, err)
		}
		o.keys = append(o.keys, created...)
	}
	return nil
}

// fund credits o's balance in currency with amount (a decimal string).
func (s *setup) fund(ctx context.Context, o *org, amount, currency, reference string) error {
	body := map[string]string{"amount": amount, "currency": currency, "externalReference": reference}
	if err := s.post(ctx, o.keys[0], "/v1/simulations/fund-balance", body, fasthttp.StatusCreated, nil); err != nil {
		return fmt.Errorf("organization %s: %w", o.id, err)
	}
	return nil
}

// createOrgs creates n organizations, each funded with amount GHS and
// holding keysPerOrg keys, in parallel.
func (s *setup) createOrgs(ctx context.Context, bootstrapKey, runID string, n, keysPerOrg int, amount string) ([]*org, error) {
	orgs := make([]*org, n)
	err := parallel(ctx, n, func(ctx context.Context, i int) error {
		o, err := s.createOrg(ctx, bootstrapKey, fmt.Sprintf("Bench %s org %d", runID, i+1))
		if err != nil {
			return err
		}
		if err := s.fund(ctx, o, amount, "GHS", "seed-"+runID+"-"+strconv.Itoa(i)); err != nil {
			return err
		}
		if err := s.growKeys(ctx, o, keysPerOrg); err != nil {
			return err
		}
		orgs[i] = o
		if s.orgsOut != nil {
			s.orgsMu.Lock()
			_, err = fmt.Fprintf(s.orgsOut, "%s %s\n", o.id, o.keys[0])
			s.orgsMu.Unlock()
		}
		return err
	})
	return orgs, err
}

// parallel runs fn(ctx, i) for i in [0, n) on n goroutines (setup's
// semaphore bounds the calls they make) and returns the first error; the
// context passed to fn is cancelled on it.
func parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	return parallelN(ctx, n, n, fn)
}

// parallelN is parallel on at most workers goroutines, which take the
// indices in turn: for n far above setupConcurrency, where a goroutine per
// index would only wait on the semaphore. After an error no further index
// is started.
func parallelN(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, workers) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// truncate returns b as a string of at most n bytes.
func truncate(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
