package momofake

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"payments/rails/internal/fakehttp"
	"payments/rails/internal/outbound"
)

// Products, as they appear in MoMo's paths.
const (
	Collection   = "collection"
	Disbursement = "disbursement"
)

// Credentials are one product's: what a client needs to get a token.
type Credentials struct {
	APIUser, APIKey, SubscriptionKey string
}

// Options configure a Server. The zero value is a sandbox in EUR with
// generated credentials, hour-long tokens, 100,000.00 in the disbursement
// account, payers who approve at once and PUT callbacks.
type Options struct {
	TargetEnvironment string // default "sandbox"
	Currency          string // default "EUR"
	Exponent          int    // decimal places of Currency; default 2
	// Collection and Disbursement credentials; empty fields are generated.
	Collection, Disbursement Credentials
	// TokenLifetime is expires_in of every token; default one hour.
	TokenLifetime time.Duration
	// Now is the fake's clock (token expiry, request-to-pay expiry).
	Now func() time.Time
	// DisbursementBalanceMinor is the disbursement account's opening
	// balance in minor units; default 10,000,000 (100,000.00).
	DisbursementBalanceMinor int64
	// CallbackMethod is how callbacks are sent: "PUT" (the sandbox) or
	// "POST" (production, as MTN documents it); default PUT.
	CallbackMethod string
	// CallbackHost, when set, is the only host X-Callback-Url may name
	// (MTN checks it against the API user's providerCallbackHost).
	CallbackHost string
	// RequestToPayExpiry is how long a request to pay waits for its payer
	// before it fails with reason EXPIRED; default five minutes.
	RequestToPayExpiry time.Duration
	// DefaultPayer is what a payer with no rule does; default Approve.
	DefaultPayer Behaviour
}

// Behaviour is what the counterparty of a transaction does: a payer asked
// to approve a request to pay, or a payee of a transfer.
type Behaviour int

const (
	Approve Behaviour = iota + 1 // approves at once (payer); receives (payee)
	Decline                      // the payer declines: FAILED, APPROVAL_REJECTED
	Ignore                       // never answers: PENDING until expiry, then FAILED, EXPIRED
	Hold                         // PENDING until the test calls Approve or Decline (or expiry)
	Unknown                      // no MoMo account: FAILED, PAYER_NOT_FOUND / PAYEE_NOT_FOUND
	Failing                      // FAILED, INTERNAL_PROCESSING_ERROR
)

// sandboxNumbers are MTN's sandbox test numbers and what they do there.
var sandboxNumbers = map[string]Behaviour{
	"46733123450": Failing,
	"46733123451": Decline,
	"46733123452": Ignore,
	"46733123453": Hold,
	"46733123454": Hold,
}

// Fault is a one-shot misbehaviour of the next request of an operation.
type Fault struct {
	// Status answers with this status and does nothing (429 gets a
	// Retry-After of RetryAfter).
	Status     int
	RetryAfter time.Duration
	// DropAfterApply applies the request (the money moves) and then
	// closes the connection without an answer.
	DropAfterApply bool
	// DropBeforeApply closes the connection without doing anything.
	DropBeforeApply bool
}

// Operations a Fault may be set on.
const (
	OpToken        = "token"
	OpTransfer     = "transfer"
	OpRequestToPay = "requesttopay"
	OpStatus       = "status"
	OpUserInfo     = "basicuserinfo"
	OpBalance      = "balance"
)

// Request is one request the fake received, without its credentials.
type Request struct {
	Method, Path string
	Product      string
	Op           string
	ReferenceID  string // X-Reference-Id
	CallbackURL  string // X-Callback-Url
	Body         []byte
	Status       int // what the fake answered; 0: the connection was dropped
}

// Movement is money that moved: a transfer paid out or a request to pay
// approved.
type Movement struct {
	Op          string
	ReferenceID string
	AmountMinor int64
	MSISDN      string
}

// Callback is one callback the fake sent.
type Callback struct {
	ReferenceID string
	Method, URL string
	Body        []byte
	Status      int   // the receiver's answer
	Err         error // when it could not be delivered
}

