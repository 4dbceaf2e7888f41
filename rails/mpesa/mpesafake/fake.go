package mpesafake

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"payments/rails/internal/fakehttp"
	"payments/rails/internal/outbound"
)

// Options configure a Server. Empty credentials are generated; the zero
// value is Safaricom's sandbox shortcodes with payers who approve at once.
type Options struct {
	ConsumerKey, ConsumerSecret string
	ShortCode                   string // STK BusinessShortCode; default 174379
	Passkey                     string
	B2CShortCode                string // default 600000
	InitiatorName               string // default testapi
	InitiatorPassword           string
	// TokenLifetime is expires_in; default 3599 seconds.
	TokenLifetime time.Duration
	// Now is the fake's clock (token expiry, STK expiry).
	Now func() time.Time
	// B2CBalance is the B2C account's opening balance in whole shillings;
	// default 1,000,000.
	B2CBalance int64
	// STKExpiry is how long a push waits for its payer before it fails
	// with 1037; default one minute.
	STKExpiry time.Duration
	// DefaultPayer is what a number with no rule does; default Approve.
	DefaultPayer Behaviour
	// Key is the RSA key whose certificate clients encrypt the initiator
	// password with; nil: a new 2048-bit key.
	Key *rsa.PrivateKey
}

// Behaviour is what a phone number does: as a payer asked by an STK push,
// or as the recipient of a B2C payment.
type Behaviour int

const (
	Approve      Behaviour = iota + 1 // enters the PIN (payer); receives (recipient)
	Cancel                            // cancels the prompt: 1032
	Insufficient                      // the payer lacks the money: 1
	WrongPIN                          // 2001
	Unreachable                       // the phone cannot be reached: 1037 at once
	Hold                              // the prompt waits until Decide or expiry (then 1037)
	Unregistered                      // not an M-Pesa customer (recipient): 2040
)

// Fault is a one-shot misbehaviour of the next request of an operation.
type Fault struct {
	Status          int           // answer with this status, do nothing (429 with Retry-After)
	RetryAfter      time.Duration // with 429
	DropBeforeApply bool          // close the connection, do nothing
	DropAfterApply  bool          // do it (the money moves), then close the connection unanswered
	QueueTimeout    bool          // B2C: accept, then time the request out in the queue (timeout callback, nothing moves)
}

// Operations a Fault may be set on.
const (
	OpToken             = "token"
	OpSTKPush           = "stkpush"
	OpSTKQuery          = "stkquery"
	OpB2C               = "b2c"
	OpTransactionStatus = "transactionstatus"
)

// Request is one request the fake received, without its credentials.
type Request struct {
	Op     string
	Path   string
	Key    string // OriginatorConversationID, CheckoutRequestID or OriginalConversationID it concerns
	Body   []byte
	Status int // what the fake answered; 0: the connection was dropped
}

// Movement is money that moved.
type Movement struct {
	Op            string // OpSTKPush or OpB2C
	Key           string // CheckoutRequestID or OriginatorConversationID
	Amount        int64  // whole shillings
	MSISDN        string
	TransactionID string
}

// Callback is one callback the fake sent.
type Callback struct {
	URL    string
	Body   []byte
	Status int
	Err    error
}

// Server is a fake Daraja on loopback. Every method is safe for concurrent
// use.
type Server struct {
	URL  string
	opts Options
	cert []byte

	// Controls are the fake's controls and records for tests: FailNext,
	// ExpireTokens, Requests, Count, Movements, Callbacks and Close.
	fakehttp.Controls[Request, Fault, Movement, Callback]

	mu      sync.Mutex
	core    *fakehttp.Core[Request, Fault, Movement, Callback]
	stk     map[string]*stkTxn // CheckoutRequestID →
	b2c     map[string]*b2cTxn // OriginatorConversationID →
	payers  map[string]Behaviour
	b2cBal  int64
	paybill int64
	seq     int
	// held keeps new B2C payments undecided (HoldB2C).
	held fakehttp.Held[*b2cTxn]
}

type stkTxn struct {
	checkoutID, merchantID, msisdn, callbackURL string
	amount                                      int64
	created                                     time.Time
	done                                        bool
	code                                        string
	desc                                        string
	receipt                                     string
}

