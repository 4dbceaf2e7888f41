package core

import (
	"context"
	"errors"
	"fmt"
	"github.com/fasthttp/router"
	"log/slog"
	"net"
	"net/netip"
	"payments/raft/rounds"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"payments/actors"
	"payments/actors/app"
	"payments/http/blob"
	"payments/http/logscrub"
	"payments/http/metrics"
	"payments/http/redact"
	"payments/ledger"
	"payments/ledger/publicids"
	"payments/rails"
)

// Versions the API accepts in the service-version header; the first is the
// current one, used when a request sends none.
var apiVersions = []string{"2026-02-20"}

// Cluster is what the front end needs to know of the Raft node.
type Cluster interface {
	ID() string
	IsLeader() bool // leads and has caught up: may take writes
	Ready() bool    // a leader is known and this node caught up
	Leader() (id string, ok bool)
	// ConfirmLeader returns nil when this node still leads, confirmed by a
	// quorum after the call, with every acknowledged write in its state:
	// what it reads then is current.
	ConfirmLeader(ctx context.Context) error
	// LeaderChange is closed at the next change of leader or role.
	LeaderChange() <-chan struct{}
	// ReadIndex, on the leader, returns its commit index once a quorum
	// confirmed it still leads: every entry committed before the call is
	// at or below it.
	ReadIndex(ctx context.Context) (uint64, error)
	// WaitApplied waits until this node's readers see every entry up to
	// index.
	WaitApplied(ctx context.Context, index uint64) error
	// CatchUp is the index this node's readers see and the leader's
	// commit index as this node last heard it, for /readyz.
	CatchUp() (visible, leaderCommit uint64)
}

// App is the application API the handlers call (package actors/app): they
// translate a request into an operation and its result or error into a
// response, and decide nothing themselves. Each feature declares what it
// calls, in its own file.
type App interface {
	moneyOps
	linkOps
	adminOps
}

// Config configures a Server.
type Config struct {
	Live   bool // production stack: sk_live_ keys, no simulations
	Actors *actors.System
	// App is the application API; by default one built on Actors,
	// Catalogue and Rates.
	App       App
	Cluster   Cluster
	Catalogue *rails.Catalogue
	Logger    *slog.Logger

	// PeerHTTP maps node ids to their HTTP host:port, so a follower can
	// forward requests to the leader. Empty for a single node.
	PeerHTTP map[string]string

	// NoProvider is set on a production deployment without provider
	// adapters: creating payouts and collections answers 503.
	NoProvider bool

	// Rates prices currency pairs: the sandbox table by default, and no
	// source (503 rate_unavailable) on production until one is connected.
	Rates rails.RateSource

	// PublicBaseURL is the scheme and host (and port) clients reach this
	// API at, such as https://api.example.com: the base of the download
	// links the API hands out. Never taken from a request's Host header,
	// which the caller chooses. Empty: http://<the listener's address>.
	PublicBaseURL string

	// CheckoutURL is the base of payment links' and pages' hosted checkout
	// addresses ({checkout_url}/<id>); one per process.
	CheckoutURL string

	// Names resolves account holder names (package money); by default the
	// sandbox's, or none when NoProvider is set.
	Names NameResolver

	// FilesDir is the node's blob store of uploaded files (package blob),
	// under its data directory. Empty: uploads and downloads answer 503.
	FilesDir string

	// DashboardIdleTimeout ends a dashboard session unused for this long
	// (dashboard_idle.go); 0: DashboardIdleTimeoutDefault; negative: never.
	DashboardIdleTimeout time.Duration

	// SandboxSettlement is how long the sandbox takes to confirm a deposit
	// the hosted checkout's test mode simulates (app.Config's, for the App
	// built by default); default app.SandboxSettlementDefault.
	SandboxSettlement time.Duration

	// RequestLog is where this node keeps its request log; nil: requests
	// are not recorded and /v1/requests answers 503.
	RequestLog RequestStore
	// RequestLogQueue bounds the records waiting for the recorder; a full
	// queue drops them. Default 8192.
	RequestLogQueue int
	// BodyBytesInFlightMax bounds the bytes of request bodies being read
	// or held at once, over all requests (body.go); default 256 MiB.
	BodyBytesInFlightMax int64
	// ConnsPerIPMax bounds the open connections from one client address
	// (connlimit.go); the cluster's peers are exempt. Default 256; -1: no
	// limit.
	ConnsPerIPMax int

	// Metrics, if set, counts requests by route template and status, and
	// error answers by code (see package metrics).
	Metrics *metrics.Requests

	// TrustedProxies are the senders whose X-Forwarded-For is believed
	// (--trusted-proxies): a load balancer in front of the nodes.
	TrustedProxies []netip.Prefix

	// ReadTimeout bounds reading a request, and a new connection's wait
	// for its first; IdleTimeout a kept-alive connection's wait for its
	// next. Defaults 10s and 60s.
	ReadTimeout, IdleTimeout time.Duration

	RateLimitPerSecond int           // per API key; default 100
	CommitTimeout      time.Duration // how long an administrative write waits for its commit; default 10s
}

