// Command paybench runs named workloads against the payments service and
// prints throughput, latency percentiles and status counts.
//
//	go build -o bin/payments ./cmd/payments
//	go run ./bench/cmd/paybench -spawn ./bin/payments -duration 10s
//	go run ./bench/cmd/paybench -addr 127.0.0.1:8080 -key sk_test_… -workload hot_account
//	go run ./bench/cmd/paybench -addr 127.0.0.1:8081,127.0.0.1:8082,127.0.0.1:8083 -key sk_test_… -workload uniform
//	go run ./bench/cmd/paybench -spawn ./bin/payments -workload uniform -duration 3m -window 5s
//	go run ./bench/cmd/paybench -spawn ./bin/payments -workload uniform -noise-exports 16
//
// With -window it also reports each window of the measured phase (soak
// mode); with -noise-exports it adds a noisy neighbour. The package
// documentation of bench describes both. With -addr naming every node of
// a cluster, requests go round-robin over the nodes, and one that meets a
// node going away is sent to the next (see bench.Config.Addr): a rolling
// restart under load should then show no error at all.
//
// It exits 0 when every measured request got its workload's expected
// status (and every export of the noisy neighbour got 200), 1 when some
// did not (the report names them), and 2 on a usage or setup error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"

	"payments/bench"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("paybench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		spawn      = fs.String("spawn", "", "start a fresh server from this payments binary (temporary data dir, loopback ports) and stop it at the end")
		serverArgs = fs.String("server-args", "", "with -spawn: extra flags for `payments serve`, split on spaces")
		serverLog  = fs.String("server-log", "", "with -spawn: write the server's log (its stderr) to this file")
		addr       = fs.String("addr", "", "without -spawn: host:port of a running server, or of every node of a cluster, comma-separated (loopback only); with several, each request goes to the next node in turn, and one that finds a node gone is sent to the next (refused connection) or re-sent with the same reference (connection lost after sending, 503 service_unavailable or outcome_unknown); setup uses the first")
		key        = fs.String("key", "", "without -spawn: the server's bootstrap key (it creates organizations)")
		workloads  = fs.String("workload", "uniform,hot_account,replay", "comma-separated workloads, run one after the other")
		jsonPath   = fs.String("json", "", "also write the results as JSON to this file")
		baseline   = fs.String("baseline", "", "with -spawn: then spawn this bare server (bench/cmd/barepay) and run the same workloads against it, printing each workload's throughput as a share of the bare server's")
		orgsPath   = fs.String("orgs-out", "", "write each organization setup creates to this file, a line each: its id and its first key's secret (keep it private)")
		cfg        bench.Config
	)
	fs.IntVar(&cfg.Connections, "connections", bench.DefaultConnections, "closed-loop workers, one keep-alive connection each")
	fs.DurationVar(&cfg.Duration, "duration", bench.DefaultDuration, "length of the measured phase of each workload")
	fs.DurationVar(&cfg.Warmup, "warmup", bench.DefaultWarmup, "load before the measured phase, not recorded")
	fs.Uint64Var(&cfg.RequestsMax, "requests", bench.DefaultRequestsMax, "at most this many measured requests per workload")
	fs.DurationVar(&cfg.RequestTimeout, "timeout", bench.DefaultRequestTimeout, "timeout of one request")
	fs.DurationVar(&cfg.SetupTimeout, "setup-timeout", bench.DefaultSetupTimeout, "timeout of each workload's setup")
	fs.IntVar(&cfg.Keys, "keys", bench.DefaultKeys, "API keys each workload rotates over (each key is limited to 100 req/s), spread over the organizations; hot_account, all in one organization, holds at most 1000 of them")
	fs.IntVar(&cfg.Orgs, "orgs", bench.DefaultOrgs, "organizations of uniform and replay")
	fs.IntVar(&cfg.ReplayReferences, "replay-refs", bench.DefaultReplayReferences, "payouts replay creates once, then re-sends")
	fs.IntVar(&cfg.ServerPID, "server-pid", 0, "without -spawn, with -window: process id of the server, whose resident memory (RSS) each window reports")
	fs.DurationVar(&cfg.Window, "window", 0, "soak mode: also report each back-to-back window of this length of the measured phase (e.g. 5s); 0 for off")
	fs.IntVar(&cfg.NoiseExports, "noise-exports", 0, "noisy neighbour: goroutines exporting the transactions of an extra organization with a long history during the measured phase; 0 for none")
	fs.IntVar(&cfg.NoisePayouts, "noise-payouts", bench.DefaultNoisePayouts, "with -noise-exports: payouts setup creates in the noisy organization's history")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "paybench: unexpected arguments %v\n", fs.Args())
		return 2
	}
	wls, err := bench.ParseWorkloads(*workloads)
	if err != nil {
		fmt.Fprintln(stderr, "paybench:", err)
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case set["server-pid"] && *spawn != "":
		fmt.Fprintln(stderr, "paybench: -spawn reads its own server's memory: drop -server-pid")
		return 2
	case set["server-pid"] && cfg.Window == 0:
		fmt.Fprintln(stderr, "paybench: -server-pid is read only in soak mode: add -window")
		return 2
	case set["noise-payouts"] && cfg.NoiseExports == 0:
		fmt.Fprintln(stderr, "paybench: -noise-payouts needs -noise-exports")
		return 2
	}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintln(stderr, "paybench:", err)
		return 2
	}
	cfg.Progress = stderr
	if *orgsPath != "" {
		f, err := os.OpenFile(*orgsPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			fmt.Fprintln(stderr, "paybench:", err)
			return 1
		}
		defer f.Close()
		cfg.OrgsOut = f
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	report := &bench.Report{StartedAt: time.Now().UTC(), CPUs: runtime.NumCPU()}
	var srv *bench.Server // when spawned
	switch {
	case *spawn != "":
		if *addr != "" || *key != "" {
			fmt.Fprintln(stderr, "paybench: -spawn starts its own server: drop -addr and -key")
			return 2
		}
		sc := bench.SpawnConfig{Binary: *spawn, Args: strings.Fields(*serverArgs)}
		if *serverLog != "" {
			f, err := os.Create(*serverLog)
			if err != nil {
				fmt.Fprintln(stderr, "paybench:", err)
				return 2
			}
			defer f.Close()
			sc.Log = f
		}
		srv, err = bench.Spawn(ctx, sc)
		if err != nil {
			fmt.Fprintln(stderr, "paybench:", err)
			return 2
		}
		defer func() {
			if err := srv.Stop(); err != nil {
				fmt.Fprintln(stderr, "paybench: stop server:", err)
			}
		}()
		fmt.Fprintf(stderr, "paybench: spawned %s on %s\n", *spawn, srv.Addr)
		cfg.Addr, cfg.Key, cfg.ServerPID = srv.Addr, srv.BootstrapKey, srv.PID()
		report.Spawned = true
	case *addr != "":
		addrs := bench.SplitAddrs(*addr)
		if len(addrs) == 0 {
			fmt.Fprintln(stderr, "paybench: -addr: no address")
			return 2
		}
		for _, a := range addrs {
			if err := bench.CheckLoopback(a); err != nil {
				fmt.Fprintln(stderr, "paybench: -addr:", err)
				return 2
			}
		}
		if *key == "" {
			fmt.Fprintln(stderr, "paybench: -addr needs -key, the server's bootstrap key")
			return 2
		}
		if cfg.ServerPID > 0 {
			if _, err := bench.ReadRSS(cfg.ServerPID); err != nil {
				fmt.Fprintln(stderr, "paybench: -server-pid:", err)
				return 2
			}
		}
		cfg.Addr, cfg.Key = *addr, *key
	default:
		fmt.Fprintln(stderr, "paybench: give -spawn PATH, or -addr host:port and -key")
		fs.Usage()
		return 2
	}
	report.Target = cfg.Addr

	code := 0
	report.Results, code = runWorkloads(ctx, stderr, cfg, wls, srv)
	if len(report.Results) > 0 {
		fmt.Fprintln(stdout)
		if err := bench.WriteTable(stdout, report.Results); err != nil {
			fmt.Fprintln(stderr, "paybench:", err)
			code = 2
		}
	}
	if *baseline != "" && srv != nil && code == 0 {
		if err := srv.Stop(); err != nil {
			fmt.Fprintln(stderr, "paybench: stop server:", err)
		}
		bare, err := bench.Spawn(ctx, bench.SpawnConfig{Binary: *baseline})
		if err != nil {
			fmt.Fprintln(stderr, "paybench: baseline:", err)
			return 2
		}
		fmt.Fprintf(stderr, "paybench: spawned the baseline %s on %s\n", *baseline, bare.Addr)
		bcfg := cfg
		bcfg.Addr, bcfg.Key, bcfg.ServerPID, bcfg.OrgsOut = bare.Addr, bare.BootstrapKey, bare.PID(), nil
		report.Baseline, code = runWorkloads(ctx, stderr, bcfg, wls, bare)
		if err := bare.Stop(); err != nil {
			fmt.Fprintln(stderr, "paybench: stop baseline:", err)
		}
		fmt.Fprintln(stdout)
		if err := bench.WriteRatios(stdout, report.Results, report.Baseline); err != nil {
			fmt.Fprintln(stderr, "paybench:", err)
			code = 2
		}
	}
	if *jsonPath != "" {
		if err := writeJSON(*jsonPath, report); err != nil {
			fmt.Fprintln(stderr, "paybench:", err)
			code = 2
		}
	}
	return code
}

