// Command payments is the payments service: one binary that serves the REST
// API as a node of a Raft cluster (a cluster of one by default).
//
//	payments serve --stack sandbox --data-dir ./data --http-addr 127.0.0.1:8080
//
// Every flag can also be set with an environment variable: PAYMENTS_ and the
// flag's name in upper case with dashes as underscores (PAYMENTS_DATA_DIR).
// A flag on the command line wins over the environment.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"payments/actors"
	api "payments/http"
	"payments/http/logscrub"
	"payments/http/metrics"
	"payments/ledger"
	"payments/raft"
	"payments/rails"
	"payments/wal/requestlog"
)

const usage = `payments: a payments service over bank, mobile money and stablecoin rails

Usage:
  payments serve [flags]    run a node (see payments serve -h)
  payments cluster status|remove|transfer-leader [flags]
                            operate a cluster through its admin API (see payments cluster -h)
  payments backup --to <file> --admin-addr host:port --admin-token-file <file>
                            an online, consistent backup of a running node
  payments restore --from <file> --data-dir <dir> [--node-id n1] [--raft-addr … | --peers …]
                            seed a new node (or each node of a new cluster) from a backup
  payments reconcile --providers <file> --admin-addr host:port --admin-token-file <file>
                            compare the providers' balances with their floats in the ledger
                            (exit status 1 on a difference; see payments reconcile -h)
  payments version          print the version
`

var version = "dev"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		// Whatever a library creates under the data directory (Raft's
		// snapshot metadata, Pebble's files) is the owner's only.
		syscall.Umask(0o077)
		if err := serve(os.Args[2:], os.Stdout, os.Stderr); err != nil {
			fmt.Fprintln(os.Stderr, "payments:", err)
			os.Exit(1)
		}
	case "cluster":
		os.Exit(clusterCommand(os.Args[2:], os.Stdout, os.Stderr))
	case "backup":
		os.Exit(backupCommand(os.Args[2:], os.Stdout, os.Stderr))
	case "restore":
		os.Exit(restoreCommand(os.Args[2:], os.Stdout, os.Stderr))
	case "reconcile":
		os.Exit(reconcileCommand(os.Args[2:], os.Stdout, os.Stderr))
	case "version":
		fmt.Println(version)
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "payments: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
}

type serveConfig struct {
	stack             string
	dataDir           string
	httpAddr          string
	raftAddr          string
	nodeID            string
	peers             string
	bootstrap         bool
	bootstrapKey      string
	orgName           string
	orgCountry        string
	orgTimezone       string
	orgCurrency       string
	logLevel          string
	rateLimit         int
	rateFeedURL       string
	rateStaleness     time.Duration
	providers         string
	depositPoll       time.Duration
	snapshotThreshold uint64
	snapshotInterval  time.Duration
	trailingLogs      uint64
	settlement        time.Duration
	dashboardIdle     time.Duration
	commitTimeout     time.Duration
	drainTimeout      time.Duration
	drainNotice       time.Duration
	debugAddr         string
	adminAddr         string
	join              string
	adminTokenFile    string
	metricsAddr       string

	// Raft's failover timing; zero keeps hashicorp's (a single node's: 100ms).
	raftHeartbeatTimeout   time.Duration
	raftElectionTimeout    time.Duration
	raftLeaderLeaseTimeout time.Duration
	raftCommitTimeout      time.Duration

	// Webhook delivery.
	webhookTimeout         time.Duration
	webhookWorkers         int
	webhookEndpointWorkers int

	checkoutURL    string
	publicBaseURL  string
	trustedProxies string

	connsPerIP        int
	bodyBytesInFlight int64

	// The request log (node-local, package wal/requestlog).
	requestLog          bool
	requestLogRetention time.Duration
	requestLogMaxBytes  int64
	requestLogQueue     int
}

