package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWorkloadsEndToEnd builds the real server, spawns it as -spawn does,
// runs every workload for about a second on two connections, and checks
// that every request got the workload's status and that the report adds up.
func TestWorkloadsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	bin := filepath.Join(t.TempDir(), "payments")
	build := exec.Command("go", "build", "-o", bin, "payments/cmd/payments")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var serverLog bytes.Buffer
	srv, err := Spawn(ctx, SpawnConfig{Binary: bin, Log: &serverLog})
	if err != nil {
		t.Fatalf("spawn: %v", err)
	}
	defer func() {
		// The log is complete once Stop has waited for the process.
		if err := srv.Stop(); err != nil {
			// Stopping cleanly is the server's contract, tested with the
			// server; here it is reported, not held against the load
			// generator.
			t.Logf("the server did not stop cleanly: %v\nits log:\n%s", err, tail(serverLog.Bytes(), 4000))
		}
	}()

	cfg := Config{
		Addr:        srv.Addr,
		Key:         srv.BootstrapKey,
		Connections: 2,
		Warmup:      200 * time.Millisecond,
		Duration:    time.Second,
		// Replays take well under 100µs on loopback: even two connections
		// need hundreds of keys to stay under 100 requests per second and
		// key.
		Keys:             1000,
		Orgs:             4,
		ReplayReferences: 32,
	}
	for _, w := range Workloads() {
		t.Run(w.Name, func(t *testing.T) {
			res, err := Run(ctx, cfg, w)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			expect := strconv.Itoa(w.Expect)
			if res.Requests == 0 {
				t.Fatalf("no requests measured: %+v", res)
			}
			if res.Errors != 0 || res.Unexpected != 0 || len(res.TransportErrors) != 0 {
				t.Errorf("%d errors, %d unexpected: statuses %v, transport errors %v",
					res.Errors, res.Unexpected, res.Statuses, res.TransportErrors)
			}
			if res.Statuses[expect] != res.Requests || res.Responses != res.Requests {
				t.Errorf("statuses %v for %d requests (%d responses); want all %s", res.Statuses, res.Requests, res.Responses, expect)
			}
			if res.WarmupErrors != 0 {
				t.Errorf("%d of %d warm-up requests failed", res.WarmupErrors, res.WarmupRequests)
			}
			l := res.Latency
			if !(0 < l.Min && l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
				t.Errorf("latencies out of order: %+v", l)
			}
			if l.Mean < l.Min || l.Mean > l.Max {
				t.Errorf("mean %v outside [%v, %v]", l.Mean, l.Min, l.Max)
			}
			if res.ElapsedSeconds < cfg.Duration.Seconds() || res.ElapsedSeconds > cfg.Duration.Seconds()+5 {
				t.Errorf("elapsed %.3fs for a %s run", res.ElapsedSeconds, cfg.Duration)
			}
			if rps := float64(res.Requests) / res.ElapsedSeconds; res.RequestsPerSecond != rps {
				t.Errorf("%.1f req/s, but %d requests in %.3fs is %.1f", res.RequestsPerSecond, res.Requests, res.ElapsedSeconds, rps)
			}

			// The JSON report reads back the same, to the microsecond.
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var back Result
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.Requests != res.Requests || back.Latency.P99.Round(time.Microsecond) != res.Latency.P99.Round(time.Microsecond) {
				t.Errorf("JSON round trip: %s", b)
			}
			t.Logf("%d requests, %.0f req/s, p50 %v p99 %v p999 %v max %v, statuses %v",
				res.Requests, res.RequestsPerSecond, l.P50, l.P99, l.P999, l.Max, res.Statuses)
		})
	}

	// Soak mode: three windows of a second, with the server's memory.
	t.Run("soak", func(t *testing.T) {
		soak := cfg
		soak.Duration, soak.Window, soak.ServerPID = 3*time.Second, time.Second, srv.PID()
		var orgs bytes.Buffer
		soak.OrgsOut = &orgs
		res, err := Run(ctx, soak, Uniform)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		// Each organization is written down with a key that reads what the
		// run wrote.
		lines := strings.Split(strings.TrimSpace(orgs.String()), "\n")
		if len(lines) != soak.Orgs {
			t.Fatalf("%d organizations written down, want %d:\n%s", len(lines), soak.Orgs, orgs.String())
		}
		org, key, _ := strings.Cut(lines[0], " ")
		req, _ := http.NewRequest("GET", "http://"+srv.Addr+"/v1/payouts?limit=1", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.HasPrefix(org, "org_") || resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"pay_`)) {
			t.Fatalf("%s's key lists its payouts: %d %s", org, resp.StatusCode, body)
		}
		if len(res.Windows) != 3 || res.Soak == nil {
			t.Fatalf("%d windows, summary %v; want 3 and a summary", len(res.Windows), res.Soak)
		}
		var requests uint64
		for i, w := range res.Windows {
			requests += w.Requests
			if w.Requests == 0 || w.RSSBytes == 0 || w.Errors != 0 || w.Latency.P50 == 0 {
				t.Errorf("window %d: %+v", i+1, w)
			}
			if i > 0 && w.StartSeconds != res.Windows[i-1].EndSeconds {
				t.Errorf("window %d starts at %.3fs, the previous one ended at %.3fs", i+1, w.StartSeconds, res.Windows[i-1].EndSeconds)
			}
		}
		if last := res.Windows[2].EndSeconds; last != res.ElapsedSeconds {
			t.Errorf("the last window ends at %.3fs, the measured phase at %.3fs", last, res.ElapsedSeconds)
		}
		if requests != res.Requests {
			t.Errorf("%d requests in the windows, %d in the run", requests, res.Requests)
		}
		s := res.Soak
		if s.MedianRequestsPerSecond <= 0 || s.MinWindowFraction <= 0 || s.MinWindowFraction > 1 ||
			s.Failures != 0 || s.RSSGrowthBytesPerRequest == nil {
			t.Errorf("summary %+v", s)
		}
		var table bytes.Buffer
		if err := WriteTable(&table, []*Result{res}); err != nil || !bytes.Contains(table.Bytes(), []byte("uniform: soak: median window")) {
			t.Errorf("table (%v):\n%s", err, table.String())
		}
		t.Logf("%s", table.Bytes())
	})

	// A noisy neighbour with a short history: its exports must all be
	// answered, and the workload's requests too.
	t.Run("noise", func(t *testing.T) {
		noisy := cfg
		noisy.NoiseExports, noisy.NoisePayouts = 2, 200
		res, err := Run(ctx, noisy, Uniform)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		n := res.Noise
		if n == nil {
			t.Fatal("no noise in the result")
		}
		// Each payout is a debit and a fee; the funding is one more row.
		if n.Exporters != 2 || n.Payouts != 200 || n.HistoryRows != 401 || n.Ranges != 1 {
			t.Errorf("noise %+v; want 2 exporters, 200 payouts, 401 rows in 1 range", n)
		}
		if n.Exports == 0 || n.Failures != 0 || n.ExportsPerSecond <= 0 || math.Abs(n.RowsPerSecond-n.ExportsPerSecond*401) > 1e-6*n.RowsPerSecond {
			t.Errorf("%d exports (%.1f/s, %.0f rows/s), %d failed: statuses %v, transport errors %v",
				n.Exports, n.ExportsPerSecond, n.RowsPerSecond, n.Failures, n.Statuses, n.TransportErrors)
		}
		if res.Failed() || res.Requests == 0 {
			t.Errorf("%d requests, %d unexpected", res.Requests, res.Unexpected)
		}
		t.Logf("noise: %s", n.line())
	})
}

func tail(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	return b[len(b)-n:]
}
