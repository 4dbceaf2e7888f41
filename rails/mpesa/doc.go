// Package mpesa is the Safaricom M-Pesa Daraja adapter: collections by STK
// push (M-Pesa Express: the payer enters their PIN on a prompt), payouts by
// B2C payment requests, and their result, timeout and status callbacks. It
// implements provider.Payouter, Collector, CallbackHandler and SendOnce,
// and is registered under the kind "mpesa" (Kind, Factory). Daraja has no
// name lookup, and its balance query answers only by callback, so the
// adapter is neither a NameLooker nor a Balancer.
//
// # Configuration
//
// Settings (the providers file's "settings" object; unknown keys refused):
//
//	baseUrl             https://sandbox.safaricom.co.ke or https://api.safaricom.co.ke (required)
//	callbackBaseUrl     the service's public root; callbacks go to
//	                    {callbackBaseUrl}/v1/providers/{name}/callbacks?e=…&k=…&t=… (required)
//	callbackAllowedIps  optional addresses or CIDRs callbacks must come from (Safaricom's)
//	shortCode           STK BusinessShortCode (required for collections)
//	partyB              STK PartyB (default shortCode; the till for buy goods)
//	transactionType     CustomerPayBillOnline (default) or CustomerBuyGoodsOnline
//	b2cShortCode        B2C PartyA (required for payouts)
//	initiatorName       the B2C API initiator (required for payouts)
//	commandId           BusinessPayment (default), SalaryPayment or PromotionPayment
//	b2cPath             default /mpesa/b2c/v3/paymentrequest (/mpesa/b2c/v1/paymentrequest for v1)
//	requestTimeout, tokenRefreshBefore, checkAfter   durations (defaults 30s, 60s, 20s)
//
// Secrets, by name: consumerKey and consumerSecret (always); passkey (the
// Lipa na M-Pesa passkey, for collections); initiatorPassword and
// certificate (Safaricom's PEM certificate for the environment, for
// payouts); callbackSecret (optional: keys the callback URL tokens;
// without it they are keyed by a value derived from consumerSecret, so
// rotating that secret invalidates the URLs of instructions in flight).
//
// Amounts are whole shillings: an instruction in KES with cents is refused
// by Prepare (and Submit) with provider.ErrRejected wrapping
// ErrFractionalAmount, before anything is sent. The STK Password is
// base64(shortCode + passkey + timestamp) with a Nairobi-time timestamp;
// the B2C SecurityCredential is the initiator password encrypted with the
// certificate's RSA key, PKCS #1 v1.5, made afresh for each request.
//
// # Exactly once: what the caller must do
//
// Neither an STK push nor a B2C payment may be sent twice: a second STK push
// prompts the payer again (who may pay twice), and Daraja's refusal of a
// duplicate OriginatorConversationID (500.002.1001) is not promised to hold
// for ever. So the adapter implements provider.SendOnce for both
// directions, and the caller's rules are:
//
//  1. Commit the Prepared (Prepare derives its key from the instruction id:
//     the OriginatorConversationID of a B2C, our own key for an STK push).
//  2. Commit "submitting" before calling Submit.
//  3. Call Submit again only if Submit itself answered ErrUnavailable,
//     ErrRateLimited or ErrAuthentication (nothing was done; the adapter
//     then also lets this process send it again). After any other answer,
//     or none (a crash, a leader change with "submitting" committed and no
//     answer), never Submit again: ask the status and wait for callbacks.
//     ErrRejected is final: nothing moved.
//  4. Commit Outcome.ProviderRef from Submit or a callback (an STK push's
//     CheckoutRequestID) before asking the status: CollectionStatus needs
//     it in Instruction.ProviderRef.
//
// As a second line, the adapter refuses to send a key it already sent (or
// may have sent) in this process, answering ErrUnknownOutcome without a
// request, and reads Daraja's duplicate refusal as "already submitted".
//
// Status: CollectionStatus asks the STK push query, which answers at once.
// PayoutStatus asks the Transaction Status API, which answers only by
// callback: it returns StateUnknown with CheckAfter, and the answer comes
// through HandleCallback. An ambiguous B2C therefore waits for its result
// callback, its queue timeout callback, or a status answer; a B2C Daraja
// never received stays processing (the status query finds nothing, which
// settles nothing) until a person resolves it.
//
// # Callbacks
//
// Daraja signs nothing. Each instruction gets its own callback URLs with
// the event, the key and a token (an HMAC of both under the callback
// secret); HandleCallback refuses a callback without the right token
// (ErrBadCallback), or from outside callbackAllowedIps when set. STK results
// are never Authenticated: the caller confirms them with CollectionStatus.
// B2C results, B2C queue timeouts and transaction status answers are
// Authenticated on the strength of the token, since no synchronous query
// exists to confirm them: keep the query strings of the callback route out
// of logs, for whoever reads a URL can forge that instruction's result. A
// queue timeout is a failure (Daraja documents it as the request timing
// out before M-Pesa processed it); a result code 15 (duplicate detected)
// settles nothing.
//
// # Concurrency
//
// An Adapter is safe for concurrent use. The access token is cached and
// replaced tokenRefreshBefore its expiry, or when Daraja refuses it, in
// which case the same request is sent once more (the gateway refused it,
// so nothing reached M-Pesa). Nothing else is retried.
//
// # Never
//
// No float touches an amount. Secrets are revealed only into requests;
// phone numbers appear in errors masked to their last four digits. The
// only state is the token and the bounded set of keys sent by this
// process, neither of which must survive a restart: what must is the
// caller's "submitting" mark.
package mpesa
