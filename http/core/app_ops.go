package core

import (
	"time"

	"payments/actors"
	"payments/actors/app"
	"payments/ledger"
	"payments/ledger/deposits"
	"payments/ledger/recipients"
	"payments/ledger/team"
	"payments/ledger/webhooks"
	"payments/rails"
)

// What each feature calls of the application API (App). Declared apart so
// that features change their own lists.

// moneyOps: payouts, collections, conversions, rates, orders, balances,
// deposits, virtual accounts and crypto addresses.
type moneyOps interface {
	Rate(from, to string) (rails.Rate, *ledger.Error)
	USDValue(currency string, amount ledger.Minor) (ledger.Minor, bool)
	CreatePayout(app.Caller, app.PayoutInput) actors.Reply
	CreateCollection(app.Caller, app.CollectionInput) actors.Reply
	CreateQuote(app.Caller, app.QuoteInput) actors.Reply
	ExecuteConversion(c app.Caller, quoteID, ref string) actors.Reply
	CreateOrder(app.Caller, app.OrderInput) actors.Reply
	SimulateOrderDeposit(app.Caller, app.OrderDepositInput) app.Deposited
	SimulateVirtualAccountDeposit(app.Caller, app.DepositInput) app.Deposited
	SimulateCryptoDeposit(app.Caller, app.DepositInput) app.Deposited
	CreateVirtualAccount(app.Caller, app.VirtualAccountInput) actors.Reply
	UpdateVirtualAccount(c app.Caller, id string, status deposits.VirtualAccountStatus) actors.Reply
	CreateCryptoAddress(app.Caller, app.CryptoAddressInput) actors.Reply
	UpdateCryptoAddress(c app.Caller, id, metadata string) actors.Reply
}

// linkOps: payment links and pages, checkout sessions and the hosted
// checkout.
type linkOps interface {
	CreatePaymentLink(app.Caller, app.PaymentLinkRequest) actors.Reply
	CreatePageLink(app.Caller, app.PageLinkRequest) actors.Reply
	UpdatePaymentLink(app.Caller, app.CheckoutUpdate) actors.Reply
	CreatePaymentPage(app.Caller, app.PaymentPageRequest) actors.Reply
	UpdatePaymentPage(app.Caller, app.CheckoutUpdate) actors.Reply
	OpenCheckoutSession(app.Caller, app.CheckoutSessionRequest) actors.Reply
	SimulateCheckoutDeposit(app.Caller, app.CheckoutDepositRequest) app.CheckoutDepositReply
	StartCheckoutDeposit(app.Caller, app.CheckoutDepositRequest) *ledger.Error
	CheckoutDepositOnItsWay(sessionID string) bool
}

// adminOps: organizations, keys and their controls, dashboard members and
// sessions, recipients, files, disputes, webhooks, simulations.
type adminOps interface {
	CreateOrganization(app.Caller, app.NewOrganization) app.KeyCreated
	CreateKey(app.Caller, app.NewKey) app.KeyCreated
	RevokeKey(c app.Caller, id string) actors.Reply
	SetKeyControls(app.Caller, app.KeyControlsChange) actors.Reply

	InviteMember(c app.Caller, email, role string) app.Link
	RevokeInvitation(c app.Caller, id string) actors.Reply
	SetMemberRole(c app.Caller, memberID, role string) actors.Reply
	RemoveMember(c app.Caller, memberID string) actors.Reply
	CreatePasswordReset(c app.Caller, orgID, email string) app.Link
	DashboardSetupLink(c app.Caller, orgID string) app.Link
	PendingInvitation(token string) (team.Invitation, bool)
	AcceptInvitation(app.Acceptance) (app.Session, error)
	SignIn(email, password string) (app.Session, error)
	DashboardSession(token string) (team.Session, team.Member, bool)
	EndDashboardSession(id string) error
	ChangePassword(app.Caller, app.PasswordChange) error

	CreateRecipient(app.Caller, recipients.Spec) actors.Reply
	CreateRecipients(app.Caller, []recipients.Spec) actors.Reply
	UpdateRecipient(app.Caller, app.RecipientChange) actors.Reply
	DeleteRecipient(c app.Caller, id string) actors.Reply

	FileSigningKey() ([]byte, error)
	CreateFile(app.Caller, app.NewFile) actors.Reply

	RespondToDispute(app.Caller, app.DisputeResponse) actors.Reply
	AddDisputeMessage(app.Caller, app.DisputeMessage) actors.Reply
	OpenDispute(app.Caller, app.DisputeOpening) actors.Reply
	ResolveDispute(c app.Caller, disputeID string, won bool, message string) actors.Reply

	CreateWebhookEndpoint(app.Caller, app.NewWebhookEndpoint) actors.Reply
	UpdateWebhookEndpoint(app.Caller, app.WebhookEndpointChange) actors.Reply
	DeleteWebhookEndpoint(c app.Caller, id string) actors.Reply
	RotateWebhookSecret(c app.Caller, id string) actors.Reply
	TestWebhookEndpoint(c app.Caller, id string) (webhooks.Delivery, error)
	RetryWebhookDelivery(c app.Caller, id string) actors.Reply

	FundBalance(c app.Caller, currency string, amount ledger.Minor, ref string) actors.Reply
	AdvanceClock(app.Caller, time.Duration) app.ClockAdvanced
}

// caller is who makes the call: the key's organization, the key (its spend
// caps) and the attempt that names the client's request across relays.
func (c *Call) Caller() app.Caller {
	return app.Caller{OrgID: c.Org, Key: &c.Key, Attempt: c.Server.attemptOf(c.Ctx)}
}
