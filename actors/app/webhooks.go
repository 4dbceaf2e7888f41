package app

import (
	"context"
	"errors"
	"time"

	"payments/actors"
	"payments/ledger/webhooks"
)

// Webhook endpoints, their signing secrets, test sends and deliveries. The
// front end checks an endpoint's URL against the stack's policy (the
// actors' WebhookURLPolicy) with the rest of its shape; delivery runs in
// package actors, on the leader.

// webhookTestWaitMax bounds how long an endpoint test waits for its
// attempt's outcome.
const webhookTestWaitMax = 30 * time.Second

// NewWebhookEndpoint is an endpoint to register.
type NewWebhookEndpoint struct {
	URL         string
	Description string
	Events      []string // event types, or ["*"]
}

// CreateWebhookEndpoint registers an endpoint in the caller's organization
// with a fresh signing secret (read with the endpoint's signing-secret).
func (a *App) CreateWebhookEndpoint(c Caller, in NewWebhookEndpoint) actors.Reply {
	return a.propose(&webhooks.CreateEndpoint{
		At: a.sys.Now().UnixMilli(), ID: actors.NewID("whe_"), OrgID: c.OrgID,
		URL: in.URL, Description: in.Description, Events: in.Events, Secret: actors.NewWebhookSecret(),
	})
}

// WebhookEndpointChange is a change of the endpoint ID.
type WebhookEndpointChange struct {
	ID string
	webhooks.EndpointChange
}

// UpdateWebhookEndpoint changes one of the caller's endpoints.
func (a *App) UpdateWebhookEndpoint(c Caller, in WebhookEndpointChange) actors.Reply {
	return a.propose(&webhooks.UpdateEndpoint{At: a.sys.Now().UnixMilli(), ID: in.ID, OrgID: c.OrgID, EndpointChange: in.EndpointChange})
}

// DeleteWebhookEndpoint removes one of the caller's endpoints; its pending
// deliveries fail with endpoint_unavailable.
func (a *App) DeleteWebhookEndpoint(c Caller, id string) actors.Reply {
	return a.propose(&webhooks.DeleteEndpoint{At: a.sys.Now().UnixMilli(), ID: id, OrgID: c.OrgID})
}

// RotateWebhookSecret gives one of the caller's endpoints a fresh signing
// secret; for webhooks.SecretOverlapMillis after, deliveries carry a
// signature by each.
func (a *App) RotateWebhookSecret(c Caller, id string) actors.Reply {
	return a.propose(&webhooks.RotateSecret{At: a.sys.Now().UnixMilli(), ID: id, OrgID: c.OrgID, Secret: actors.NewWebhookSecret()})
}

// TestWebhookEndpoint records a webhook.test event with one delivery to
// one of the caller's endpoints, attempts it now, and returns the delivery
// as recorded after the attempt (still pending if its outcome was not
// recorded in time). The test is never retried. The error is a
// *ledger.Error or one of the actors' errors.
func (a *App) TestWebhookEndpoint(c Caller, id string) (webhooks.Delivery, error) {
	r := a.propose(&webhooks.SendTest{At: a.sys.Now().UnixMilli(), OrgID: c.OrgID, EndpointID: id})
	if r.Err != nil {
		return webhooks.Delivery{}, r.Err
	}
	if r.Result.Err != nil {
		return webhooks.Delivery{}, r.Result.Err
	}
	d := *webhooks.DeliveryOf(r.Result)
	ctx, cancel := context.WithTimeout(context.Background(), webhookTestWaitMax)
	defer cancel()
	if err := a.sys.DeliverWebhookNow(ctx, d); err != nil && !errors.Is(err, actors.ErrOutcomeUnknown) {
		return webhooks.Delivery{}, err
	}
	d, _ = webhooks.GetDelivery(a.sys.Reader(), c.OrgID, d.ID)
	return d, nil
}

// RetryWebhookDelivery sends one of the caller's deliveries again: a
// pending or failed one starts a fresh schedule in place, a successful one
// is sent again as a new delivery (so its history stays). The delivery
// engine learns of it at once.
func (a *App) RetryWebhookDelivery(c Caller, id string) actors.Reply {
	r := a.propose(&webhooks.RetryDelivery{At: a.sys.Now().UnixMilli(), OrgID: c.OrgID, DeliveryID: id})
	if r.Err == nil && r.Result.Err == nil {
		a.sys.TrackWebhookDelivery(*webhooks.DeliveryOf(r.Result))
	}
	return r
}
