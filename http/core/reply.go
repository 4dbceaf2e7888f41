package core

import (
	"github.com/valyala/fasthttp"
	"payments/actors/app"

	"payments/actors"
	"payments/ledger"
)

// The one way a handler answers a write: the operation's actors.Reply
// carries the actors' error (ErrNotLeader, ErrOutcomeUnknown, …, mapped to
// the contract's by errorFromActors), or the ledger's refusal, or the
// result, which may be a replay of an earlier request.

// replyError is the error a reply carries, nil when its command applied.
func ReplyError(r actors.Reply) *ledger.Error {
	switch {
	case r.Err != nil:
		return errorFromActors(r.Err)
	case r.Result.Err != nil:
		return r.Result.Err
	}
	return nil
}

// answer answers a reply's error, or calls ok with its result.
func (c *Call) Answer(r actors.Reply, ok func(*ledger.Result)) {
	if e := ReplyError(r); e != nil {
		c.Fail(e)
		return
	}
	ok(&r.Result)
}

// reply answers a change: status with body's rendering of the result, or
// the reply's error.
func (c *Call) Reply(r actors.Reply, status int, body func(*ledger.Result) any) {
	if e := ReplyError(r); e != nil {
		c.Fail(e)
		return
	}
	c.OK(status, body(&r.Result))
}

// created answers a create: 201 for a new resource, 200 with the
// idempotent-replayed header for a replay, the error otherwise (with the
// header too when it repeats the refusal an earlier attempt got).
func (c *Call) Created(r actors.Reply, body func(*ledger.Result) any) {
	if r.Err == nil && r.Result.Replayed {
		c.Ctx.Response.Header.Set("idempotent-replayed", "true")
	}
	status := fasthttp.StatusCreated
	if r.Result.Replayed {
		status = fasthttp.StatusOK
	}
	c.Reply(r, status, body)
}

func NotFound(resource string) *ledger.Error {
	return &ledger.Error{Code: ledger.CodeNotFound, Message: resource + " not found"}
}

// SandboxOnly answers 404 on production, where simulations do not exist.
func (c *Call) SandboxOnly() bool {
	if c.Server.Config.Live {
		c.Fail(ErrSandboxOnly)
		return false
	}
	return true
}

// ErrSandboxOnly answers a simulation on production: there is none.
var ErrSandboxOnly = &ledger.Error{Code: ledger.CodeNotFound, Message: "Simulation endpoint not found: simulations exist only on the sandbox stack"}

// ResultBody is the body of the answer to a change of one record: the
// record of kind T that the result carries (of reads it out) rendered as a
// GET of it shows it (body).
func ResultBody[T, B any](of func(ledger.Result) *T, body func(*T) B) func(*ledger.Result) any {
	return func(res *ledger.Result) any { return body(of(*res)) }
}

// Create answers POST of a resource: the body decoded into a Req, its shape
// checked by input (every problem at once), the operation op called as the
// caller, and its reply answered by created with body's rendering.
func Create[Req, In any](c *Call, input func(*Req) (In, *ledger.Error), op func(app.Caller, In) actors.Reply, body func(*ledger.Result) any) {
	if in, ok := Input(c, input); ok {
		c.Created(op(c.Caller(), in), body)
	}
}

// Creator is the handler of POST {path} (Handlers.Create): Create with
// input, the App's operation op (a method expression: App.CreatePayout, …)
// on the server's App, and body.
func Creator[Req, In any](input func(*Req) (In, *ledger.Error), op func(App, app.Caller, In) actors.Reply, body func(*ledger.Result) any) func(*Call) {
	return func(c *Call) {
		Create(c, input, func(caller app.Caller, in In) actors.Reply { return op(c.Server.Config.App, caller, in) }, body)
	}
}

// Input is the request body decoded into a Req and its shape checked by
// input (every problem at once): what the handler acts on. A body that is
// not the expected JSON, or has problems, is answered, and ok is false.
func Input[Req, In any](c *Call, input func(*Req) (In, *ledger.Error)) (in In, ok bool) {
	var req Req
	if !c.Decode(&req) {
		return in, false
	}
	in, e := input(&req)
	if e != nil {
		c.Fail(e)
		return in, false
	}
	return in, true
}

// Update answers a change to the resource the path parameter param names
// (PATCH or PUT of it, or POST of an action on it): the parameter and the
// body read by ParamInput, the operation op called as the caller, and its
// reply answered 200 with body's rendering.
func Update[Req, In any](c *Call, param string, input func(id string, req *Req) (In, *ledger.Error), op func(app.Caller, In) actors.Reply, body func(*ledger.Result) any) {
	if in, ok := ParamInput(c, param, input); ok {
		c.Reply(op(c.Caller(), in), fasthttp.StatusOK, body)
	}
}

// Act answers an action without a body on the resource the path parameter
// param names (POST of an action on it, or a DELETE that answers the
// resource): the operation op called as the caller on the parameter, and
// its reply answered 200 with body's rendering.
func Act(c *Call, param string, op func(app.Caller, string) actors.Reply, body func(*ledger.Result) any) {
	if id, ok := c.Param(param); ok {
		c.Reply(op(c.Caller(), id), fasthttp.StatusOK, body)
	}
}

// Delete answers DELETE of the resource the path parameter param names:
// the operation op called as the caller on the parameter, and its reply
// answered 204 with no body.
func Delete(c *Call, param string, op func(app.Caller, string) actors.Reply) {
	if id, ok := c.Param(param); ok {
		c.Answer(op(c.Caller(), id), func(*ledger.Result) {
			c.Ctx.Response.ResetBody()
			c.Ctx.SetStatusCode(fasthttp.StatusNoContent)
		})
	}
}

// ParamInput is Input for the resource the path parameter param names: the
// parameter, then the body decoded into a Req and its shape checked by
// input for that id (every problem at once). A parameter that is not a path
// segment, or a body that is not the expected JSON or has problems, is
// answered, and ok is false.
func ParamInput[Req, In any](c *Call, param string, input func(id string, req *Req) (In, *ledger.Error)) (in In, ok bool) {
	id, ok := c.Param(param)
	if !ok {
		return in, false
	}
	return Input(c, func(req *Req) (In, *ledger.Error) { return input(id, req) })
}

// SimulationBody is the body of a sandbox simulation's answer: what it did,
// as S renders it.
type SimulationBody[S any] struct {
	Simulation S `json:"simulation"`
}

// Simulated is the body of the answer to a sandbox simulation: what render
// makes of its result, as a SimulationBody.
func Simulated[S any](render func(*ledger.Result) S) func(*ledger.Result) any {
	return func(res *ledger.Result) any { return &SimulationBody[S]{Simulation: render(res)} }
}

// SimulationInput is Input for a sandbox simulation: on production, where
// simulations do not exist, the request is answered and ok is false.
func SimulationInput[Req, In any](c *Call, input func(*Req) (In, *ledger.Error)) (in In, ok bool) {
	if !c.SandboxOnly() {
		return in, false
	}
	return Input(c, input)
}

// Refused answers the request with p's problems, if it has any, and says
// whether it did.
func (c *Call) Refused(p Problems) bool {
	if e := p.Err(); e != nil {
		c.Fail(e)
		return true
	}
	return false
}

// Param is the path parameter name; a missing one is answered, and ok is
// false.
func (c *Call) Param(name string) (v string, ok bool) {
	v, e := PathParam(c.Ctx, name)
	if e != nil {
		c.Fail(e)
		return "", false
	}
	return v, true
}