type b2cTxn struct {
	originatorID, conversationID, msisdn, resultURL, timeoutURL string
	amount                                                      int64
	done                                                        bool
	code, desc, receipt                                         string
	timedOut                                                    bool
	initiatorOK                                                 bool // its SecurityCredential was right
}

// NewServer starts a fake on an ephemeral loopback port; Close stops it.
func NewServer(opts Options) *Server {
	s := New(opts)
	s.URL = s.core.Listen(s.Handler())
	return s
}

// New returns a fake that is not listening (the standalone command serves
// Handler itself and sets URL).
func New(opts Options) *Server {
	gen := func(v *string, n int) {
		if *v == "" {
			*v = fakehttp.RandomHex(n)
		}
	}
	gen(&opts.ConsumerKey, 16)
	gen(&opts.ConsumerSecret, 16)
	gen(&opts.Passkey, 32)
	gen(&opts.InitiatorPassword, 8)
	if opts.ShortCode == "" {
		opts.ShortCode = "174379"
	}
	if opts.B2CShortCode == "" {
		opts.B2CShortCode = "600000"
	}
	if opts.InitiatorName == "" {
		opts.InitiatorName = "testapi"
	}
	if opts.TokenLifetime <= 0 {
		opts.TokenLifetime = 3599 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.B2CBalance == 0 {
		opts.B2CBalance = 1_000_000
	}
	if opts.STKExpiry <= 0 {
		opts.STKExpiry = time.Minute
	}
	if opts.DefaultPayer == 0 {
		opts.DefaultPayer = Approve
	}
	if opts.Key == nil {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		opts.Key = k
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "mpesafake"},
		NotBefore:    time.Unix(0, 0),
		NotAfter:     time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &opts.Key.PublicKey, opts.Key)
	if err != nil {
		panic(err)
	}
	s := &Server{
		opts:   opts,
		cert:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		stk:    map[string]*stkTxn{},
		b2c:    map[string]*b2cTxn{},
		payers: map[string]Behaviour{},
		b2cBal: opts.B2CBalance,
	}
	s.core = fakehttp.NewCore[Request, Fault, Movement, Callback](&s.mu)
	s.Controls = s.core.Controls()
	return s
}

// Options returns the options in force, with generated credentials.
func (s *Server) Options() Options { return s.opts }

// CertificatePEM is the certificate clients encrypt the initiator password
// with (Safaricom's, in the real thing).
func (s *Server) CertificatePEM() []byte { return append([]byte(nil), s.cert...) }

// SetPayer sets what msisdn does.
func (s *Server) SetPayer(msisdn string, b Behaviour) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.payers[msisdn] = b
}

// B2CBalance is the B2C account's balance in whole shillings.
func (s *Server) B2CBalance() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b2cBal
}

// SetB2CBalance sets it.
func (s *Server) SetB2CBalance(v int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b2cBal = v
}

// Decide answers a held STK prompt as the payer would; it reports whether
// there was one.
func (s *Server) Decide(checkoutID string, approve bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.stk[checkoutID]
	if t == nil || t.done {
		return false
	}
	if approve {
		s.stkApprove(t)
	} else {
		s.stkFinish(t, "1032", "Request cancelled by user")
	}
	return true
}

// Sweep fails the STK prompts unanswered for STKExpiry on the fake's
// clock (1037); STK queries sweep too.
func (s *Server) Sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweep()
}

func (s *Server) sweep() {
	now := s.opts.Now()
	for _, t := range s.stk {
		if !t.done && !now.Before(t.created.Add(s.opts.STKExpiry)) {
			s.stkFinish(t, "1037", "DS timeout user cannot be reached")
		}
	}
}

// ResendB2CResult delivers a B2C payment's result callback once more, as a
// duplicate delivery would.
func (s *Server) ResendB2CResult(originatorID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.b2c[originatorID]
	if t == nil || !t.done || t.timedOut {
		return false
	}
	s.sendB2CResult(t)
	return true
}

