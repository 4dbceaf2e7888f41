// Package mpesafake is a fake Safaricom Daraja for tests and demos: a
// net/http server on loopback that behaves as Daraja documents.
//
//   - OAuth: GET /oauth/v1/generate?grant_type=client_credentials with the
//     consumer key and secret (Basic) gives a token with expires_in (a
//     string, as Daraja sends it); tokens expire on the fake's clock, or at
//     once with ExpireTokens; a missing or expired token is a 401 with
//     Daraja's error code (404.001.03 on STK, 401.002.01 on B2C).
//   - STK push: checks the BusinessShortCode, the Password (base64 of
//     shortcode, passkey and timestamp; "Wrong credentials" otherwise), the
//     whole-shilling Amount, the phone numbers and field lengths, answers
//     with a CheckoutRequestID and posts one result to CallBackURL: 0 with
//     CallbackMetadata, or 1032 (cancelled), 1 (insufficient), 2001 (wrong
//     PIN), 1037 (unreachable, or no answer within Options.STKExpiry) by
//     the payer's Behaviour (SetPayer). The STK query answers "The
//     transaction is being processed" (500.001.1001) until then, and 400
//     for an unknown CheckoutRequestID.
//   - B2C (v3 and v1 paths): a seen OriginatorConversationID is refused
//     with 500.002.1001 and nothing is done; the SecurityCredential is
//     decrypted with the fake's private key (its certificate is
//     CertificatePEM) and compared with the initiator password (2001 in the
//     result otherwise); then one result to ResultURL: 0 with
//     ResultParameters, 1 (B2C balance short), 2/3 (limits), 2040
//     (unregistered recipient). HoldB2C keeps new payments accepted but
//     undecided (queued at M-Pesa) until ReleaseB2C.
//   - Transaction status: accepted at once; the answer goes to the query's
//     ResultURL: ResultCode 0 with TransactionStatus "Completed" or "Failed"
//     (ReasonType: the result's words) for a B2C it processed, or
//     R000002 for one it never took. (Daraja does not document what the
//     query says of a failed B2C; this is the fake's assumption.)
//   - Faults (FailNext): any status (429 with Retry-After and a spike
//     arrest code), a connection dropped before anything is done or after
//     the money moved, and a B2C timed out in the queue (its timeout
//     callback to QueueTimeOutURL, nothing moved).
//   - Records: Requests (without credentials, with the status answered),
//     Movements and Callbacks. Callbacks are sent once each, unsigned,
//     never retried; ResendB2CResult and ResendSTKResult deliver one again.
//
// The command in cmd/mpesafake runs it standalone.
//
// A Server is safe for concurrent use: one mutex guards its state, and
// callbacks go out from their own goroutines without it. Everything is in
// memory (the request log is bounded). It is a test double and must never
// be configured as a production provider.
package mpesafake