// Server is a fake MoMo Open API on loopback. Every method is safe for
// concurrent use.
type Server struct {
	URL  string
	opts Options

	// Controls are the fake's controls and records for tests: FailNext,
	// ExpireTokens, Requests, Count, Movements, Callbacks and Close.
	fakehttp.Controls[Request, Fault, Movement, Callback]

	mu      sync.Mutex
	core    *fakehttp.Core[Request, Fault, Movement, Callback]
	txns    map[string]*txn // X-Reference-Id → transaction (both products: MoMo's ids are UUIDs)
	payers  map[string]Behaviour
	names   map[string]string
	balance map[string]int64 // product → minor units
	// held keeps new transfers PENDING (HoldTransfers).
	held fakehttp.Held[*txn]
}

type txn struct {
	op, ref, externalID, msisdn, amount, currency string
	amountMinor                                   int64
	status, reason                                string
	financialID                                   string
	created                                       time.Time
	callbackURL                                   string
	called                                        bool // its one callback was sent
}

// NewServer starts a fake on an ephemeral loopback port; Close stops it.
func NewServer(opts Options) *Server {
	s := New(opts)
	s.URL = s.core.Listen(s.Handler())
	return s
}

// New returns a fake that is not listening: serve Handler yourself (the
// standalone command does) and set URL.
func New(opts Options) *Server {
	if opts.TargetEnvironment == "" {
		opts.TargetEnvironment = "sandbox"
	}
	if opts.Currency == "" {
		opts.Currency = "EUR"
		opts.Exponent = 2
	}
	if opts.TokenLifetime <= 0 {
		opts.TokenLifetime = time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.DisbursementBalanceMinor == 0 {
		opts.DisbursementBalanceMinor = 10_000_000
	}
	if opts.CallbackMethod == "" {
		opts.CallbackMethod = http.MethodPut
	}
	if opts.RequestToPayExpiry <= 0 {
		opts.RequestToPayExpiry = 5 * time.Minute
	}
	if opts.DefaultPayer == 0 {
		opts.DefaultPayer = Approve
	}
	for _, c := range []*Credentials{&opts.Collection, &opts.Disbursement} {
		if c.APIUser == "" {
			c.APIUser = uuid4()
		}
		if c.APIKey == "" {
			c.APIKey = fakehttp.RandomHex(16)
		}
		if c.SubscriptionKey == "" {
			c.SubscriptionKey = fakehttp.RandomHex(16)
		}
	}
	s := &Server{
		opts:    opts,
		txns:    map[string]*txn{},
		payers:  map[string]Behaviour{},
		names:   map[string]string{},
		balance: map[string]int64{Disbursement: opts.DisbursementBalanceMinor},
	}
	s.core = fakehttp.NewCore[Request, Fault, Movement, Callback](&s.mu)
	s.Controls = s.core.Controls()
	return s
}

// Options returns the options in force (with generated credentials).
func (s *Server) Options() Options { return s.opts }

// SetPayer sets what msisdn does when asked to approve, or when paid.
func (s *Server) SetPayer(msisdn string, b Behaviour) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.payers[msisdn] = b
}

// SetName sets the account holder name basicuserinfo answers for msisdn.
func (s *Server) SetName(msisdn, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[msisdn] = name
}

// SetBalance sets a product's account balance in minor units.
func (s *Server) SetBalance(product string, minor int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.balance[product] = minor
}

// Balance returns a product's account balance in minor units.
func (s *Server) Balance(product string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.balance[product]
}

// Status returns a transaction's status and reason ("" if unknown).
func (s *Server) Status(ref string) (status, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.txns[ref]; t != nil {
		return t.status, t.reason
	}
	return "", ""
}

// Decide approves (or declines) a pending request to pay, as its payer
// would on the phone. It reports whether there was one to decide.
func (s *Server) Decide(ref string, approve bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.txns[ref]
	if t == nil || t.op != OpRequestToPay || t.status != "PENDING" {
		return false
	}
	if approve {
		s.succeed(t)
	} else {
		s.fail(t, "APPROVAL_REJECTED")
	}
	return true
}