// ResendSTKResult delivers an STK push's result callback once more.
func (s *Server) ResendSTKResult(checkoutID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.stk[checkoutID]
	if t == nil || !t.done {
		return false
	}
	s.sendSTKResult(t)
	return true
}

// Handler serves Daraja's API and the fake's controls under /_fake/.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /oauth/v1/generate", s.handleToken)
	mux.HandleFunc("POST /mpesa/stkpush/v1/processrequest", serve(s, OpSTKPush, "404.001.03", s.stkPush))
	mux.HandleFunc("POST /mpesa/stkpushquery/v1/query", serve(s, OpSTKQuery, "404.001.03", s.stkQuery))
	b2c := serve(s, OpB2C, "401.002.01", s.b2cPayment)
	mux.HandleFunc("POST /mpesa/b2c/v3/paymentrequest", b2c)
	mux.HandleFunc("POST /mpesa/b2c/v1/paymentrequest", b2c)
	mux.HandleFunc("POST /mpesa/transactionstatus/v1/query", serve(s, OpTransactionStatus, "401.002.01", s.transactionStatus))
	mux.HandleFunc("POST /_fake/stk/{checkout}/{decision}", func(w http.ResponseWriter, r *http.Request) {
		d := r.PathValue("decision")
		if (d != "approve" && d != "cancel") || !s.Decide(r.PathValue("checkout"), d == "approve") {
			http.Error(w, "no held STK push with that CheckoutRequestID (approve or cancel)", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	s.core.HandleControls(mux)
	return mux
}

// exchange is one request being served: it records itself in the log.
type exchange struct {
	fakehttp.Exchange
	req *Request
}

func (s *Server) begin(w http.ResponseWriter, r *http.Request, op string, body []byte) (*exchange, *Fault) {
	req := &Request{Op: op, Path: r.URL.Path, Body: body}
	return &exchange{Exchange: fakehttp.NewExchange(w, &req.Status), req: req}, s.core.Begin(op, req)
}

// fail answers Daraja's synchronous error shape.
func (ex *exchange) fail(status int, code, message string) {
	ex.Answer(status, map[string]string{"requestId": fakehttp.RandomHex(6), "errorCode": code, "errorMessage": message})
}

func (ex *exchange) applyFault(f *Fault) bool {
	switch {
	case f == nil:
		return false
	case f.DropBeforeApply:
		ex.Drop()
		return true
	case f.Status == http.StatusTooManyRequests:
		ex.W.Header().Set("Retry-After", strconv.Itoa(int(f.RetryAfter/time.Second)))
		ex.fail(f.Status, "500.003.02", "Error Occurred: Spike Arrest Violation")
		return true
	case f.Status != 0:
		ex.fail(f.Status, "500.003.1001", "Internal Server Error")
		return true
	}
	return false
}

func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ex, f := s.begin(w, r, OpToken, nil)
	if ex.applyFault(f) {
		return
	}
	if r.URL.Query().Get("grant_type") != "client_credentials" {
		ex.fail(http.StatusBadRequest, "400.008.02", "Invalid grant type passed")
		return
	}
	if k, sec, ok := r.BasicAuth(); !ok || k != s.opts.ConsumerKey || sec != s.opts.ConsumerSecret {
		ex.fail(http.StatusBadRequest, "400.008.01", "Invalid Authentication passed")
		return
	}
	tok := s.core.IssueToken("", s.opts.Now().Add(s.opts.TokenLifetime), 14)
	ex.Answer(http.StatusOK, map[string]string{"access_token": tok, "expires_in": strconv.Itoa(int(s.opts.TokenLifetime / time.Second))})
}

// authorize checks the bearer token, answering Daraja's error when it is
// missing, unknown or expired.
func (s *Server) authorize(ex *exchange, r *http.Request, code string) bool {
	if !s.core.Authorized(r, "", s.opts.Now()) {
		ex.fail(http.StatusUnauthorized, code, "Invalid Access Token")
		return false
	}
	return true
}

// decode reads a JSON body into v, answering 400 on failure.
func decode(ex *exchange, body []byte, v any) bool {
	if err := json.Unmarshal(body, v); err != nil {
		ex.fail(http.StatusBadRequest, "400.002.05", "Invalid Request Payload")
		return false
	}
	return true
}

// whole reads an Amount: a JSON number or string of whole shillings.
func whole(raw json.RawMessage) (int64, bool) {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil && v > 0
}

func (s *Server) behaviour(msisdn string) Behaviour {
	if b, ok := s.payers[msisdn]; ok {
		return b
	}
	return s.opts.DefaultPayer
}

// serve answers a JSON request of op with handle, under the fake's lock:
// once the request is logged, has met no fault, carries a good token
// (else Daraja's authCode) and its body is read into a B.
func serve[B any](s *Server, op, authCode string, handle func(ex *exchange, f *Fault, b *B)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body := fakehttp.ReadBody(r)
		s.mu.Lock()
		defer s.mu.Unlock()
		ex, f := s.begin(w, r, op, body)
		if ex.applyFault(f) || !s.authorize(ex, r, authCode) {
			return
		}
		var b B
		if !decode(ex, body, &b) {
			return
		}
		handle(ex, f, &b)
	}
}

type stkPushBody struct {
	BusinessShortCode, Password, Timestamp, TransactionType string
	Amount                                                  json.RawMessage
	PartyA, PartyB, PhoneNumber, CallBackURL                string
	AccountReference, TransactionDesc                       string
}

func (s *Server) stkPush(ex *exchange, f *Fault, b *stkPushBody) {
	amount, ok := whole(b.Amount)
	switch {
	case b.BusinessShortCode != s.opts.ShortCode:
		ex.fail(http.StatusInternalServerError, "500.001.1001", "Merchant does not exist")
	case b.Password != stkPassword(s.opts.ShortCode, s.opts.Passkey, b.Timestamp) || len(b.Timestamp) != 14:
		ex.fail(http.StatusInternalServerError, "500.001.1001", "Wrong credentials")
	case b.TransactionType != "CustomerPayBillOnline" && b.TransactionType != "CustomerBuyGoodsOnline":
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid TransactionType")
	case !ok:
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid Amount")
	case !kenyan(b.PartyA) || b.PhoneNumber != b.PartyA:
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid PhoneNumber")
	case b.PartyB == "":
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid PartyB")
	case !strings.HasPrefix(b.CallBackURL, "http"):
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid CallBackURL")
	case len(b.AccountReference) > 12 || b.AccountReference == "":
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid AccountReference")
	case len(b.TransactionDesc) > 13:
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid TransactionDesc")
	default:
		s.seq++
		t := &stkTxn{
			checkoutID: fmt.Sprintf("ws_CO_%s%06d", s.opts.Now().Format("02012006150405"), s.seq),
			merchantID: fmt.Sprintf("%d-%d-1", 29115+s.seq, 34620561+s.seq),
			msisdn:     b.PhoneNumber, callbackURL: b.CallBackURL, amount: amount, created: s.opts.Now(),
		}
		s.stk[t.checkoutID] = t
		ex.req.Key = t.checkoutID
		switch s.behaviour(t.msisdn) {
		case Cancel:
			s.stkFinish(t, "1032", "Request cancelled by user")
		case Insufficient:
			s.stkFinish(t, "1", "The balance is insufficient for the transaction")
		case WrongPIN:
			s.stkFinish(t, "2001", "The initiator information is invalid.")
		case Unreachable:
			s.stkFinish(t, "1037", "DS timeout user cannot be reached")
		case Hold:
		default:
			s.stkApprove(t)
		}
		if f != nil && f.DropAfterApply {
			ex.Drop()
			return
		}
		ex.Answer(http.StatusOK, map[string]string{
			"MerchantRequestID": t.merchantID, "CheckoutRequestID": t.checkoutID, "ResponseCode": "0",
			"ResponseDescription": "Success. Request accepted for processing", "CustomerMessage": "Success. Request accepted for processing",
		})
	}
}

func (s *Server) stkApprove(t *stkTxn) {
	t.receipt = s.receipt()
	s.paybill += t.amount
	s.core.Move(Movement{Op: OpSTKPush, Key: t.checkoutID, Amount: t.amount, MSISDN: t.msisdn, TransactionID: t.receipt})
	s.stkFinish(t, "0", "The service request is processed successfully.")
}

func (s *Server) stkFinish(t *stkTxn, code, desc string) {
	t.done, t.code, t.desc = true, code, desc
	s.sendSTKResult(t)
}

func (s *Server) sendSTKResult(t *stkTxn) {
	cb := map[string]any{"MerchantRequestID": t.merchantID, "CheckoutRequestID": t.checkoutID, "ResultCode": mustInt(t.code), "ResultDesc": t.desc}
	if t.code == "0" {
		cb["CallbackMetadata"] = map[string]any{"Item": []map[string]any{
			{"Name": "Amount", "Value": t.amount},
			{"Name": "MpesaReceiptNumber", "Value": t.receipt},
			{"Name": "TransactionDate", "Value": mustInt(s.opts.Now().Format("20060102150405"))},
			{"Name": "PhoneNumber", "Value": mustInt(t.msisdn)},
		}}
	}
	s.post(t.callbackURL, map[string]any{"Body": map[string]any{"stkCallback": cb}})
}

type stkQueryBody struct{ BusinessShortCode, Password, Timestamp, CheckoutRequestID string }

func (s *Server) stkQuery(ex *exchange, _ *Fault, b *stkQueryBody) {
	ex.req.Key = b.CheckoutRequestID
	if b.BusinessShortCode != s.opts.ShortCode || b.Password != stkPassword(s.opts.ShortCode, s.opts.Passkey, b.Timestamp) {
		ex.fail(http.StatusInternalServerError, "500.001.1001", "Wrong credentials")
		return
	}
	s.sweep()
	t := s.stk[b.CheckoutRequestID]
	switch {
	case t == nil:
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid CheckoutRequestID")
	case !t.done:
		ex.fail(http.StatusInternalServerError, "500.001.1001", "The transaction is being processed")
	default:
		ex.Answer(http.StatusOK, map[string]string{
			"ResponseCode": "0", "ResponseDescription": "The service request has been accepted successsfully",
			"MerchantRequestID": t.merchantID, "CheckoutRequestID": t.checkoutID, "ResultCode": t.code, "ResultDesc": t.desc,
		})
	}
}

// checkInitiator decrypts a SecurityCredential with the fake's key and
// compares it with the initiator password.
func (s *Server) checkInitiator(name, credential string) bool {
	ct, err := base64.StdEncoding.DecodeString(credential)
	if err != nil || name != s.opts.InitiatorName {
		return false
	}
	pw, err := rsa.DecryptPKCS1v15(nil, s.opts.Key, ct)
	return err == nil && string(pw) == s.opts.InitiatorPassword
}

type b2cBody struct {
	OriginatorConversationID, InitiatorName, SecurityCredential, CommandID string
	Amount                                                                 json.RawMessage
	PartyA, PartyB, Remarks, QueueTimeOutURL, ResultURL, Occasion          string
}

func (s *Server) b2cPayment(ex *exchange, f *Fault, b *b2cBody) {
	ex.req.Key = b.OriginatorConversationID
	amount, ok := whole(b.Amount)
	switch {
	case b.OriginatorConversationID == "":
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid OriginatorConversationID")
		return
	case s.b2c[b.OriginatorConversationID] != nil:
		// Daraja refuses a seen OriginatorConversationID and does
		// nothing for the second request.
		ex.fail(http.StatusInternalServerError, "500.002.1001", "Duplicate OriginatorConversationID")
		return
	case !ok:
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid Amount")
		return
	case b.CommandID != "BusinessPayment" && b.CommandID != "SalaryPayment" && b.CommandID != "PromotionPayment":
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid CommandID")
		return
	case b.PartyA != s.opts.B2CShortCode:
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid PartyA")
		return
	case !kenyan(b.PartyB):
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid PartyB")
		return
	case !strings.HasPrefix(b.ResultURL, "http") || !strings.HasPrefix(b.QueueTimeOutURL, "http"):
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid ResultURL")
		return
	case len(b.Remarks) < 2 || len(b.Remarks) > 100:
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid Remarks")
		return
	}
	s.seq++
	t := &b2cTxn{originatorID: b.OriginatorConversationID, conversationID: fmt.Sprintf("AG_%s_%016x", s.opts.Now().Format("20060102"), s.seq),
		msisdn: b.PartyB, resultURL: b.ResultURL, timeoutURL: b.QueueTimeOutURL, amount: amount,
		initiatorOK: s.checkInitiator(b.InitiatorName, b.SecurityCredential)}
	s.b2c[t.originatorID] = t
	switch {
	case f != nil && f.QueueTimeout:
		t.done, t.timedOut = true, true
		s.post(t.timeoutURL, map[string]any{"Result": map[string]any{"ResultType": 1, "ResultCode": 1, "ResultDesc": "The service request timed out.",
			"OriginatorConversationID": t.originatorID, "ConversationID": t.conversationID}})
	case s.held.Keep(t):
	default:
		s.decideB2C(t)
	}
	if f != nil && f.DropAfterApply {
		ex.Drop()
		return
	}
	ex.Answer(http.StatusOK, map[string]string{"ConversationID": t.conversationID, "OriginatorConversationID": t.originatorID,
		"ResponseCode": "0", "ResponseDescription": "Accept the service request successfully."})
}

// HoldB2C keeps the B2C payments that arrive from now on undecided:
// accepted (ResponseCode 0), nothing moved, no result callback, and a
// transaction status query does not find them, until ReleaseB2C. It
// stands for a payment waiting in M-Pesa's queue, so that a test can act
// while payouts are at the provider. Past fakehttp.HeldMax held payments,
// new ones are decided at once.
func (s *Server) HoldB2C() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held.Start()
}