func parseServe(args []string, stderr io.Writer) (*serveConfig, error) {
	c := &serveConfig{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.stack, "stack", "sandbox", "which stack this node serves: sandbox (sk_test_ keys, simulated rails) or production (sk_live_ keys)")
	fs.StringVar(&c.dataDir, "data-dir", "./data", "directory of the node's log and snapshots")
	fs.StringVar(&c.httpAddr, "http-addr", "127.0.0.1:8080", "host:port the REST API listens on (port 0 picks one)")
	fs.StringVar(&c.raftAddr, "raft-addr", "127.0.0.1:7000", "host:port Raft listens on for its peers (port 0 picks one)")
	fs.StringVar(&c.nodeID, "node-id", "n1", "this node's name in the cluster")
	fs.StringVar(&c.peers, "peers", "", "the whole cluster, this node included, as id=raft-host:port@http-host:port,… (empty: a single node)")
	fs.BoolVar(&c.bootstrap, "bootstrap", false, "with --peers: found a new cluster when the data directory is empty (pass it on every node's first start only; without it an empty node waits for the leader to replicate to it)")
	fs.StringVar(&c.bootstrapKey, "bootstrap-key", "", "seed this API key (with every scope) instead of drawing a random one on first start")
	fs.StringVar(&c.orgName, "bootstrap-org-name", "Default organization", "name of the organization created on first start")
	fs.StringVar(&c.orgCountry, "bootstrap-org-country", "GH", "its country (ISO 3166-1 alpha-2)")
	fs.StringVar(&c.orgTimezone, "bootstrap-org-timezone", "Africa/Accra", "its timezone (IANA name)")
	fs.StringVar(&c.orgCurrency, "bootstrap-org-currency", "GHS", "its default currency")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.IntVar(&c.rateLimit, "rate-limit", 100, "requests per second allowed per API key (sliding window)")
	fs.StringVar(&c.rateFeedURL, "rate-feed-url", "", "production: the HTTP feed of mid-market rates (JSON: base, asOf, rates as decimal strings); none: every cross-currency pair answers rate_unavailable")
	fs.DurationVar(&c.rateStaleness, "rate-staleness", 2*time.Minute, "production: the oldest rates served; past it cross-currency operations answer rate_unavailable")
	fs.StringVar(&c.providers, "providers", "", "production: the providers file (JSON: the provider instances, the methods each serves, where their secrets are read from); none: money movement answers 503")
	fs.DurationVar(&c.depositPoll, "deposit-poll-interval", actors.DepositPollIntervalDefault, "production: how often the leader polls each provider's deposit feed")
	fs.IntVar(&c.connsPerIP, "max-conns-per-ip", 256, "open connections allowed from one client address (the cluster's peers are exempt); -1: no limit")
	fs.Int64Var(&c.bodyBytesInFlight, "body-bytes-in-flight-max", 256<<20, "bytes of request bodies read or held at once, over all requests; past it requests answer 503")
	// A snapshot is a flush of the state store, whatever the history, so
	// they are frequent: a restart reads and applies only the log after
	// the latest one.
	fs.Uint64Var(&c.snapshotThreshold, "snapshot-threshold", 1024, "log entries between snapshots; the log is truncated behind each")
	fs.DurationVar(&c.snapshotInterval, "snapshot-interval", 10*time.Second, "how often to check whether --snapshot-threshold is reached")
	fs.Uint64Var(&c.trailingLogs, "trailing-logs", 10240, "log entries kept behind a snapshot for lagging followers")
	fs.DurationVar(&c.settlement, "sandbox-settlement", rails.DefaultSandboxTiming.Settlement, "sandbox: how long a simulated rail takes to settle")
	fs.DurationVar(&c.dashboardIdle, "dashboard-idle-timeout", api.DashboardIdleTimeoutDefault, "a dashboard session unused this long ends; 0: never")
	fs.DurationVar(&c.commitTimeout, "commit-timeout", 10*time.Second, "how long a write waits for its commit before answering outcome_unknown")
	fs.DurationVar(&c.drainTimeout, "drain-timeout", 15*time.Second, "on SIGTERM, how long to wait for requests in flight")
	fs.DurationVar(&c.drainNotice, "drain-notice", 0, "on SIGTERM, how long to keep serving new connections while /readyz answers 503, before closing the listener: set it above a load balancer's time to mark the node down")
	fs.StringVar(&c.trustedProxies, "trusted-proxies", "", "CIDR prefixes of proxies in front of this node whose X-Forwarded-For names the client, comma-separated (empty: none is believed)")
	fs.StringVar(&c.publicBaseURL, "public-base-url", "", "scheme and host clients reach the API at, such as https://api.example.com: the base of file download links (default: http://<http-addr>, for local use)")
	fs.StringVar(&c.checkoutURL, "checkout-url", "", "base address of hosted checkouts in payment links' url (default: <public-base-url>/checkout)")
	fs.StringVar(&c.debugAddr, "debug-addr", "", "if set, serve Go's pprof profiles on this loopback host:port (for operators)")
	fs.StringVar(&c.adminAddr, "admin-addr", "127.0.0.1:9400", "host:port of the operators' admin API (cluster membership), served when --admin-token-file is set")
	fs.StringVar(&c.join, "join", "", "join a running cluster through the admin API of any of its members (host:port,…; needs --admin-token-file): added as a non-voter, promoted to voter once caught up")
	fs.StringVar(&c.adminTokenFile, "admin-token-file", "", "file holding the operator token the admin API requires (empty: no admin API)")
	fs.StringVar(&c.metricsAddr, "metrics-addr", "", "if set, serve Prometheus metrics at /metrics on this host:port, apart from the API (port 0 picks one)")
	fs.DurationVar(&c.raftHeartbeatTimeout, "raft-heartbeat-timeout", 0, "how long a follower waits without hearing from the leader before it calls an election (0: 1s; 100ms while a node started without --peers is the only voter)")
	fs.DurationVar(&c.raftElectionTimeout, "raft-election-timeout", 0, "how long a candidate waits for votes before it tries again (0: 1s; 100ms while a node started without --peers is the only voter)")
	fs.DurationVar(&c.raftLeaderLeaseTimeout, "raft-leader-lease-timeout", 0, "how long a leader goes on without hearing from a quorum before it steps down; at most the heartbeat timeout (0: 500ms; 100ms for a single node)")
	fs.DurationVar(&c.raftCommitTimeout, "raft-commit-timeout", 0, "how long an idle leader waits before telling followers the commit index (0: 50ms); not --commit-timeout")
	fs.DurationVar(&c.webhookTimeout, "webhook-timeout", 10*time.Second, "how long a webhook receiver has to answer one delivery attempt")
	fs.IntVar(&c.webhookWorkers, "webhook-workers", 256, "webhook delivery attempts in flight at once, over all endpoints")
	fs.IntVar(&c.webhookEndpointWorkers, "webhook-endpoint-workers", 4, "webhook delivery attempts in flight at once to one endpoint")
	fs.BoolVar(&c.requestLog, "request-log", true, "record every API request (redacted) in this node's request log under the data directory")
	fs.DurationVar(&c.requestLogRetention, "request-log-retention", requestlog.RetentionDefault, "how long the request log keeps a record")
	fs.Int64Var(&c.requestLogMaxBytes, "request-log-max-bytes", requestlog.MaxBytesDefault, "the most bytes of records the request log keeps; the oldest go first")
	fs.IntVar(&c.requestLogQueue, "request-log-queue", 8192, "records waiting to be written at most; past it, records are dropped and counted")
	if err := applyEnv(fs); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if c.stack != "sandbox" && c.stack != "production" {
		return nil, fmt.Errorf("--stack must be sandbox or production, not %q", c.stack)
	}
	if c.providers != "" && c.stack != "production" {
		return nil, errors.New("--providers is for the production stack: the sandbox simulates its rails")
	}
	if c.depositPoll < 10*time.Millisecond {
		return nil, errors.New("--deposit-poll-interval must be at least 10ms")
	}
	for name, d := range map[string]time.Duration{"--raft-heartbeat-timeout": c.raftHeartbeatTimeout,
		"--raft-election-timeout": c.raftElectionTimeout, "--raft-leader-lease-timeout": c.raftLeaderLeaseTimeout,
		"--raft-commit-timeout": c.raftCommitTimeout} {
		if d < 0 || (d > 0 && d < 5*time.Millisecond) {
			return nil, fmt.Errorf("%s must be 0 (the default) or at least 5ms, not %s", name, d)
		}
	}
	if c.publicBaseURL != "" {
		u, err := url.Parse(c.publicBaseURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
			strings.TrimSuffix(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("--public-base-url: %q is not a scheme and host such as https://api.example.com", c.publicBaseURL)
		}
		c.publicBaseURL = u.Scheme + "://" + u.Host
	}
	if _, ok := ledger.LookupCurrency(c.orgCurrency); !ok {
		return nil, fmt.Errorf("--bootstrap-org-currency: %q is not a supported currency", c.orgCurrency)
	}
	return c, nil
}

// applyEnv sets each flag from PAYMENTS_<NAME> when that variable is set;
// the command line, parsed afterwards, wins.
func applyEnv(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := "PAYMENTS_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok && err == nil {
			if serr := f.Value.Set(v); serr != nil {
				err = fmt.Errorf("%s: %w", name, serr)
			}
		}
	})
	return err
}