// Sweep expires the requests to pay whose payer has not answered within
// RequestToPayExpiry of the fake's clock; status reads sweep too, and the
// standalone command sweeps every second.
func (s *Server) Sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
}

func (s *Server) sweep() {
	now := s.opts.Now()
	for _, t := range s.txns {
		if t.op == OpRequestToPay && t.status == "PENDING" && !now.Before(t.created.Add(s.opts.RequestToPayExpiry)) {
			s.fail(t, "EXPIRED")
		}
	}
}

// HoldTransfers keeps the transfers that arrive from now on PENDING: taken
// (202), nothing moved and no callback sent, their status PENDING, until
// ReleaseTransfers. It stands for a disbursement MoMo takes its time
// over, so that a test can act while payouts are at the provider. Past
// fakehttp.HeldMax held transfers, new ones are processed at once.
func (s *Server) HoldTransfers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held.Start()
}

// ReleaseTransfers stops holding and decides the held transfers, in the
// order they arrived, by their payees' behaviours (money moves, callbacks
// go); it returns how many there were.
func (s *Server) ReleaseTransfers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held.Release(s.process)
}

// Resend delivers ref's callback once more, as a duplicate (MoMo itself
// never does: this stands for a proxy or a replay).
func (s *Server) Resend(ref string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.txns[ref]
	if t == nil || !t.called {
		return false
	}
	s.sendCallback(t)
	return true
}

// Handler serves the MoMo API and the fake's controls under /_fake/.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{product}/token/", s.handleToken)
	mux.HandleFunc("POST /{product}/v1_0/{op}", s.handleCreate)
	mux.HandleFunc("GET /{product}/v1_0/{op}/{ref}", s.handleStatus)
	mux.HandleFunc("GET /{product}/v1_0/accountholder/msisdn/{msisdn}/basicuserinfo", s.handleUserInfo)
	mux.HandleFunc("GET /{product}/v1_0/account/balance", s.handleBalance)
	mux.HandleFunc("POST /_fake/requesttopay/{ref}/{decision}", s.handleDecide)
	s.core.HandleControls(mux)
	return mux
}

// exchange is one request being served: it records itself in the log.
type exchange struct {
	fakehttp.Exchange
	req *Request
}

// begin logs r (under s.mu) and returns the fault set for op, if any.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, op string, body []byte) (*exchange, *Fault) {
	req := &Request{
		Method: r.Method, Path: r.URL.Path, Product: r.PathValue("product"), Op: op,
		ReferenceID: r.Header.Get("X-Reference-Id"), CallbackURL: r.Header.Get("X-Callback-Url"), Body: body,
	}
	return &exchange{Exchange: fakehttp.NewExchange(w, &req.Status), req: req}, s.core.Begin(op, req)
}

func (ex *exchange) fail(status int, code, message string) {
	ex.Answer(status, map[string]string{"code": code, "message": message})
}

// applyFault answers a Status fault; it reports whether the request is
// done with.
func (ex *exchange) applyFault(f *Fault) bool {
	switch {
	case f == nil:
		return false
	case f.DropBeforeApply:
		ex.Drop()
		return true
	case f.Status == http.StatusTooManyRequests:
		secs := int(f.RetryAfter / time.Second)
		ex.W.Header().Set("Retry-After", strconv.Itoa(secs))
		ex.Answer(f.Status, map[string]any{"statusCode": 429, "message": fmt.Sprintf("Rate limit is exceeded. Try again in %d seconds.", secs)})
		return true
	case f.Status != 0:
		ex.fail(f.Status, "INTERNAL_PROCESSING_ERROR", "An internal error occurred while processing.")
		return true
	}
	return false
}

// serve answers a request of op with handle, under the fake's lock: once
// the request is logged with body, has met no fault and passes the
// gateway's checks.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, op string, body []byte, handle func(ex *exchange, f *Fault)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ex, f := s.begin(w, r, op, body)
	if ex.applyFault(f) || !s.authorize(ex, r) {
		return
	}
	handle(ex, f)
}