// ReleaseB2C stops holding and decides the held payments in the order
// they arrived (money moves, result callbacks go); it returns how many
// there were.
func (s *Server) ReleaseB2C() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held.Release(s.decideB2C)
}

// decideB2C settles a payment Daraja accepted: its result by the
// initiator's credentials, the limits, the recipient and the balance.
func (s *Server) decideB2C(t *b2cTxn) {
	amount := t.amount
	switch {
	case !t.initiatorOK:
		s.b2cFinish(t, "2001", "The initiator information is invalid.")
	case amount < 10:
		s.b2cFinish(t, "2", "Declined due to limit rule: less than the minimum transaction amount.")
	case amount > 250_000:
		s.b2cFinish(t, "3", "Declined due to limit rule: greater than the maximum transaction amount.")
	case s.behaviour(t.msisdn) == Unregistered:
		s.b2cFinish(t, "2040", "Credit Party customer type (Unregistered or Registered Customer) can't be supported by the service.")
	case s.b2cBal < amount:
		s.b2cFinish(t, "1", "The balance is insufficient for the transaction.")
	default:
		s.b2cBal -= amount
		t.receipt = s.receipt()
		s.core.Move(Movement{Op: OpB2C, Key: t.originatorID, Amount: amount, MSISDN: t.msisdn, TransactionID: t.receipt})
		s.b2cFinish(t, "0", "The service request is processed successfully.")
	}
}

