package admin

import (
	"time"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
)

func init() {
	core.RegisterRoutes(core.Endpoint{Method: fasthttp.MethodPost, Path: "/v1/simulations/advance-clock", Scope: ledger.ScopeSimulationsWrite, H: advanceClock, Sim: &core.SimulationDoc{
		Operation: "advance_clock",
		Description: "Moves the organization's sandbox clock forward by `seconds` (1 to 31,622,400), then expires at once every quote, order and " +
			"checkout session whose deadline the jump passed, with their events. Every timestamp the organization sees (resources, events, ledger " +
			"entries) is on its clock from then on; webhook deliveries stay on real time.",
	}})
}

type AdvanceClockBody struct {
	Seconds *int64 `json:"seconds"`
}

type clockJSON struct {
	OrganizationID string `json:"organizationId"`
	OffsetSeconds  int64  `json:"offsetSeconds"`
	Now            string `json:"now"`
}

// advanceClock: POST /v1/simulations/advance-clock.
func advanceClock(c *core.Call) {
	if by, ok := core.SimulationInput(c, AdvanceClockInput); ok {
		r := c.Server.Config.App.AdvanceClock(c.Caller(), by)
		c.Reply(r.Reply, fasthttp.StatusOK, func(res *ledger.Result) any { return &clockBody{RenderClock(&r)} })
	}
}

type clockBody struct {
	Clock clockJSON `json:"clock"`
}

// renderClock is the organization's clock after an advance.
func RenderClock(r *app.ClockAdvanced) clockJSON {
	clk := r.Result.Clock
	return clockJSON{clk.OrgID, clk.OffsetMillis / 1000, core.Timestamp(r.At.UnixMilli() + clk.OffsetMillis)}
}

// advanceClockInput checks a request to advance the sandbox clock (the
// API's, or the dashboard's form in its shape).
func AdvanceClockInput(req *AdvanceClockBody) (time.Duration, *ledger.Error) {
	const secondsMax = ledger.ClockAdvanceMax / 1000
	switch {
	case req.Seconds == nil:
		return 0, ledger.FieldInvalid("seconds", "is required")
	case *req.Seconds < 1 || *req.Seconds > secondsMax:
		return 0, ledger.FieldInvalid("seconds", "must be between 1 and 31622400 (366 days)")
	}
	return time.Duration(*req.Seconds) * time.Second, nil
}