func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	body := fakehttp.ReadBody(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	ex, f := s.begin(w, r, OpToken, body)
	if ex.applyFault(f) {
		return
	}
	creds, ok := s.creds(r.PathValue("product"))
	if !ok {
		ex.fail(http.StatusNotFound, "RESOURCE_NOT_FOUND", "Unknown product.")
		return
	}
	if r.Header.Get("Ocp-Apim-Subscription-Key") != creds.SubscriptionKey {
		ex.Answer(http.StatusUnauthorized, map[string]any{"statusCode": 401, "message": "Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription."})
		return
	}
	if user, key, ok := r.BasicAuth(); !ok || user != creds.APIUser || key != creds.APIKey {
		ex.Answer(http.StatusUnauthorized, map[string]string{"error": "login_failed"})
		return
	}
	tok := s.core.IssueToken(r.PathValue("product"), s.opts.Now().Add(s.opts.TokenLifetime), 24)
	ex.Answer(http.StatusOK, map[string]any{"access_token": tok, "token_type": "access_token", "expires_in": int64(s.opts.TokenLifetime / time.Second)})
}

func (s *Server) creds(product string) (Credentials, bool) {
	switch product {
	case Collection:
		return s.opts.Collection, true
	case Disbursement:
		return s.opts.Disbursement, true
	}
	return Credentials{}, false
}

// authorize checks the subscription key, the bearer token and the target
// environment as MoMo's gateway does; it answers and returns false when
// one is wrong.
func (s *Server) authorize(ex *exchange, r *http.Request) bool {
	product := r.PathValue("product")
	creds, ok := s.creds(product)
	if !ok {
		ex.fail(http.StatusNotFound, "RESOURCE_NOT_FOUND", "Unknown product.")
		return false
	}
	if r.Header.Get("Ocp-Apim-Subscription-Key") != creds.SubscriptionKey {
		ex.Answer(http.StatusUnauthorized, map[string]any{"statusCode": 401, "message": "Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription."})
		return false
	}
	if !s.core.Authorized(r, product, s.opts.Now()) {
		ex.Answer(http.StatusUnauthorized, map[string]any{"statusCode": 401, "message": "Access token is missing, invalid or expired."})
		return false
	}
	if r.Header.Get("X-Target-Environment") != s.opts.TargetEnvironment {
		ex.fail(http.StatusInternalServerError, "NOT_ALLOWED_TARGET_ENVIRONMENT", "Access to target environment is forbidden.")
		return false
	}
	return true
}

type party struct {
	PartyIDType string `json:"partyIdType"`
	PartyID     string `json:"partyId"`
}

