package main

import (
	"encoding/json"
	"fmt"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// The binary serves Prometheus metrics on --metrics-addr: under a bounded
// load the key series move (requests by route template, the applied index,
// the log's fsyncs and appends, commits, webhook deliveries), no label holds
// an id, and every metric the shipped dashboard and alert rules name is in
// the scrape.
func TestMetricsOfTheBinary(t *testing.T) {
	endToEnd(t)
	var delivered atomic.Int64
	rcv := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		io.Copy(io.Discard, r.Body)
		delivered.Add(1)
		w.WriteHeader(nethttp.StatusOK)
	}))
	defer rcv.Close()

	p := startServer(t, t.TempDir(), "--metrics-addr", "127.0.0.1:0", "--rate-limit", "1000000", "--webhook-timeout", "2s")
	var metricsAddr string
	select {
	case metricsAddr = <-p.metrics:
	case <-time.After(20 * time.Second):
		t.Fatalf("no metrics_addr line\n%s", p.stderr)
	}
	p.waitReady()
	// Ready means a leader is known; the bootstrap key commits just after.
	waitUntil(t, 10*time.Second, "the endpoint created", func() bool {
		st, err := call(p.addr, "POST", "/v1/webhooks/endpoints",
			map[string]any{"url": rcv.URL + "/hook", "events": []string{"account.credited"}}, nil)
		if st != 401 && !(err == nil && st == 201) {
			t.Fatalf("create endpoint: %d %v", st, err)
		}
		return err == nil && st == 201
	})
	before := scrape(t, metricsAddr)

	fundGHS(t, p.addr, "100000.00", "metrics-seed")
	// A bounded load: payoutsTotal payouts from 8 clients, then a read of
	// each of a few by id (a route with a path parameter).
	const payoutsTotal, clients = 200, 8
	var mu sync.Mutex
	var ids []string
	var wg sync.WaitGroup
	loadDeadline := time.Now().Add(60 * time.Second)
	var failures atomic.Int64
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c; i < payoutsTotal && time.Now().Before(loadDeadline); i += clients {
				var body struct {
					Payout payoutView `json:"payout"`
				}
				st, err := call(p.addr, "POST", "/v1/payouts", mtnPayout("1.00", fmt.Sprintf("metrics-%d", i)), &body)
				if err != nil || st != 201 {
					failures.Add(1)
					continue
				}
				mu.Lock()
				ids = append(ids, body.Payout.ID)
				mu.Unlock()
			}
		}()
	}
	// Scrapes during the load: each is served and parses, and the request
	// counter never goes back.
	loadDone := make(chan struct{})
	scraped := make(chan []float64, 1)
	go func() {
		var seen []float64
		defer func() { scraped <- seen }()
		for {
			select {
			case <-loadDone:
				return
			case <-time.After(50 * time.Millisecond):
			}
			families, err := fetchMetrics(metricsAddr)
			if err != nil {
				t.Errorf("scrape during the load: %v", err)
				return
			}
			seen = append(seen, value(families, "payments_http_requests_total", "route", "/v1/payouts", "code", "201"))
		}
	}()
	wg.Wait()
	close(loadDone)
	during := <-scraped
	t.Logf("scraped %d times during the load: POST /v1/payouts 201 counts %v", len(during), during)
	for i := 1; i < len(during); i++ {
		if during[i] < during[i-1] {
			t.Errorf("the request counter went back during the load: %v", during)
		}
	}
	if n := failures.Load(); n > 0 || len(ids) != payoutsTotal {
		t.Fatalf("%d payouts failed, %d of %d acknowledged", n, len(ids), payoutsTotal)
	}
	for _, id := range ids[:5] {
		if st, err := call(p.addr, "GET", "/v1/payouts/"+id, nil, nil); err != nil || st != 200 {
			t.Fatalf("get payout %s: %d %v", id, st, err)
		}
	}
	// An unauthenticated request: an error answer by code.
	req, _ := nethttp.NewRequest("GET", "http://"+p.addr+"/v1/payouts", nil)
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 401 {
		t.Fatalf("unauthenticated: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	// Webhook deliveries are recorded through the log after the receiver
	// answers: wait for the counter.
	var after map[string]*dto.MetricFamily
	if !eventually(20*time.Second, func() bool {
		after = scrape(t, metricsAddr)
		return value(after, "payments_webhook_attempts_total", "outcome", "succeeded") >= 1
	}) {
		t.Fatalf("no succeeded webhook attempt counted (receiver got %d)\n%s", delivered.Load(), p.stderr)
	}

	grew := []struct {
		name, labelName, labelValue string
		atLeast                     float64
	}{
		{"payments_http_requests_total", "route", "/v1/payouts", payoutsTotal}, // POST, 201 (and the 401 GET)
		{"payments_http_requests_total", "route", "/v1/payouts/{id}", 5},
		{"payments_http_request_duration_seconds", "route", "/v1/payouts", payoutsTotal},
		{"payments_http_errors_total", "error", "unauthorized", 1},
		{"payments_raft_applied_index", "", "", 1},
		{"payments_raft_commit_index", "", "", 1},
		{"payments_raft_state_store_index", "", "", 1},
		{"payments_wal_fsync_duration_seconds", "", "", 1},
		{"payments_wal_append_duration_seconds", "", "", 1},
		{"payments_wal_appended_entries_total", "", "", 1},
		{"payments_raft_commit_duration_seconds", "", "", 1},
		{"payments_actor_messages_posted_total", "", "", payoutsTotal},
	}
	for _, g := range grew {
		labels := labelPair(g.labelName, g.labelValue)
		d := value(after, g.name, labels...) - value(before, g.name, labels...)
		if d < g.atLeast {
			t.Errorf("%s%v grew by %v under the load, want at least %v", g.name, labels, d, g.atLeast)
		}
	}
	positive := []struct{ name, labelName, labelValue string }{
		{"payments_raft_is_leader", "", ""},
		{"payments_raft_state", "state", "Leader"},
		{"payments_raft_leader_known", "", ""},
		{"payments_raft_term", "", ""},
		{"payments_ledger_open_records", "", ""},
		{"payments_state_store_disk_bytes", "", ""},
		{"payments_wal_disk_bytes", "", ""},
		{"payments_data_dir_free_bytes", "", ""},
		{"payments_actors_alive", "", ""},
		{"payments_node_info", "node_id", "n1"},
		{"go_goroutines", "", ""},
		{"process_resident_memory_bytes", "", ""},
	}
	for _, g := range positive {
		labels := labelPair(g.labelName, g.labelValue)
		if v := value(after, g.name, labels...); v <= 0 {
			t.Errorf("%s%v = %v, want > 0", g.name, labels, v)
		}
	}
	// Label values are templates, codes and states, never ids.
	for name, f := range after {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				for _, id := range ids {
					if strings.Contains(l.GetValue(), id) {
						t.Fatalf("%s has a label holding the id %s: %s=%q", name, id, l.GetName(), l.GetValue())
					}
				}
			}
		}
	}

	checkReferencedMetrics(t, after)
}

