package admin

import (
	stdjson "encoding/json"
	"sort"

	"github.com/goccy/go-json/jsontext"

	"github.com/valyala/fasthttp"

	"payments/http/core"
	"payments/rails"
)

// The simulation index, GET /v1/simulations: every deterministic sandbox
// behaviour, built from the definitions the simulators act on, so it cannot
// drift from them. The triggers of the normal API are rails' Trigger values
// (the sandbox rail and name resolver select outcomes with them); the
// explicit simulation endpoints are the routes whose sim field is set.

func init() {
	core.RegisterRoutes(core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/simulations", H: listSimulations})
}

// simulationTriggers are the sandbox behaviours driven through the normal
// API, in the order the index lists them.
var simulationTriggers = []*rails.Trigger{&rails.PayoutTrigger, &rails.CollectionTrigger, &rails.ValidationTrigger}

type simulationJSON struct {
	Operation   string         `json:"operation"`
	Method      string         `json:"method"`
	Path        string         `json:"path"`
	Description string         `json:"description"`
	Outcomes    []string       `json:"outcomes"` // explicit outcome values; none for triggers
	Trigger     *triggerJSON   `json:"trigger,omitempty"`
	Scenarios   jsontext.Value `json:"scenarios,omitzero"`
}

type triggerJSON struct {
	Field string `json:"field"`
	Rule  string `json:"rule"`
}

// simulationIndex lists the triggers, then the simulation endpoints by path
// and method.
func simulationIndex(s *core.Server) []simulationJSON {
	out := make([]simulationJSON, 0, len(simulationTriggers)+8)
	for _, t := range simulationTriggers {
		scenarios := make(map[string]string, len(t.Scenarios)+1)
		for k, o := range t.Scenarios {
			scenarios[k] = string(o)
		}
		scenarios["default"] = string(t.Default)
		sorted, err := stdjson.Marshal(scenarios) // map keys in order
		if err != nil {
			panic(err)
		}
		out = append(out, simulationJSON{
			Operation: t.Operation, Method: t.Method, Path: t.Path, Description: t.Description,
			Outcomes: []string{}, Trigger: &triggerJSON{Field: t.Field, Rule: t.Rule}, Scenarios: sorted,
		})
	}
	var explicit []simulationJSON
	for _, e := range s.Endpoints {
		if e.Sim == nil {
			continue
		}
		outcomes := e.Sim.Outcomes
		if outcomes == nil {
			outcomes = []string{}
		}
		explicit = append(explicit, simulationJSON{
			Operation: e.Sim.Operation, Method: e.Method, Path: e.Path,
			Description: e.Sim.Description, Outcomes: outcomes,
		})
	}
	sort.Slice(explicit, func(i, j int) bool {
		if explicit[i].Path != explicit[j].Path {
			return explicit[i].Path < explicit[j].Path
		}
		return explicit[i].Method < explicit[j].Method
	})
	return append(out, explicit...)
}

// listSimulations: GET /v1/simulations. Not paginated: the index is short,
// but it comes in the list envelope.
func listSimulations(c *core.Call) {
	if !c.SandboxOnly() {
		return
	}
	c.OK(fasthttp.StatusOK, &core.ListBody[simulationJSON]{Data: simulationIndex(c.Server)})
}