// Limits of the HTTP front end.
const (
	JSONBodyBytesMax = 64 << 10 // a JSON request body
	// serverBodyBytesMax is what the server reads of a body at all. Bodies
	// up to it are read and refused by the handler with a clean 400; past
	// it the handler answers 400 unread and the connection is closed
	// lingering (linger.go), so that a client still sending reads it.
	ServerBodyBytesMax = 4 << 20
	readTimeout        = 10 * time.Second
	writeTimeout       = 10 * time.Second
	idleTimeout        = 60 * time.Second
	forwardTimeout     = 15 * time.Second
	defaultCommitWait  = 10 * time.Second
	defaultRatePerKey  = 100
	concurrencyMax     = 64 << 10
)

// Server is the REST front end: fasthttp and a router, authentication, rate
// limits, the error envelope, and forwarding from followers to the leader.
type Server struct {
	Config  Config
	srv     *fasthttp.Server
	router  *router.Router
	Limiter *rateLimiter
	Logger  *slog.Logger

	forwardMu  sync.Mutex
	forwarders map[string]*fasthttp.HostClient
	// readIndexRounds shares a follower's rounds to the leader for its
	// read index (readindex.go).
	readIndexRounds rounds.Rounds[uint64]
	// forwardFailLog throttles the warning for requests the leader did not
	// answer: one line a second, with the count held back.
	forwardFailLog logThrottle

	scopes map[string]ledger.Scopes // "METHOD /path" → the scope the route needs

	Endpoints []Endpoint // every API route, in registration order (simindex.go)

	Blobs *blob.Store // uploaded files' bytes; nil without Config.FilesDir

	checkoutLimiter *rateLimiter // the hosted checkout's, per client address

	// state holds the features' own per-server values (State).
	state sync.Map

	DashIdle *sessionIdle // the dashboard sessions' last uses (dashboard_idle.go)

	recorder *requestRecorder // the request log's; nil without Config.RequestLog
	Tag      string           // this node's tag in request ids (requestlog.go)
	// requestSeq numbers request ids when no request log draws their
	// positions; it starts at the time in microseconds, as the log does.
	requestSeq atomic.Uint64
	bodies     bodyGate                      // bytes of request bodies in flight (body.go)
	ids        atomic.Pointer[publicids.IDs] // once the id key is committed (publicids.go)
	draining   atomic.Bool                   // shutting down: /readyz refuses (health.go)
}