// decodeFile reads the file at path into v with unmarshal.
func decodeFile(t *testing.T, path string, unmarshal func([]byte, any) error, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
}

// checkReferencedMetrics fails for every metric the dashboard or the alert
// rules name that the scrape lacks.
func checkReferencedMetrics(t *testing.T, scraped map[string]*dto.MetricFamily) {
	t.Helper()
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	decodeFile(t, "../../http/metrics/dashboard.json", json.Unmarshal, &dash)
	var exprs []string
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	if len(exprs) < 20 {
		t.Fatalf("dashboard.json has %d queries; did it lose its panels?", len(exprs))
	}

	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	decodeFile(t, "../../http/metrics/alerts.yml", yaml.Unmarshal, &rules)
	alerts := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("alerts.yml group %s: a rule without alert or expr: %+v", g.Name, r)
			}
			alerts[r.Alert] = true
			exprs = append(exprs, r.Expr)
		}
	}
	for _, want := range []string{"PaymentsNoLeader", "PaymentsLeaderFlapping", "PaymentsApplyLag", "PaymentsFsyncSlow", "PaymentsWebhookBacklog", "PaymentsDiskFilling"} {
		if !alerts[want] {
			t.Errorf("alerts.yml has no %s rule", want)
		}
	}

	names := regexp.MustCompile(`\b(?:payments|go|process)_[a-z0-9_]+`)
	seen := map[string]bool{}
	for _, e := range exprs {
		for _, n := range names.FindAllString(e, -1) {
			seen[n] = true
		}
	}
	var missing []string
	for n := range seen {
		base := n
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if b, ok := strings.CutSuffix(n, suffix); ok && scraped[b] != nil && scraped[b].GetType() == dto.MetricType_HISTOGRAM {
				base = b
			}
		}
		if scraped[base] == nil {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the dashboard or alert rules name metrics the node does not serve: %v", missing)
	}
}

func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	families, err := fetchMetrics(addr)
	if err != nil {
		t.Fatal(err)
	}
	return families
}

func fetchMetrics(addr string) (map[string]*dto.MetricFamily, error) {
	resp, err := nethttp.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("parse the scrape: %w", err)
	}
	return families, nil
}

