package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"payments/actors"
	"payments/http/core"
	"payments/ledger"
	"payments/rails"
)

// Every route under /v1/simulations/ describes itself for the index, and the
// index lists exactly those routes: a simulation endpoint cannot be served
// without being listed.
func TestSimulationRoutesAreIndexed(t *testing.T) {
	s := core.New(core.Config{})
	listed := map[string]bool{}
	for _, e := range simulationIndex(s) {
		listed[e.Method+" "+e.Path] = true
	}
	seen := 0
	for _, e := range s.Endpoints {
		if e.Path == "/v1/simulations" {
			if e.Sim != nil {
				t.Errorf("the index itself carries a simulation description")
			}
			continue
		}
		if !strings.HasPrefix(e.Path, "/v1/simulations/") {
			continue
		}
		seen++
		if e.Sim == nil || e.Sim.Operation == "" || e.Sim.Description == "" {
			t.Errorf("%s %s is a simulation endpoint without a sim description", e.Method, e.Path)
			continue
		}
		if !listed[e.Method+" "+e.Path] {
			t.Errorf("%s %s is not in the index", e.Method, e.Path)
		}
	}
	if seen == 0 {
		t.Fatal("no simulation endpoints found in the route table")
	}
}

// indexEntry is an index entry as a client reads it.
type indexEntry struct {
	Operation string            `json:"operation"`
	Path      string            `json:"path"`
	Trigger   *triggerJSON      `json:"trigger"`
	Scenarios map[string]string `json:"scenarios"`
}

func readIndex(t *testing.T) map[string]indexEntry {
	t.Helper()
	b, err := json.Marshal(simulationIndex(core.New(core.Config{})))
	if err != nil {
		t.Fatal(err)
	}
	var entries []indexEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatal(err)
	}
	out := map[string]indexEntry{}
	for _, e := range entries {
		if e.Trigger != nil {
			out[e.Path] = e
		}
	}
	return out
}

// scenarioOf is what the index says happens for a trigger value.
func scenarioOf(e indexEntry, value string) string {
	if o, ok := e.Scenarios[value]; ok {
		return o
	}
	return e.Scenarios["default"]
}

// behaviour is what a client can observe of a sandbox instruction: whether
// submission timed out, whether the first status call failed transiently,
// how long the rail said to wait, and how it ended.
type behaviour struct {
	submitTimedOut bool
	transientFirst bool
	wait           time.Duration
	completed      bool
}

// expected maps each outcome name the index can show to the behaviour it
// promises. rejected and failed look alike from outside (the rail says no
// at once); the message then names the cents, which the test checks too.
func expected(outcome string, timing rails.SandboxTiming) (behaviour, bool) {
	switch rails.Outcome(outcome) {
	case rails.OutcomeCompleted:
		return behaviour{completed: true}, true
	case rails.OutcomeRejected, rails.OutcomeFailed:
		return behaviour{}, true
	case rails.OutcomeTimeoutThenReconciled:
		return behaviour{submitTimedOut: true, completed: true}, true
	case rails.OutcomeDelayedCompletion:
		return behaviour{wait: timing.DelayedCompletion, completed: true}, true
	case rails.OutcomeCustomerTimeout:
		return behaviour{wait: timing.CustomerTimeout}, true
	case rails.OutcomeTransientErrorThenReconciled:
		return behaviour{transientFirst: true, completed: true}, true
	}
	return behaviour{}, false
}

// The scenarios the index shows for payouts and collections are the ones
// the sandbox rail acts on: for every value of the cents, drive the real
// simulator and compare what it does with what the index promises.
func TestIndexedTriggersMatchTheSandbox(t *testing.T) {
	timing := rails.SandboxTiming{DelayedCompletion: time.Hour, CustomerTimeout: 2 * time.Hour}
	index := readIndex(t)
	ctx := context.Background()
	for _, path := range []string{"/v1/payouts", "/v1/collections"} {
		entry, ok := index[path]
		if !ok || entry.Trigger.Rule != "last_two_decimal_digits" {
			t.Fatalf("index has no amount trigger for %s: %+v", path, entry)
		}
		for cents := 0; cents < 100; cents++ {
			cc := fmt.Sprintf("%02d", cents)
			want, ok := expected(scenarioOf(entry, cc), timing)
			if !ok {
				t.Fatalf("%s %s: the index names an outcome the test does not know: %s", path, cc, scenarioOf(entry, cc))
			}
			sb := rails.NewSandbox(timing)
			amount := ledger.Minor(10_000 + cents)
			var got behaviour
			var final actors.RailOutcome
			var err error
			if path == "/v1/payouts" {
				p := ledger.Payout{ID: "pay_ghs_" + cc, Spec: ledger.PayoutSpec{Currency: "GHS", Amount: amount, Method: "gh_mtn"}}
				_, err = sb.SubmitPayout(ctx, p)
				got.submitTimedOut = errors.Is(err, actors.ErrRailTimeout)
				final, err = sb.PayoutOutcome(ctx, p)
			} else {
				c := ledger.Collection{ID: "col_" + cc, Spec: ledger.CollectionSpec{Currency: "GHS", Amount: amount, Method: "gh_mtn"}}
				_, err = sb.StartCollection(ctx, c)
				got.submitTimedOut = errors.Is(err, actors.ErrRailTimeout)
				final, err = sb.CollectionOutcome(ctx, c)
				if errors.Is(err, actors.ErrRailTransient) {
					got.transientFirst = true
					final, err = sb.CollectionOutcome(ctx, c)
				}
			}
			if err != nil {
				t.Fatalf("%s %s: %v", path, cc, err)
			}
			if !final.Final {
				// Waiting: round up to the scenario's wait, then the outcome.
				got.wait = final.CheckAfter.Round(time.Hour)
				got.completed = scenarioOf(entry, cc) == string(rails.OutcomeDelayedCompletion)
			} else {
				got.completed = final.Completed
				if !final.Completed && !strings.Contains(final.Message, "."+cc) {
					t.Errorf("%s %s: failure message %q does not name its cents", path, cc, final.Message)
				}
			}
			if got != want {
				t.Errorf("%s cents %s: the index says %s (%+v), the sandbox does %+v", path, cc, scenarioOf(entry, cc), want, got)
			}
		}
	}
}

// The validation suffixes the index shows are the ones the sandbox name
// resolver answers with.
func TestIndexedValidationMatchesTheSandbox(t *testing.T) {
	entry, ok := readIndex(t)["/v1/validate"]
	if !ok || entry.Trigger.Rule != "suffix" || entry.Trigger.Field != "accountNumber" {
		t.Fatalf("index has no suffix trigger for validation: %+v", entry)
	}
	m, _ := rails.DefaultCatalogue().Method("gh_mtn")
	values := []string{"123456", "000003", "100000"}
	for k := range entry.Scenarios {
		if k != "default" {
			values = append(values, k)
		}
	}
	for _, suffix := range values {
		res, err := (rails.SandboxNames{}).ResolveName(context.Background(), m, "233241"+suffix)
		if err != nil {
			t.Fatal(err)
		}
		if want := scenarioOf(entry, suffix); string(res.Outcome) != want {
			t.Errorf("suffix %s: the index says %s, the sandbox answers %s", suffix, want, res.Outcome)
		}
	}
}