// New builds a Server.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if _, scrubbed := cfg.Logger.Handler().(*logscrub.Handler); !scrubbed {
		cfg.Logger = slog.New(logscrub.New(cfg.Logger.Handler())) // no key or secret in any line
	}
	if cfg.RateLimitPerSecond <= 0 {
		cfg.RateLimitPerSecond = defaultRatePerKey
	}
	if cfg.CommitTimeout <= 0 {
		cfg.CommitTimeout = defaultCommitWait
	}
	if cfg.Rates == nil {
		cfg.Rates = rails.SandboxRates{SpreadBasisPoints: SandboxSpreadBasisPoints}
		if cfg.Live {
			cfg.Rates = rails.NoRates{}
		}
	}
	if cfg.Catalogue == nil {
		cfg.Catalogue = rails.DefaultCatalogue()
	}
	if cfg.App == nil {
		cfg.App = app.New(app.Config{System: cfg.Actors, Catalogue: cfg.Catalogue, Rates: cfg.Rates,
			Live: cfg.Live, NoProvider: cfg.NoProvider, CommitTimeout: cfg.CommitTimeout,
			SandboxSettlement: cfg.SandboxSettlement, Logger: cfg.Logger})
	}
	if cfg.Names == nil {
		cfg.Names = defaultNames(cfg.NoProvider)
	}
	if cfg.BodyBytesInFlightMax <= 0 {
		cfg.BodyBytesInFlightMax = defaultBodyBytesInFlightMax
	}
	if cfg.ConnsPerIPMax == 0 {
		cfg.ConnsPerIPMax = defaultConnsPerIPMax
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = readTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = idleTimeout
	}
	if cfg.DashboardIdleTimeout == 0 {
		cfg.DashboardIdleTimeout = DashboardIdleTimeoutDefault
	}
	setCheckoutURL(cfg.CheckoutURL)
	cfg.PublicBaseURL = strings.TrimSuffix(cfg.PublicBaseURL, "/")
	s := &Server{
		Config:     cfg,
		Limiter:    newRateLimiter(cfg.RateLimitPerSecond),
		Logger:     cfg.Logger,
		forwarders: make(map[string]*fasthttp.HostClient),
		scopes:     make(map[string]ledger.Scopes),
		DashIdle:   newSessionIdle(cfg.DashboardIdleTimeout),
	}
	s.requestSeq.Store(uint64(time.Now().UnixMicro()))
	if cfg.Cluster != nil {
		s.Tag = NodeTag(cfg.Cluster.ID())
	} else {
		s.Tag = NodeTag("")
	}
	if cfg.RequestLog != nil {
		s.recorder = newRequestRecorder(cfg.RequestLog, cfg.RequestLogQueue, cfg.Logger)
		s.recorder.clientIP = func(ctx *fasthttp.RequestCtx, st *requestState) {
			switch {
			case st.forwarded && s.FromPeer(ctx):
				// Relayed by a node that did not vouch: unknown.
			case len(s.Config.TrustedProxies) > 0:
				st.clientIP = s.connectionClient(ctx)
			default:
				st.remote = ctx.RemoteAddr() // the recorder reads it
			}
		}
	}
	s.bodies.max = cfg.BodyBytesInFlightMax
	s.checkoutLimiter = newRateLimiter(cfg.RateLimitPerSecond)
	if cfg.FilesDir != "" {
		b, err := blob.Open(cfg.FilesDir)
		if err != nil {
			cfg.Logger.Error("file storage unavailable", "dir", cfg.FilesDir, "err", err)
		}
		s.Blobs = b
	}
	r := router.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.NotFound = s.notFound
	r.MethodNotAllowed = s.methodNotAllowed
	r.PanicHandler = s.panicked
	r.SaveMatchedRoutePath = cfg.Metrics != nil
	s.router = r
	s.routes()
	handler, errorHandler := r.Handler, s.badRequest
	if cfg.Metrics != nil {
		cfg.Metrics.Routes(r.List())
		handler, errorHandler = instrument(cfg.Metrics, handler), instrumentErrors(cfg.Metrics, errorHandler)
	}
	s.srv = &fasthttp.Server{
		Handler:            s.recordRequests(s.guardBody(retryAfterOn503(handler))),
		ErrorHandler:       silentWhenNothingRead(errorHandler),
		Name:               "payments",
		ReadTimeout:        cfg.ReadTimeout,
		WriteTimeout:       writeTimeout,
		IdleTimeout:        cfg.IdleTimeout,
		MaxRequestBodySize: ServerBodyBytesMax,
		// Uploads may be larger than JSON bodies; the limit is raised for
		// their routes only, and multipart bodies are parsed by the upload
		// handler, not pre-parsed (or spooled to disk) by fasthttp.
		HeaderReceived: func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
			return fasthttp.RequestConfig{MaxRequestBodySize: BodyLimitFor(h)}
		},
		DisablePreParseMultipartForm: true,
		// Bodies are read by readBody once the request is authenticated,
		// not before the handler (body.go).
		StreamRequestBody:     true,
		Concurrency:           concurrencyMax,
		NoDefaultServerHeader: true,
		CloseOnShutdown:       true,
		Logger:                fasthttpLogger{cfg.Logger},
		// Parse errors name the problem, not the raw bytes (headers
		// carry keys; bodies carry account numbers).
		SecureErrorLogMessage: true,
	}
	return s
}

