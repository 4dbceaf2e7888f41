package http

import (
	"github.com/valyala/fasthttp"

	"payments/ledger"
)

func init() {
	registerRoutes(endpoint{fasthttp.MethodPost, "/v1/simulations/advance-clock", ledger.ScopeSimulationsWrite, (*call).advanceClock, &simulationDoc{
		operation: "advance_clock",
		description: "Moves the organization's sandbox clock forward by `seconds` (1 to 31,622,400), then expires at once every quote, order and " +
			"checkout session whose deadline the jump passed, with their events. Every timestamp the organization sees (resources, events, ledger " +
			"entries) is on its clock from then on; webhook deliveries stay on real time.",
	}})
}

type advanceClockBody struct {
	Seconds *int64 `json:"seconds"`
}

type clockJSON struct {
	OrganizationID string `json:"organizationId"`
	OffsetSeconds  int64  `json:"offsetSeconds"`
	Now            string `json:"now"`
}

// advanceClock: POST /v1/simulations/advance-clock.
func (c *call) advanceClock() {
	if !c.sandboxOnly() {
		return
	}
	var req advanceClockBody
	if !c.decode(&req) {
		return
	}
	const secondsMax = ledger.ClockAdvanceMax / 1000
	switch {
	case req.Seconds == nil:
		c.fail(ledger.FieldInvalid("seconds", "is required"))
		return
	case *req.Seconds < 1 || *req.Seconds > secondsMax:
		c.fail(ledger.FieldInvalid("seconds", "must be between 1 and 31622400 (366 days)"))
		return
	}
	ctx, cancel := c.commitContext()
	defer cancel()
	at := c.s.cfg.Actors.Now().UnixMilli()
	r := c.s.cfg.Actors.Propose(ctx, &ledger.AdvanceClock{At: at, OrgID: c.org, Millis: *req.Seconds * 1000})
	if r.Err != nil {
		c.fail(errorFromActors(r.Err))
		return
	}
	if r.Result.Err != nil {
		c.fail(r.Result.Err)
		return
	}
	clk := r.Result.Clock
	c.ok(fasthttp.StatusOK, struct {
		Clock clockJSON `json:"clock"`
	}{clockJSON{clk.OrgID, clk.OffsetMillis / 1000, timestamp(at + clk.OffsetMillis)}})
}