func (s *Server) b2cFinish(t *b2cTxn, code, desc string) {
	t.done, t.code, t.desc = true, code, desc
	s.sendB2CResult(t)
}

func (s *Server) sendB2CResult(t *b2cTxn) {
	res := map[string]any{"ResultType": 0, "ResultCode": mustInt(t.code), "ResultDesc": t.desc,
		"OriginatorConversationID": t.originatorID, "ConversationID": t.conversationID, "TransactionID": t.receipt,
		"ReferenceData": map[string]any{"ReferenceItem": map[string]string{"Key": "QueueTimeoutURL", "Value": "https://internalsandbox.safaricom.co.ke/mpesa/b2cresults/v1/submit"}}}
	if t.code == "0" {
		res["ResultParameters"] = map[string]any{"ResultParameter": []map[string]any{
			{"Key": "TransactionAmount", "Value": t.amount},
			{"Key": "TransactionReceipt", "Value": t.receipt},
			{"Key": "B2CRecipientIsRegisteredCustomer", "Value": "Y"},
			{"Key": "ReceiverPartyPublicName", "Value": t.msisdn + " - Test Customer"},
			{"Key": "TransactionCompletedDateTime", "Value": s.opts.Now().In(time.FixedZone("EAT", 3*3600)).Format("02.01.2006 15:04:05")},
			{"Key": "B2CUtilityAccountAvailableFunds", "Value": s.b2cBal},
		}}
	} else {
		res["TransactionID"] = strings.Repeat("0", 10)
	}
	s.post(t.resultURL, map[string]any{"Result": res})
}