// Serve serves requests on ln until Shutdown. Without a configured public
// base URL, links point at ln's address; call Serve once.
func (s *Server) Serve(ln net.Listener) error {
	if s.Config.PublicBaseURL == "" {
		s.Config.PublicBaseURL = "http://" + ln.Addr().String()
	}
	return s.srv.Serve(s.limitConnsPerIP(lingerListener{ln}))
}

// Shutdown stops accepting connections and waits for requests in flight to
// finish, or for ctx to end; then the request log's recorder writes what it
// holds and stops.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.ShutdownWithContext(ctx)
	if s.recorder != nil {
		s.recorder.close()
	}
	return err
}

// Handler is the server's request handler, for tests that serve it
// themselves.
func (s *Server) Handler() fasthttp.RequestHandler { return s.srv.Handler }

// handler is an API endpoint's logic; the pipeline has authenticated the
// request before it runs.
type handler func(c *Call)

// call is one authenticated request.
type Call struct {
	Server *Server
	Ctx    *fasthttp.RequestCtx
	Key    ledger.APIKey
	Org    string
}

func (c *Call) Fail(e *ledger.Error) { WriteError(c.Ctx, e) }

// decode reads the JSON request body into v. It answers the request and
// returns false when the body is missing, too large, of the wrong type, or
// not the expected JSON.
func (c *Call) Decode(v any) bool {
	body, e := JSONBody(c.Ctx)
	if e == nil {
		e = DecodeBody(body, v)
	}
	if e != nil {
		c.Fail(e)
		return false
	}
	return true
}

// railsAvailable refuses money movement when no provider can carry it.
func (c *Call) RailsAvailable() bool {
	if c.Server.Config.NoProvider {
		c.Fail(ErrNoProvider())
		return false
	}
	return true
}

func ErrNoProvider() *ledger.Error { return app.NoProviderError() }

func (c *Call) OK(status int, v any) { WriteJSON(c.Ctx, status, v) }

// noStore marks the response as one no cache (a proxy's, a browser's) may
// keep: it carries a secret (a new key, a webhook signing secret).
func (c *Call) NoStore() { c.Ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store") }

// commitContext bounds how long a write waits for its commit.
func (c *Call) commitContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.Server.Config.CommitTimeout)
}

// route registers an authenticated endpoint that needs scope (0: any valid
// key).
func (s *Server) route(method, path string, scope ledger.Scopes, h handler) {
	s.scopes[method+" "+path] = scope
	s.router.Handle(method, path, func(ctx *fasthttp.RequestCtx) {
		if !s.Begin(ctx) {
			return
		}
		// Again if this node lost its leadership while it served the
		// request (a transfer, a new election), or could not confirm it
		// still led when it answered: the next leader answers it.
		deadline := time.Now().Add(leaderWait)
		for attempt := 0; ; attempt++ {
			if attempt > 0 {
				if time.Now().After(deadline) {
					return
				}
				time.Sleep(resendPause)
				ctx.Response.Reset()
				ctx.SetUserValue(leaderLostKey, nil)
				ctx.SetUserValue(errorCodeKey, nil)
				s.Begin(ctx)
			}
			if s.serve(ctx, scope, h) {
				return
			}
			if len(ctx.Request.Header.Peek(forwardedHeader)) > 0 {
				// The node that forwarded it sends it to the next leader.
				ctx.Response.Header.Set(notLeaderHeader, "1")
				return
			}
		}
	})
}