type createBody struct {
	Amount       string `json:"amount"`
	Currency     string `json:"currency"`
	ExternalID   string `json:"externalId"`
	Payer        *party `json:"payer"`
	Payee        *party `json:"payee"`
	PayerMessage string `json:"payerMessage"`
	PayeeNote    string `json:"payeeNote"`
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	body := fakehttp.ReadBody(r)
	op := r.PathValue("op")
	s.serve(w, r, op, body, func(ex *exchange, f *Fault) {
		product := r.PathValue("product")
		if !(op == OpTransfer && product == Disbursement) && !(op == OpRequestToPay && product == Collection) {
			ex.fail(http.StatusNotFound, "RESOURCE_NOT_FOUND", "Requested resource was not found.")
			return
		}
		ref := r.Header.Get("X-Reference-Id")
		if !isUUID4(ref) {
			ex.fail(http.StatusBadRequest, "INVALID_REFERENCE_ID", "X-Reference-Id must be a version 4 UUID.")
			return
		}
		if _, taken := s.txns[ref]; taken {
			// MTN keys the resource on X-Reference-Id alone: a reused id is
			// refused whether the body is the same or not, and nothing is
			// done for the second request.
			ex.fail(http.StatusConflict, "RESOURCE_ALREADY_EXIST", "Duplicated reference id. Creation of resource failed.")
			return
		}
		cb := r.Header.Get("X-Callback-Url")
		if cb != "" && s.opts.CallbackHost != "" && hostOf(cb) != s.opts.CallbackHost {
			ex.fail(http.StatusInternalServerError, "INVALID_CALLBACK_URL_HOST", "Callback URL with different host name to configured for API User.")
			return
		}
		var b createBody
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&b); err != nil {
			ex.fail(http.StatusBadRequest, "REQUEST_REJECTED", "Request body does not follow the specification.")
			return
		}
		counterparty := b.Payee
		if op == OpRequestToPay {
			counterparty = b.Payer
		}
		minor, err := parseMinor(b.Amount, s.opts.Exponent)
		switch {
		case err != nil || minor <= 0:
			ex.fail(http.StatusBadRequest, "INVALID_AMOUNT", "Amount is not a positive number in the currency's units.")
			return
		case counterparty == nil || counterparty.PartyIDType != "MSISDN" || !outbound.Digits(counterparty.PartyID):
			ex.fail(http.StatusBadRequest, "INVALID_PARTY", "Party must be an MSISDN.")
			return
		case len(b.PayerMessage) > 160 || len(b.PayeeNote) > 160 || strings.ContainsRune(b.PayerMessage+b.PayeeNote, '\''):
			ex.fail(http.StatusBadRequest, "REQUEST_REJECTED", "payerMessage and payeeNote take at most 160 characters, without apostrophes.")
			return
		case b.Currency != s.opts.Currency:
			ex.fail(http.StatusInternalServerError, "INVALID_CURRENCY", "Currency not supported.")
			return
		}
		t := &txn{op: op, ref: ref, externalID: b.ExternalID, msisdn: counterparty.PartyID, amount: b.Amount, amountMinor: minor,
			currency: b.Currency, status: "PENDING", created: s.opts.Now(), callbackURL: cb}
		s.txns[ref] = t
		if op != OpTransfer || !s.held.Keep(t) {
			s.process(t)
		}
		if f != nil && f.DropAfterApply {
			ex.Drop()
			return
		}
		ex.Answer(http.StatusAccepted, nil)
	})
}

// process decides a new transaction by its counterparty's behaviour.
func (s *Server) process(t *txn) {
	b, ok := s.payers[t.msisdn]
	if !ok {
		if b, ok = sandboxNumbers[t.msisdn]; !ok {
			b = s.opts.DefaultPayer
		}
	}
	switch b {
	case Unknown:
		if t.op == OpTransfer {
			s.fail(t, "PAYEE_NOT_FOUND")
		} else {
			s.fail(t, "PAYER_NOT_FOUND")
		}
	case Failing:
		s.fail(t, "INTERNAL_PROCESSING_ERROR")
	case Decline:
		if t.op == OpRequestToPay {
			s.fail(t, "APPROVAL_REJECTED")
		} else {
			s.succeed(t)
		}
	case Ignore, Hold:
		if t.op == OpTransfer {
			s.succeed(t)
		} // a request to pay stays PENDING
	default:
		s.succeed(t)
	}
}

func (s *Server) succeed(t *txn) {
	if t.op == OpTransfer {
		if s.balance[Disbursement] < t.amountMinor {
			s.fail(t, "NOT_ENOUGH_FUNDS")
			return
		}
		s.balance[Disbursement] -= t.amountMinor
	} else {
		s.balance[Collection] += t.amountMinor
	}
	t.status = "SUCCESSFUL"
	n := s.core.Move(Movement{Op: t.op, ReferenceID: t.ref, AmountMinor: t.amountMinor, MSISDN: t.msisdn})
	t.financialID = strconv.Itoa(100000000 + n)
	s.finish(t)
}

func (s *Server) fail(t *txn, reason string) {
	t.status, t.reason = "FAILED", reason
	s.finish(t)
}

// finish sends the transaction's one callback, if it asked for one.
func (s *Server) finish(t *txn) {
	if t.called || t.callbackURL == "" {
		return
	}
	t.called = true
	s.sendCallback(t)
}

// sendCallback delivers t's result once, in the background, with no retry.
func (s *Server) sendCallback(t *txn) {
	body, _ := json.Marshal(s.result(t))
	url, method, ref := t.callbackURL, s.opts.CallbackMethod, t.ref
	s.core.Send(method, url, body, func(status int, err error) Callback {
		return Callback{ReferenceID: ref, Method: method, URL: url, Body: body, Status: status, Err: err}
	})
}