// parsePeers reads id=raft@http,… into Raft peers and the HTTP address of
// each node.
func parsePeers(s string) ([]raft.Peer, map[string]string, error) {
	if s == "" {
		return nil, nil, nil
	}
	var peers []raft.Peer
	httpAddrs := make(map[string]string)
	for _, item := range strings.Split(s, ",") {
		id, rest, ok1 := strings.Cut(strings.TrimSpace(item), "=")
		raftAddr, httpAddr, ok2 := strings.Cut(rest, "@")
		if !ok1 || !ok2 || id == "" || raftAddr == "" || httpAddr == "" {
			return nil, nil, fmt.Errorf("--peers: %q is not id=raft-host:port@http-host:port", item)
		}
		if _, dup := httpAddrs[id]; dup {
			return nil, nil, fmt.Errorf("--peers: %s listed twice", id)
		}
		peers = append(peers, raft.Peer{ID: id, RaftAddr: raftAddr})
		httpAddrs[id] = httpAddr
	}
	return peers, httpAddrs, nil
}

func newLogger(level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	// Every component's lines pass through logscrub: no key or signing
	// secret reaches the log at any level.
	return slog.New(logscrub.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))), nil
}

// serve runs a node until SIGTERM or SIGINT, then drains: the HTTP server
// stops accepting and lets requests in flight finish (they wait for their
// commits), then the actors stop, then Raft and the log close.
func serve(args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	// The live heap is small (open records, and the commands in flight:
	// history is in the state store), and the collector's cycles cost CPU
	// the write path needs; trading some memory for fewer cycles keeps
	// them out of the latency tail. GOGC in the environment overrides.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	logger, err := newLogger(cfg.logLevel, stderr)
	if err != nil {
		return err
	}
	peers, peerHTTP, err := parsePeers(cfg.peers)
	if err != nil {
		return err
	}
	trustedProxies, err := api.ParseTrustedProxies(cfg.trustedProxies)
	if err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	live := cfg.stack == "production"
	if cfg.bootstrapKey != "" && !strings.HasPrefix(cfg.bootstrapKey, actors.KeyPrefix(live)) {
		return fmt.Errorf("--bootstrap-key must start with %s on the %s stack", actors.KeyPrefix(live), cfg.stack)
	}

	ln, err := net.Listen("tcp", cfg.httpAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.httpAddr, err)
	}
	defer ln.Close()

	var reg *metrics.Registry
	if cfg.metricsAddr != "" {
		reg = metrics.New()
	}

	node, err := raft.Open(raft.Config{
		ID:                cfg.nodeID,
		DataDir:           cfg.dataDir,
		RaftAddr:          cfg.raftAddr,
		Peers:             peers,
		Bootstrap:         cfg.bootstrap,
		Join:              cfg.join != "",
		PeerHTTP:          peerHTTP,
		SnapshotThreshold: cfg.snapshotThreshold,
		SnapshotInterval:  cfg.snapshotInterval,
		TrailingLogs:      cfg.trailingLogs,
		Logger:            logger,

		HeartbeatTimeout:   cfg.raftHeartbeatTimeout,
		ElectionTimeout:    cfg.raftElectionTimeout,
		LeaderLeaseTimeout: cfg.raftLeaderLeaseTimeout,
		CommitTimeout:      cfg.raftCommitTimeout,
		Observe:            raftObservers(reg),
	})
	if err != nil {
		return err
	}
	defer node.Close()

	timing := rails.DefaultSandboxTiming
	timing.Settlement = cfg.settlement
	var rail actors.Rail = rails.NewSandbox(timing)
	var rates rails.RateSource // the sandbox's table, by default
	var providers *rails.Providers
	if live {
		// Production never runs the sandbox's simulator: a payout no
		// provider serves meets NoProvider.
		rail = rails.NoProvider{}
		rates = rails.NoRates{}
		if cfg.providers != "" {
			reg, err := loadProviders(cfg.providers)
			if err != nil {
				return err
			}
			logProviders(logger, reg)
			providers = rails.NewProviders(reg, nil)
		}
		if cfg.rateFeedURL != "" {
			feed := &rails.FeedRates{URL: cfg.rateFeedURL, Staleness: cfg.rateStaleness, SpreadBasisPoints: api.SandboxSpreadBasisPoints}
			feedCtx, stopFeed := context.WithCancel(context.Background())
			defer stopFeed()
			go feed.Run(feedCtx)
			rates = feed
		}
	} else if cfg.rateFeedURL != "" {
		return errors.New("--rate-feed-url is for the production stack: the sandbox prices from its own table")
	}
	var actorProviders actors.Providers
	var names api.NameResolver     // the sandbox's, or none on production
	var catalogue *rails.Catalogue // the whole catalogue, by default
	if providers != nil {
		actorProviders, names = providers, providers
		catalogue = providers.Offered(rails.DefaultCatalogue())
	}
	sys := actors.Start(actors.Config{Log: node, State: node, Rail: rail, Logger: logger, CommitTimeout: cfg.commitTimeout,
		Providers: actorProviders, DepositPollInterval: cfg.depositPoll,
		Webhooks: actors.WebhookConfig{
			Payload: api.EventPayload,
			// Production delivers only to public https URLs; the sandbox
			// also to loopback receivers, for local testing.
			Policy:              actors.WebhookURLPolicy{AllowLoopback: !live},
			Timeout:             cfg.webhookTimeout,
			Concurrency:         cfg.webhookWorkers,
			EndpointConcurrency: cfg.webhookEndpointWorkers,
		}})
	defer sys.Stop()

	// The request log is the node's own, never replicated; it closes after
	// the HTTP server has drained and the recorder has written what it held.
	var requestStore api.RequestStore
	if cfg.requestLog {
		store, err := requestlog.Open(filepath.Join(cfg.dataDir, "requestlog"), requestlog.Options{
			Logger: logger, Retention: cfg.requestLogRetention, MaxBytes: cfg.requestLogMaxBytes,
		})
		if err != nil {
			return err
		}
		defer store.Close()
		requestStore = store
	}

	publicBaseURL := cfg.publicBaseURL
	if publicBaseURL == "" {
		publicBaseURL = "http://" + ln.Addr().String()
	}
	checkoutURL := cfg.checkoutURL
	if checkoutURL == "" {
		checkoutURL = publicBaseURL + "/checkout"
	}
	var requestMetrics *metrics.Requests
	if reg != nil {
		requestMetrics = reg.Requests()
		registerNodeMetrics(reg, node, sys, cfg.nodeID)
	}
	server := api.New(api.Config{
		Metrics:              requestMetrics,
		Live:                 live,
		NoProvider:           live && providers == nil,
		Actors:               sys,
		Cluster:              node,
		PeerHTTP:             peerHTTP,
		FilesDir:             blobsDir(cfg.dataDir),
		Logger:               logger,
		RateLimitPerSecond:   cfg.rateLimit,
		Rates:                rates,
		Catalogue:            catalogue,
		CommitTimeout:        cfg.commitTimeout,
		CheckoutURL:          checkoutURL,
		PublicBaseURL:        publicBaseURL,
		ConnsPerIPMax:        cfg.connsPerIP,
		BodyBytesInFlightMax: cfg.bodyBytesInFlight,
		SandboxSettlement:    cfg.settlement,
		DashboardIdleTimeout: dashboardIdleTimeout(cfg.dashboardIdle),
		TrustedProxies:       trustedProxies,
		RequestLog:           requestStore,
		Names:                names,
		RequestLogQueue:      cfg.requestLogQueue,
	})
	if reg != nil && requestStore != nil {
		reg.RequestLogDrops(server.RequestLogDropped) // records a full queue refused
	}

	// Machine-readable lines on stdout: what an operator or a test needs.
	fmt.Fprintf(stdout, "http_addr=%s\n", ln.Addr())
	fmt.Fprintf(stdout, "node_id=%s\n", cfg.nodeID)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// The actors follow leadership until the node closes, through the
	// drain: a leader that hands over leadership stops driving rails.
	following, stopFollowing := context.WithCancel(context.Background())
	defer stopFollowing()
	go followLeadership(following, node, sys, actors.Bootstrap{
		Live: live, Secret: cfg.bootstrapKey, OrgName: cfg.orgName,
		Country: cfg.orgCountry, Timezone: cfg.orgTimezone, DefaultCurrency: cfg.orgCurrency,
	}, publicBaseURL+"/dashboard/setup/", stdout, logger)

	if cfg.join != "" && cfg.adminTokenFile == "" {
		return errors.New("--join needs --admin-token-file: the cluster's admin API requires the operator token")
	}
	if cfg.adminTokenFile != "" {
		token, err := readAdminToken(cfg.adminTokenFile)
		if err != nil {
			return err
		}
		if cfg.join != "" {
			go joinCluster(ctx, node, strings.Split(cfg.join, ","), token, ln.Addr().String(), stdout, logger)
		}
		addr, err := serveAdmin(cfg.adminAddr, adminHandler(node, sys, server.OpenBlob, server.UnattributedRequests, token, logger), logger)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "admin_addr=%s\n", addr)
	}
	if reg != nil {
		ms, err := reg.Listen(cfg.metricsAddr, logger)
		if err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		defer ms.Shutdown(context.Background())
		fmt.Fprintf(stdout, "metrics_addr=%s\n", ms.Addr())
	}

	if cfg.debugAddr != "" {
		if err := serveDebug(cfg.debugAddr, logger); err != nil {
			return err
		}
	}

	// Uploaded bytes whose file record never committed are removed hourly.
	go func() {
		tick := time.NewTicker(time.Hour)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if n, err := server.SweepBlobs(); err != nil {
					logger.Warn("sweeping the blob store", "err", err)
				} else if n > 0 {
					logger.Info("removed uploaded bytes no file record names", "blobs", n)
				}
			}
		}
	}()

	served := make(chan error, 1)
	go func() { served <- server.Serve(ln) }()
	logger.Info("serving", "stack", cfg.stack, "http", ln.Addr().String(), "node", cfg.nodeID, "data", cfg.dataDir)

	select {
	case err := <-served:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	// From here /readyz answers 503, so load balancers send new requests
	// elsewhere while this node hands over and drains; it still serves
	// what comes until the listener closes.
	server.StartDraining()
	noticeOver := time.After(cfg.drainNotice)
	logger.Info("shutting down: /readyz now answers 503", "drain_notice", cfg.drainNotice)
	// A leader hands over first, so the cluster has a leader again in a
	// round trip instead of an election timeout; requests still arriving
	// here are forwarded to it until the listener closes.
	if node.IsLeader() {
		began := time.Now()
		if err := node.TransferLeadership(); err != nil {
			logger.Warn("leadership transfer before stopping failed; the cluster elects a leader after its election timeout", "err", err)
		} else {
			logger.Info("handed over leadership", "took", time.Since(began))
		}
	}
	<-noticeOver
	logger.Info("draining", "timeout", cfg.drainTimeout)
	drain, cancel := context.WithTimeout(context.Background(), cfg.drainTimeout)
	defer cancel()
	if err := server.Shutdown(drain); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		logger.Warn("http shutdown", "err", err)
	}
	sys.Stop()
	if err := node.Close(); err != nil {
		return fmt.Errorf("close raft: %w", err)
	}
	logger.Info("stopped cleanly")
	return nil
}