// serve answers one attempt of an API request: relayed to the leader, or
// served here. It returns false when the answer must not go (this node
// stopped leading, or could not confirm it still led): the request then
// goes to the next leader.
func (s *Server) serve(ctx *fasthttp.RequestCtx, scope ledger.Scopes, h handler) bool {
	if s.Config.Cluster != nil && !s.Config.Cluster.IsLeader() {
		// A follower relays a body only for a key it knows (keys
		// are replicated), so an anonymous body is never read.
		if err := s.authenticateOnFollower(ctx); err != nil {
			WriteError(ctx, err)
			return true
		}
	}
	if s.ForwardIfFollower(ctx) {
		return true
	}
	if err := s.checkForwardedClient(ctx); err != nil {
		WriteError(ctx, err)
		return s.confirmAnswer(ctx)
	}
	key, err := s.authenticate(ctx)
	if err != nil {
		WriteError(ctx, err)
		return s.confirmAnswer(ctx)
	}
	noteKey(ctx, &key) // for the request log
	if err := s.allowlistCheck(ctx, &key); err != nil {
		s.Logger.Warn("API key refused: caller not on its IP allowlist", "keyId", key.ID, "reason", err.Message)
		WriteError(ctx, err)
		return s.confirmAnswer(ctx)
	}
	if err := s.Limiter.Allow(ctx, key.ID, perAPIKey); err != nil {
		WriteError(ctx, err)
		return true
	}
	if scope != 0 && !key.Scopes.Has(scope) {
		WriteError(ctx, &ledger.Error{Code: ledger.CodeForbidden,
			Message: "API key does not have the required scope: " + ledger.ScopeName(scope)})
		return s.confirmAnswer(ctx)
	}
	if err := s.ReadBody(ctx); err != nil { // only now: authenticated
		WriteError(ctx, err)
		return true
	}
	h(&Call{Server: s, Ctx: ctx, Key: key, Org: key.OrgID})
	return !s.leaderLost(ctx) && s.confirmAnswer(ctx)
}

// Begin stamps the request id and the API version on the response. It
// returns false, having answered, for an unknown version.
func (s *Server) Begin(ctx *fasthttp.RequestCtx) bool {
	ctx.Response.Header.Set("x-request-id", s.RequestID(ctx))
	version := string(ctx.Request.Header.Peek("service-version"))
	if version == "" {
		version = apiVersions[0]
	}
	known := false
	for _, v := range apiVersions {
		if v == version {
			known = true
		}
	}
	if !known {
		ctx.Response.Header.Set("service-version", apiVersions[0])
		WriteError(ctx, ledger.FieldInvalid("service-version",
			"must be one of: "+strings.Join(apiVersions, ", ")+" (or absent for the current version)"))
		return false
	}
	ctx.Response.Header.Set("service-version", version)
	return true
}

func RequestIDOf(ctx *fasthttp.RequestCtx) string {
	return string(ctx.Response.Header.Peek("x-request-id"))
}

func (s *Server) notFound(ctx *fasthttp.RequestCtx) {
	s.noteUnrouted(ctx)
	if !s.Begin(ctx) {
		return
	}
	WriteError(ctx, &ledger.Error{Code: ledger.CodeNotFound,
		Message: "No endpoint " + string(ctx.Method()) + " " + string(ctx.Path())})
}

func (s *Server) methodNotAllowed(ctx *fasthttp.RequestCtx) {
	s.noteUnrouted(ctx)
	if !s.Begin(ctx) {
		return
	}
	WriteError(ctx, &ledger.Error{Code: ledger.CodeMethodNotAllowed,
		Message: string(ctx.Method()) + " is not allowed on " + string(ctx.Path()) + "; allowed: " + string(ctx.Response.Header.Peek("Allow"))})
}

// loggablePath is a request path as a log line may carry it: a dashboard
// setup, invitation or password reset link's token cut off (it is a
// secret until used), and the rest redacted as the request log redacts it.
func loggablePath(path string) string {
	for _, p := range []string{"/dashboard/setup/", "/dashboard/invitations/", "/dashboard/reset/"} {
		if strings.HasPrefix(path, p) {
			return p + redact.Mask
		}
	}
	return redact.Path(path)
}

func (s *Server) panicked(ctx *fasthttp.RequestCtx, v any) {
	ctx.Response.Reset()
	s.Begin(ctx)
	// A read of a closing node's state store: the node is shutting down.
	if se, ok := v.(ledger.StoreError); ok && errors.Is(se, ledger.ErrStoreClosed) {
		WriteError(ctx, &ledger.Error{Code: ledger.CodeUnavailable, Message: "This node is shutting down; retry"})
		return
	}
	s.Logger.Error("handler panicked", "path", loggablePath(string(ctx.Path())), "panic", v)
	WriteError(ctx, &ledger.Error{Code: ledger.CodeInternal, Message: "Internal error"})
}