// transactionStatus answers synchronously that the query is accepted,
// then posts the transaction's state to the query's ResultURL. The fake
// reports a B2C it processed as TransactionStatus "Completed" or "Failed"
// (ReasonType: the result's words), and one it never took (or that timed
// out in the queue) with a non-zero ResultCode.
type transactionStatusBody struct {
	Initiator, SecurityCredential, CommandID, TransactionID, OriginalConversationID string
	PartyA, IdentifierType, ResultURL, QueueTimeOutURL, Remarks, Occasion           string
}

func (s *Server) transactionStatus(ex *exchange, _ *Fault, b *transactionStatusBody) {
	ex.req.Key = b.OriginalConversationID
	if b.CommandID != "TransactionStatusQuery" || !strings.HasPrefix(b.ResultURL, "http") || (b.TransactionID == "" && b.OriginalConversationID == "") {
		ex.fail(http.StatusBadRequest, "400.002.02", "Bad Request - Invalid request")
		return
	}
	s.seq++
	conv := fmt.Sprintf("AG_%s_%016x", s.opts.Now().Format("20060102"), s.seq)
	ex.Answer(http.StatusOK, map[string]string{"ConversationID": conv, "OriginatorConversationID": fmt.Sprintf("%d-%d-1", 5118+s.seq, 111210482+s.seq),
		"ResponseCode": "0", "ResponseDescription": "Accept the service request successfully."})
	res := map[string]any{"ResultType": 0, "ConversationID": conv, "TransactionID": b.TransactionID}
	var t *b2cTxn
	for _, c := range s.b2c {
		if (b.OriginalConversationID != "" && c.originatorID == b.OriginalConversationID) || (b.TransactionID != "" && c.receipt == b.TransactionID) {
			t = c
		}
	}
	switch {
	case !s.checkInitiator(b.Initiator, b.SecurityCredential):
		res["ResultCode"], res["ResultDesc"] = 2001, "The initiator information is invalid."
	case t == nil || t.timedOut || !t.done:
		res["ResultCode"], res["ResultDesc"] = "R000002", "The transaction could not be found."
	default:
		status := "Completed"
		if t.code != "0" {
			status = "Failed"
		}
		res["ResultCode"], res["ResultDesc"] = 0, "The service request is processed successfully."
		res["ResultParameters"] = map[string]any{"ResultParameter": []map[string]any{
			{"Key": "ReceiptNo", "Value": t.receipt},
			{"Key": "TransactionStatus", "Value": status},
			{"Key": "ReasonType", "Value": t.desc},
			{"Key": "Amount", "Value": t.amount},
			{"Key": "CreditPartyName", "Value": t.msisdn + " - Test Customer"},
		}}
	}
	s.post(b.ResultURL, map[string]any{"Result": res})
}

// post sends one callback in the background, once, with no retry.
func (s *Server) post(url string, v any) {
	body, _ := json.Marshal(v)
	s.core.Send(http.MethodPost, url, body, func(status int, err error) Callback {
		return Callback{URL: url, Body: body, Status: status, Err: err}
	})
}

// receipt draws an M-Pesa transaction id: ten capitals and digits.
func (s *Server) receipt() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	b[0] = 'S'
	return string(b)
}

func stkPassword(shortCode, passkey, timestamp string) string {
	return base64.StdEncoding.EncodeToString([]byte(shortCode + passkey + timestamp))
}

func kenyan(msisdn string) bool {
	return len(msisdn) == 12 && strings.HasPrefix(msisdn, "254") && outbound.Digits(msisdn)
}

// mustInt writes a numeric code as a JSON number, as Daraja does; codes
// that are not numbers (SFC_IC0003) stay strings.
func mustInt(s string) any {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v
	}
	return s
}
