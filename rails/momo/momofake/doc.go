// Package momofake is a fake MTN MoMo Open API for tests and demos: a
// net/http server on loopback that behaves as MTN documents its API.
//
//   - Tokens: POST /{collection|disbursement}/token/ with the product's API
//     user and key (Basic) and subscription key; tokens expire after
//     Options.TokenLifetime on the fake's clock, or at once with
//     ExpireTokens; a missing, foreign or expired token is a 401.
//   - Creates: POST /disbursement/v1_0/transfer and /collection/v1_0/requesttopay
//     answer 202 with an empty body; a reused X-Reference-Id is a 409
//     RESOURCE_ALREADY_EXIST whether or not the body is the same (MTN keys
//     the resource on the id alone) and nothing is done for it; a
//     malformed id, amount or note is a 400; a wrong currency, target
//     environment or callback host a 500 with MTN's codes.
//   - Status: GET /…/v1_0/{transfer|requesttopay}/{referenceId} answers
//     PENDING, SUCCESSFUL (with financialTransactionId) or FAILED (with a
//     reason); an unknown reference is a 404.
//   - Counterparties: by MSISDN, set with SetPayer, or MTN's sandbox
//     numbers (46733123450 fails, …51 declines, …52 never answers and
//     expires, …53 and …54 stay pending); others follow
//     Options.DefaultPayer. A request to pay left unanswered fails with
//     reason EXPIRED once Options.RequestToPayExpiry has passed on the
//     fake's clock (checked by Sweep and by every status read). Decide
//     approves or declines a held one. A transfer beyond the disbursement
//     balance fails with NOT_ENOUGH_FUNDS. HoldTransfers keeps new
//     transfers PENDING until ReleaseTransfers.
//   - Callbacks: exactly one per transaction, unsigned, to X-Callback-Url,
//     by PUT (the sandbox) or POST (Options.CallbackMethod), never retried.
//     Resend delivers one again, standing for a duplicate.
//   - Faults: FailNext queues a one-shot fault for an operation: an
//     answer of any status (429 with Retry-After), a connection dropped
//     before anything is done, or one dropped after the money moved.
//   - Records: Requests (every request, without credentials, with the
//     status answered), Movements (money that moved) and Callbacks, so a
//     test can assert that nothing happened twice.
//   - Extras: basicuserinfo (SetName) and the account balance.
//
// The command in cmd/momofake runs it standalone.
//
// A Server is safe for concurrent use; one mutex guards its state, and
// callbacks are sent from their own goroutines without it. It keeps
// everything in memory (the request log is bounded). It is a test double:
// it must never be configured as a production provider.
package momofake