// badRequest answers requests fasthttp could not read: a body past the
// limit, a malformed request line or headers. The connection is then
// closed lingering (linger.go): the client may still be sending.
func (s *Server) badRequest(ctx *fasthttp.RequestCtx, err error) {
	lingerOnClose(ctx)
	s.Begin(ctx)
	var e *ledger.Error
	if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		e = BodyTooLarge(BodyLimitFor(&ctx.Request.Header))
	} else {
		e = &ledger.Error{Code: ledger.CodeValidation, Message: "Malformed HTTP request"}
	}
	WriteError(ctx, e)
}

// silentWhenNothingRead wraps the error handler: a connection that sent
// no byte of a request before its read timeout, or was reset, is closed
// without an answer, as fasthttp already does for a kept-alive one. Such a
// connection is not a malformed request: a client opened it ahead of need
// (a browser's preconnect, a pool's spare) and is not waiting for an
// answer, and an unsolicited 400 on it would be read as the answer to the
// next request it sends there.
func silentWhenNothingRead(next func(*fasthttp.RequestCtx, error)) func(*fasthttp.RequestCtx, error) {
	return func(ctx *fasthttp.RequestCtx, err error) {
		// fasthttp passes on the read's own error only when nothing was
		// read (it wraps any later one), and then has no header either.
		if _, readFailed := err.(net.Error); readFailed && len(ctx.Request.Header.RawHeaders()) == 0 {
			ctx.Conn().Close() // fasthttp's answer, written after, goes nowhere
			return
		}
		next(ctx, err)
	}
}

// fasthttpLogger carries fasthttp's own messages (mostly clients that hang up
// or send garbage) into our logger at debug level. fasthttp quotes the raw
// request bytes in some of its parse errors, even with
// SecureErrorLogMessage set: every quoted run that is not a network
// address is replaced by its length, so no header or body reaches the log;
// logscrub masks what remains.
type fasthttpLogger struct{ logger *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.logger.Debug(withoutQuotedBytes(fmt.Sprintf(format, args...)), "component", "fasthttp")
}

// quotedRun is a Go-quoted string (%q) inside a message.
var quotedRun = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// quotedAddress is a quoted host:port, which is kept.
var quotedAddress = regexp.MustCompile(`^"[0-9A-Za-z.:\[\]%-]{0,64}:[0-9]{1,5}"$`)

// withoutQuotedBytes replaces each quoted run of msg but addresses by
// "[N bytes]", and cuts a trailing unquoted snippet ("contents: …").
func withoutQuotedBytes(msg string) string {
	msg = quotedRun.ReplaceAllStringFunc(msg, func(q string) string {
		if quotedAddress.MatchString(q) {
			return q
		}
		return fmt.Sprintf("[%d bytes]", len(q)-2)
	})
	if i := strings.Index(msg, "contents: "); i >= 0 {
		msg = msg[:i] + "contents: [not logged]"
	}
	return logscrub.String(msg)
}

// SandboxSpreadBasisPoints is the spread the sandbox takes on every
// cross-currency rate.
const SandboxSpreadBasisPoints = app.SandboxSpreadBasisPoints

// NameResolver asks a rail who holds an account. rails.SandboxNames and
// rails.NoProvider implement it; a real provider adapter will too.
type NameResolver interface {
	ResolveName(ctx context.Context, m rails.Method, accountNumber string) (rails.Resolution, error)
}

var (
	_ NameResolver = rails.SandboxNames{}
	_ NameResolver = rails.NoProvider{}
)

func defaultNames(noProvider bool) NameResolver {
	if noProvider {
		return rails.NoProvider{}
	}
	return rails.SandboxNames{}
}

// State returns the server's value for key, made by make the first time
// it is asked for: a feature's own per-server state (the export lanes of
// package money), which core knows nothing of. Safe for concurrent use.
func (s *Server) State(key any, make func() any) any {
	if v, ok := s.state.Load(key); ok {
		return v
	}
	v, _ := s.state.LoadOrStore(key, make())
	return v
}
