package app_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"payments/actors"
	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/webhooks"
)

// receiver is a webhook receiver on loopback at url that answers status,
// first until the test stores another.
func receiver(t *testing.T, first int32) (url string, status *atomic.Int32) {
	t.Helper()
	status = new(atomic.Int32)
	status.Store(first)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(status.Load())) }))
	t.Cleanup(srv.Close)
	return srv.URL + "/hooks", status
}

func webhookStack(t *testing.T) *stack {
	return newStack(t, stackOptions{webhooks: actors.WebhookConfig{
		Payload:      func(ev ledger.Event) ([]byte, error) { return []byte(`{"event":"` + ev.Type + `"}`), nil },
		Policy:       actors.WebhookURLPolicy{AllowLoopback: true},
		Timeout:      5 * time.Second,
		Schedule:     []time.Duration{time.Hour},
		PollInterval: 5 * time.Millisecond,
	}})
}

func TestWebhookEndpoints(t *testing.T) {
	s := webhookStack(t)
	url, _ := receiver(t, 200)
	created := s.app.CreateWebhookEndpoint(s.owner, app.NewWebhookEndpoint{URL: url, Events: []string{"*"}})
	mustApply(t, "create", created)
	ep := *webhooks.EndpointOf(created.Result)
	if ep.Secret == "" || ep.OrgID != s.org {
		t.Fatalf("endpoint %+v", ep)
	}
	var rotated string
	for _, c := range []struct {
		name string
		do   func() actors.Reply
		want ledger.Code
	}{
		{"no events", func() actors.Reply {
			return s.app.CreateWebhookEndpoint(s.owner, app.NewWebhookEndpoint{URL: ep.URL, Events: []string{"no.such.event"}})
		}, ledger.CodeValidation},
		{"describe it", func() actors.Reply {
			return s.app.UpdateWebhookEndpoint(s.owner, app.WebhookEndpointChange{ID: ep.ID, EndpointChange: webhooks.EndpointChange{SetDescription: true, Description: "Orders"}})
		}, ""},
		{"disable it", func() actors.Reply {
			return s.app.UpdateWebhookEndpoint(s.owner, app.WebhookEndpointChange{ID: ep.ID, EndpointChange: webhooks.EndpointChange{SetStatus: true, Status: webhooks.Disabled}})
		}, ""},
		{"enable it", func() actors.Reply {
			return s.app.UpdateWebhookEndpoint(s.owner, app.WebhookEndpointChange{ID: ep.ID, EndpointChange: webhooks.EndpointChange{SetStatus: true, Status: webhooks.Active}})
		}, ""},
		{"rotate its secret", func() actors.Reply {
			r := s.app.RotateWebhookSecret(s.owner, ep.ID)
			if r.Err == nil && r.Result.Err == nil {
				rotated = webhooks.EndpointOf(r.Result).Secret
			}
			return r
		}, ""},
		{"another organization's", func() actors.Reply { return s.app.RotateWebhookSecret(app.Caller{OrgID: "org_other"}, ep.ID) }, ledger.CodeNotFound},
	} {
		wantCode(t, c.name, c.do(), c.want)
	}
	if rotated == "" || rotated == ep.Secret {
		t.Fatalf("the rotated secret %q, the first %q", rotated, ep.Secret)
	}
	got, _ := webhooks.GetEndpoint(s.sys.Reader(), s.org, ep.ID)
	if got.Description != "Orders" || got.Status != webhooks.Active || got.Secret != rotated {
		t.Fatalf("the endpoint after: %+v", got)
	}
	wantCode(t, "delete", s.app.DeleteWebhookEndpoint(s.owner, ep.ID), "")
	wantCode(t, "delete again", s.app.DeleteWebhookEndpoint(s.owner, ep.ID), ledger.CodeNotFound)
}

// A test is attempted at once and answered with its outcome; a failed one
// is retried on request, and a successful one sent again as a new
// delivery.
func TestWebhookTestAndRetry(t *testing.T) {
	s := webhookStack(t)
	url, status := receiver(t, 500)
	created := s.app.CreateWebhookEndpoint(s.owner, app.NewWebhookEndpoint{URL: url, Events: []string{"*"}})
	mustApply(t, "create", created)
	id := webhooks.EndpointOf(created.Result).ID

	if _, err := s.app.TestWebhookEndpoint(s.owner, "whe_unknown"); codeOf(err) != ledger.CodeNotFound {
		t.Fatalf("an unknown endpoint: %v", err)
	}
	failed, err := s.app.TestWebhookEndpoint(s.owner, id)
	if err != nil || failed.Status != webhooks.Failed || failed.LastStatusCode != 500 || failed.EndpointID != id {
		t.Fatalf("a test the receiver fails: %+v %v", failed, err)
	}

	status.Store(200)
	retried := s.app.RetryWebhookDelivery(s.owner, failed.ID)
	mustApply(t, "retry", retried)
	if webhooks.DeliveryOf(retried.Result).ID != failed.ID {
		t.Fatalf("a failed delivery is retried in place: %+v", webhooks.DeliveryOf(retried.Result))
	}
	waitFor(t, "the retry succeeds", func() bool {
		d, _ := webhooks.GetDelivery(s.sys.Reader(), s.org, failed.ID)
		return d.Status == webhooks.Success
	})
	again := s.app.RetryWebhookDelivery(s.owner, failed.ID)
	mustApply(t, "send a success again", again)
	if webhooks.DeliveryOf(again.Result).ID == failed.ID {
		t.Fatal("a successful delivery sent again in place")
	}
	wantCode(t, "retry an unknown delivery", s.app.RetryWebhookDelivery(s.owner, "whd_unknown"), ledger.CodeNotFound)
}