// followLeadership tells the actors when this node leads, and seeds an
// empty cluster with its first organization and key, and a one-time link
// (under setupBase) for its first dashboard owner.
func followLeadership(ctx context.Context, node *raft.Node, sys *actors.System, b actors.Bootstrap, setupBase string, stdout io.Writer, logger *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case leading := <-node.Leadership():
			sys.SetLeading(leading)
			if !leading {
				logger.Info("no longer the leader")
				continue
			}
			logger.Info("leading the cluster")
			bctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			secret, err := sys.EnsureBootstrap(bctx, b)
			cancel()
			if err != nil {
				logger.Error("bootstrap failed", "err", err)
				continue
			}
			if secret != "" {
				fmt.Fprintf(stdout, "bootstrap_key=%s\n", secret)
				logger.Info("created the first organization; its API key is printed once on stdout")
			}
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			token, err := sys.EnsureDashboardSetup(sctx)
			cancel()
			if err != nil {
				logger.Error("dashboard setup link failed", "err", err)
			} else if token != "" {
				fmt.Fprintf(stdout, "dashboard_setup_url=%s%s\n", setupBase, token)
				logger.Info("the dashboard has no owner yet: a one-time link to set one up is printed on stdout")
			}
		}
	}
}

// blobsDir is where a node keeps uploaded files' bytes: beside the log, in
// its data directory.
func blobsDir(dataDir string) string { return filepath.Join(dataDir, "blobs") }

// dashboardIdleTimeout is the flag's value as the server's setting: the
// flag's 0 (never) is the setting's negative.
func dashboardIdleTimeout(flag time.Duration) time.Duration {
	if flag <= 0 {
		return -1
	}
	return flag
}