// result is the transaction as MoMo shows it in a status answer and a
// callback.
func (s *Server) result(t *txn) map[string]any {
	out := map[string]any{
		"amount":     t.amount,
		"currency":   t.currency,
		"externalId": t.externalID,
		"status":     t.status,
	}
	p := party{PartyIDType: "MSISDN", PartyID: t.msisdn}
	if t.op == OpTransfer {
		out["payee"] = p
	} else {
		out["payer"] = p
	}
	if t.financialID != "" {
		out["financialTransactionId"] = t.financialID
	}
	if t.reason != "" {
		out["reason"] = t.reason
	}
	return out
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, OpStatus, nil, func(ex *exchange, _ *Fault) {
		s.sweep()
		op, product := r.PathValue("op"), r.PathValue("product")
		t := s.txns[r.PathValue("ref")]
		if t == nil || t.op != op || (op == OpTransfer) != (product == Disbursement) {
			ex.fail(http.StatusNotFound, "RESOURCE_NOT_FOUND", "Requested resource was not found.")
			return
		}
		ex.Answer(http.StatusOK, s.result(t))
	})
}

func (s *Server) handleUserInfo(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, OpUserInfo, nil, func(ex *exchange, _ *Fault) {
		msisdn := r.PathValue("msisdn")
		if b, ok := s.payers[msisdn]; ok && b == Unknown || !outbound.Digits(msisdn) {
			ex.fail(http.StatusNotFound, "RESOURCE_NOT_FOUND", "Account holder not found.")
			return
		}
		name := s.names[msisdn]
		if name == "" {
			name = "Test Holder " + msisdn[max(0, len(msisdn)-4):]
		}
		given, family, _ := strings.Cut(name, " ")
		ex.Answer(http.StatusOK, map[string]string{"given_name": given, "family_name": family, "name": name, "locale": "en", "status": "ACTIVE"})
	})
}

func (s *Server) handleBalance(w http.ResponseWriter, r *http.Request) {
	s.serve(w, r, OpBalance, nil, func(ex *exchange, _ *Fault) {
		ex.Answer(http.StatusOK, map[string]string{"availableBalance": formatMinor(s.balance[r.PathValue("product")], s.opts.Exponent), "currency": s.opts.Currency})
	})
}

func (s *Server) handleDecide(w http.ResponseWriter, r *http.Request) {
	approve := r.PathValue("decision") == "approve"
	if !approve && r.PathValue("decision") != "decline" {
		http.Error(w, "approve or decline", http.StatusNotFound)
		return
	}
	if !s.Decide(r.PathValue("ref"), approve) {
		http.Error(w, "no pending request to pay with that reference", http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func hostOf(u string) string {
	rest, ok := strings.CutPrefix(u, "https://")
	if !ok {
		rest, _ = strings.CutPrefix(u, "http://")
	}
	host, _, _ := strings.Cut(rest, "/")
	if h, _, ok := strings.Cut(host, ":"); ok {
		return h
	}
	return host
}

// parseMinor reads a decimal string with at most exp decimals.
func parseMinor(s string, exp int) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if !outbound.Digits(whole) || (frac != "" && !outbound.Digits(frac)) || len(strings.TrimRight(frac, "0")) > exp {
		return 0, fmt.Errorf("bad amount %q", s)
	}
	frac = strings.TrimRight(frac, "0")
	frac += strings.Repeat("0", exp-len(frac))
	return strconv.ParseInt(whole+frac, 10, 64)
}

func formatMinor(minor int64, exp int) string {
	neg := minor < 0
	if neg {
		minor = -minor
	}
	d := strconv.FormatInt(minor, 10)
	if exp > 0 {
		if len(d) <= exp {
			d = strings.Repeat("0", exp-len(d)+1) + d
		}
		d = d[:len(d)-exp] + "." + d[len(d)-exp:]
	}
	if neg {
		d = "-" + d
	}
	return d
}

func isUUID4(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", rune(c)) {
				return false
			}
		}
	}
	return s[14] == '4' && strings.ContainsRune("89abAB", rune(s[19]))
}

func uuid4() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
