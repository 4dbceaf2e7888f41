package app_test

import (
	"testing"
	"time"

	"payments/actors"
	"payments/actors/actorstest"
	"payments/actors/actorstest/wait"
	"payments/actors/app"
	"payments/ledger"
	"payments/rails"
)

// stack is the application over a real single-node Raft cluster on Pebble
// in a temporary directory and the actors, with the sandbox rails.
type stack struct {
	sys *actors.System
	app *app.App
	// org is an organization made by CreateOrganization, and owner the
	// caller of its first key, which holds every merchant scope.
	org   string
	owner app.Caller
}

type stackOptions struct {
	live     bool
	webhooks actors.WebhookConfig
}

// fastSandbox completes the sandbox's payouts and collections at once.
var fastSandbox = rails.SandboxTiming{SubmitLatency: time.Millisecond, Settlement: 20 * time.Millisecond, Timeout: 50 * time.Millisecond}

func newStack(t *testing.T, opts stackOptions) *stack {
	t.Helper()
	node := actorstest.OpenNode(t)
	sys := actorstest.Start(t, node, actors.Config{Rail: rails.NewSandbox(fastSandbox), Webhooks: opts.webhooks})
	s := &stack{sys: sys, app: app.New(app.Config{System: sys, Live: opts.live})}
	r := s.app.CreateOrganization(app.Caller{}, app.NewOrganization{Name: "Test org", Country: "GH", DefaultCurrency: "GHS"})
	mustApply(t, "create the organization", r.Reply)
	s.org = r.Result.Organization.ID
	key := *r.Result.APIKey
	s.owner = app.Caller{OrgID: s.org, Key: &key}
	return s
}

// mustApply fails the test unless r is an applied command.
func mustApply(t *testing.T, what string, r actors.Reply) {
	t.Helper()
	if r.Err != nil || r.Result.Err != nil {
		t.Fatalf("%s: %v %v", what, r.Err, r.Result.Err)
	}
}

// wantCode checks that r is the ledger's (or the operation's) refusal
// with code; "" wants an applied command.
func wantCode(t *testing.T, what string, r actors.Reply, code ledger.Code) {
	t.Helper()
	switch {
	case r.Err != nil:
		t.Fatalf("%s: %v", what, r.Err)
	case code == "" && r.Result.Err != nil:
		t.Fatalf("%s: refused: %v", what, r.Result.Err)
	case code != "" && (r.Result.Err == nil || r.Result.Err.Code != code):
		t.Fatalf("%s: got %v, want %s", what, r.Result.Err, code)
	}
}

// codeOf is the code of an operation's error, "" for none.
func codeOf(err error) ledger.Code {
	if err == nil {
		return ""
	}
	return ledger.AsError(err).Code
}

// replyCode is the code of r's refusal, "" when its command applied.
func replyCode(t *testing.T, r actors.Reply) ledger.Code {
	t.Helper()
	if r.Err != nil {
		t.Fatalf("the write path failed: %v", r.Err)
	}
	if r.Result.Err != nil {
		return r.Result.Err.Code
	}
	return ""
}

// waitFor waits until cond holds, at most 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.For(t, 10*time.Second, 5*time.Millisecond, what, cond)
}
