// Package momo is the MTN MoMo Open API adapter: payouts as disbursement
// transfers, collections as requests to pay (the payer approves on their
// phone), account holder names (basicuserinfo) and the products' balances.
// It implements provider.Payouter, Collector, CallbackHandler, NameLooker
// and Balancer; it is registered under the kind "mtn_momo" (Kind, Factory).
//
// # Configuration
//
// Settings (the providers file's "settings" object; unknown keys refused):
//
//	baseUrl             MoMo's API root, e.g. https://sandbox.momodeveloper.mtn.com (required)
//	targetEnvironment   X-Target-Environment: "sandbox", "mtnghana", "mtnuganda", … (required)
//	currency            the environment's currency, e.g. "GHS" ("EUR" in the sandbox) (required)
//	currencyExponent    its decimal places (default 2); instructions must agree
//	callbackBaseUrl     the service's public root; callbacks go to
//	                    {callbackBaseUrl}/v1/providers/{name}/callbacks (empty: no callbacks, polling only)
//	requestTimeout      one HTTP exchange (default "30s")
//	tokenRefreshBefore  replace a token this long before it expires (default "60s")
//	checkAfter          the next status check a pending outcome suggests (default "15s")
//
// Secrets, by name (MoMo issues an API user and key per product, under that
// product's subscription key): disbursementApiUser, disbursementApiKey,
// disbursementSubscriptionKey (required when a method serves payouts) and
// collectionApiUser, collectionApiKey, collectionSubscriptionKey (required
// when one serves collections).
//
// # Exactly once
//
// The idempotency key is X-Reference-Id. PreparePayout and
// PrepareCollection derive it from the instruction id (an HMAC under the
// product's API user, shaped as the version 4 UUID MoMo demands) and send
// nothing. MoMo refuses a reused X-Reference-Id with 409 whatever the body,
// doing nothing for the second request, and the adapter reads that 409 as
// "already taken": the outcome of the first is then known only by status.
// So the caller's rules are those of package provider, with no exception:
//
//   - commit the Prepared before the first Submit;
//   - Submit may be repeated with the same Prepared at any time (after an
//     unknown outcome, by a new leader): it never makes a second transfer;
//   - after ErrUnknownOutcome ask PayoutStatus or CollectionStatus; while
//     it answers ErrNotFound MoMo never took the request and a Submit of the
//     same Prepared is the way on.
//
// The adapter does not implement provider.SendOnce.
//
// A status of SUCCESSFUL whose amount or currency is not the instruction's is
// answered with ErrUnknownOutcome (for a person to look at), never settled.
//
// # Callbacks
//
// MoMo's callbacks (one per transaction, PUT in the sandbox and POST in
// production, never retried) are not signed. HandleCallback never returns
// Authenticated: it names the instruction (from the ref and op the adapter
// put into X-Callback-Url's query, else from the externalId MoMo echoes) and
// the caller asks the status before it believes anything. Since MoMo does
// not retry, the caller also polls: a callback that never comes is normal.
//
// # Concurrency
//
// An Adapter is safe for concurrent use. Access tokens are cached per
// product and replaced tokenRefreshBefore their expiry, or at once when MoMo
// answers 401, in which case the same request is sent once more (MoMo's
// gateway refused it, so nothing was done). Requests are not retried
// otherwise.
//
// # Never
//
// No float touches an amount: minor units are written as MoMo's decimal
// strings and read back exactly, and an amount with more decimals than the
// currency has is an error, never a rounding. Secrets are revealed only into
// request headers; phone numbers appear in errors masked to their last four
// digits. The adapter keeps no state that must survive a restart.
package momo