// labelPair is value's label pairs for a series named by one label, or
// none for name "".
func labelPair(name, value string) []string {
	if name == "" {
		return []string{}
	}
	return []string{name, value}
}

// value sums the series of name whose labels include the given name/value
// pairs: a counter's or gauge's value, a histogram's count.
func value(families map[string]*dto.MetricFamily, name string, labelPairs ...string) float64 {
	f := families[name]
	if f == nil {
		return 0
	}
	var sum float64
series:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labelPairs); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == labelPairs[i] && l.GetValue() == labelPairs[i+1] {
					found = true
				}
			}
			if !found {
				continue series
			}
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			sum += m.Untyped.GetValue()
		}
	}
	return sum
}

// On a three-process cluster the Raft series say what the alert rules
// assume: one leader, every node knowing it, followers in touch, every
// node's applied index reaching the commit; a write through a follower is
// counted on both nodes; and when the leader dies the term rises and a
// survivor leads.
func TestClusterMetrics(t *testing.T) {
	endToEnd(t)
	procs := startCluster(t, 3, "--metrics-addr", "127.0.0.1:0")
	metricsOf := map[*proc]string{}
	for _, p := range procs {
		select {
		case metricsOf[p] = <-p.metrics:
		case <-time.After(20 * time.Second):
			t.Fatalf("no metrics_addr line\n%s", p.stderr)
		}
	}
	leader, followers := roles(t, procs)
	fundGHS(t, followers[0].addr, "1000.00", "cluster-metrics-seed")
	const writes = 20
	for i := range writes {
		if st, err := call(followers[i%2].addr, "POST", "/v1/payouts", mtnPayout("1.00", fmt.Sprintf("cluster-metrics-%d", i)), nil); err != nil || st != 201 {
			t.Fatalf("payout %d through a follower: %d %v", i, st, err)
		}
	}

	// Every node applies what the leader committed.
	var scrapes map[*proc]map[string]*dto.MetricFamily
	waitUntil(t, 15*time.Second, "the followers' applied index reaches the leader's commit index", func() bool {
		scrapes = map[*proc]map[string]*dto.MetricFamily{}
		for _, p := range procs {
			scrapes[p] = scrape(t, metricsOf[p])
		}
		commit := value(scrapes[leader], "payments_raft_commit_index")
		caughtUp := commit > 0
		for _, p := range procs {
			caughtUp = caughtUp && value(scrapes[p], "payments_raft_applied_index") >= commit
		}
		return caughtUp
	})
	term := value(scrapes[leader], "payments_raft_term")
	leaders := 0.0
	for _, p := range procs {
		s := scrapes[p]
		leaders += value(s, "payments_raft_is_leader")
		if value(s, "payments_raft_leader_known") != 1 || value(s, "payments_raft_term") != term {
			t.Errorf("%s: leader_known %v, term %v (the leader's %v)", p.addr,
				value(s, "payments_raft_leader_known"), value(s, "payments_raft_term"), term)
		}
	}
	if leaders != 1 {
		t.Errorf("%v nodes report raft_is_leader 1, want 1", leaders)
	}
	for _, f := range followers {
		s := scrapes[f]
		if value(s, "payments_raft_state", "state", "Follower") != 1 {
			t.Errorf("follower %s is not in state Follower", f.addr)
		}
		if c := value(s, "payments_raft_last_contact_seconds"); c < 0 || c > 5 {
			t.Errorf("follower %s last heard from the leader %vs ago", f.addr, c)
		}
	}
	forwarded := value(scrapes[followers[0]], "payments_http_requests_total", "route", "/v1/payouts", "code", "201") +
		value(scrapes[followers[1]], "payments_http_requests_total", "route", "/v1/payouts", "code", "201")
	if served := value(scrapes[leader], "payments_http_requests_total", "route", "/v1/payouts", "code", "201"); forwarded != writes || served != writes {
		t.Errorf("payouts through the followers: they count %v, the leader %v; want %d each", forwarded, served, writes)
	}

	leader.kill()
	newLeaders, risen := 0.0, false
	if !eventually(20*time.Second, func() bool {
		newLeaders, risen = 0, true
		for _, f := range followers {
			s, err := fetchMetrics(metricsOf[f])
			if err != nil {
				t.Fatal(err)
			}
			newLeaders += value(s, "payments_raft_is_leader")
			risen = risen && value(s, "payments_raft_term") > term
		}
		return newLeaders == 1 && risen
	}) {
		t.Fatalf("after the leader died: %v survivors lead, terms risen %v", newLeaders, risen)
	}
}