// runWorkloads runs each workload in turn against cfg's server (srv when
// spawned), stopping early if a spawned server exits.
func runWorkloads(ctx context.Context, stderr io.Writer, cfg bench.Config, wls []*bench.Workload, srv *bench.Server) ([]*bench.Result, int) {
	var results []*bench.Result
	code := 0
	for _, w := range wls {
		if srv != nil && exited(srv) {
			break
		}
		fmt.Fprintf(stderr, "%s: %s\n", w.Name, w.Measures)
		res, err := bench.Run(ctx, cfg, w)
		if res != nil {
			results = append(results, res)
			if res.Failed() {
				code = 1
			}
		}
		if err != nil {
			fmt.Fprintln(stderr, "paybench:", err)
			code = 2
			if res == nil || errors.Is(err, context.Canceled) {
				break
			}
		}
		if srv != nil && exited(srv) {
			// Not paybench's doing: it signals the server only at the end.
			status := "exit status 0"
			if err := srv.ExitErr(); err != nil {
				status = err.Error()
			}
			fmt.Fprintf(stderr, "paybench: the spawned server exited while %s ran (%s); stopping\n", w.Name, status)
			code = 2
		}
	}
	return results, code
}

// exited reports whether the spawned server's process has ended.
func exited(srv *bench.Server) bool {
	select {
	case <-srv.Exited():
		return true
	default:
		return false
	}
}

func writeJSON(path string, r *bench.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := bench.WriteJSON(f, r); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
