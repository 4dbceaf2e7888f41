package mpesa

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

// Kind is the adapter's name in a providers file.
const Kind = "mpesa"

// Defaults for what Settings leaves out.
const (
	requestTimeoutDefault     = 30 * time.Second
	tokenRefreshBeforeDefault = 60 * time.Second
	checkAfterDefault         = 20 * time.Second
	retryAfterDefault         = 2 * time.Second
	b2cPathDefault            = "/mpesa/b2c/v3/paymentrequest"
)

// nairobi is the zone of Daraja's Timestamp (East Africa Time, no daylight
// saving), fixed so the adapter needs no time zone database.
var nairobi = time.FixedZone("EAT", 3*60*60)

// Config builds an Adapter. Factory fills it from a providers file; tests
// fill it directly.
type Config struct {
	Name    string
	BaseURL string // https://sandbox.safaricom.co.ke or https://api.safaricom.co.ke
	// CallbackURL is this instance's callback route (absolute, without a
	// query); the adapter adds which instruction and a token to it.
	CallbackURL string
	// CallbackNets, when set, are the only networks a callback may come
	// from (Safaricom publishes its addresses).
	CallbackNets []*net.IPNet

	ConsumerKey, ConsumerSecret provider.Secret

	// Collections (STK push): the BusinessShortCode, the PartyB it pays
	// (the same for a paybill; the till for buy goods), the transaction
	// type and the Lipa na M-Pesa passkey.
	ShortCode       string
	PartyB          string
	TransactionType string // CustomerPayBillOnline (default) or CustomerBuyGoodsOnline
	Passkey         provider.Secret

	// Payouts (B2C): the shortcode paid from, the API initiator, its
	// password and Safaricom's certificate (PEM) to encrypt it with, the
	// command and the endpoint path.
	B2CShortCode      string
	InitiatorName     string
	InitiatorPassword provider.Secret
	Certificate       []byte
	CommandID         string // BusinessPayment (default), SalaryPayment, PromotionPayment
	B2CPath           string // default /mpesa/b2c/v3/paymentrequest

	// CallbackSecret keys the per-instruction tokens in callback URLs;
	// zero: derived from ConsumerSecret.
	CallbackSecret provider.Secret

	HTTPClient                                     *http.Client
	Now                                            func() time.Time
	RequestTimeout, TokenRefreshBefore, CheckAfter time.Duration
}

// Settings is the instance's "settings" object in a providers file.
type Settings struct {
	provider.HTTPSettings
	CallbackAllowedIPs []string `json:"callbackAllowedIps"`
	ShortCode          string   `json:"shortCode"`
	PartyB             string   `json:"partyB"`
	TransactionType    string   `json:"transactionType"`
	B2CShortCode       string   `json:"b2cShortCode"`
	InitiatorName      string   `json:"initiatorName"`
	CommandID          string   `json:"commandId"`
	B2CPath            string   `json:"b2cPath"`
}

// Secret names in a providers file's "secrets" object.
const (
	SecretConsumerKey       = "consumerKey"
	SecretConsumerSecret    = "consumerSecret"
	SecretPasskey           = "passkey"
	SecretInitiatorPassword = "initiatorPassword"
	SecretCertificate       = "certificate"
	SecretCallbackSecret    = "callbackSecret"
)

var _ provider.Factory = Factory

// Factory builds an Adapter from a providers file entry of kind "mpesa".
// consumerKey and consumerSecret are always required; shortCode and passkey
// when a method serves collections; b2cShortCode, initiatorName,
// initiatorPassword and certificate when one serves payouts.
func Factory(ic provider.InstanceConfig, secrets provider.Secrets) (any, error) {
	var s Settings
	if err := ic.DecodeSettings(&s); err != nil {
		return nil, fmt.Errorf("mpesa: settings: %w", err)
	}
	cfg := Config{
		Name: ic.Name, BaseURL: s.BaseURL, ShortCode: s.ShortCode, PartyB: s.PartyB, TransactionType: s.TransactionType,
		B2CShortCode: s.B2CShortCode, InitiatorName: s.InitiatorName, CommandID: s.CommandID, B2CPath: s.B2CPath,
	}
	cfg.CallbackURL = ic.CallbackURL(s.CallbackBaseURL)
	for _, ip := range s.CallbackAllowedIPs {
		if !strings.Contains(ip, "/") {
			if strings.Contains(ip, ":") {
				ip += "/128"
			} else {
				ip += "/32"
			}
		}
		_, n, err := net.ParseCIDR(ip)
		if err != nil {
			return nil, fmt.Errorf("mpesa: settings: callbackAllowedIps: %w", err)
		}
		cfg.CallbackNets = append(cfg.CallbackNets, n)
	}
	var err error
	if cfg.RequestTimeout, cfg.TokenRefreshBefore, cfg.CheckAfter, err = s.Timing(); err != nil {
		return nil, fmt.Errorf("mpesa: settings: %w", err)
	}
	need := func(name string, into *provider.Secret) error {
		v, err := secrets.Get(name)
		if err != nil {
			return fmt.Errorf("mpesa: %w", err)
		}
		*into = v
		return nil
	}
	if err := need(SecretConsumerKey, &cfg.ConsumerKey); err != nil {
		return nil, err
	}
	if err := need(SecretConsumerSecret, &cfg.ConsumerSecret); err != nil {
		return nil, err
	}
	cfg.CallbackSecret = secrets[SecretCallbackSecret]
	if ic.Serves(provider.Collections) {
		if err := need(SecretPasskey, &cfg.Passkey); err != nil {
			return nil, err
		}
	} else {
		cfg.ShortCode = ""
	}
	if ic.Serves(provider.Payouts) {
		var cert provider.Secret
		if err := need(SecretInitiatorPassword, &cfg.InitiatorPassword); err != nil {
			return nil, err
		}
		if err := need(SecretCertificate, &cert); err != nil {
			return nil, err
		}
		cfg.Certificate = []byte(cert.Reveal())
	} else {
		cfg.B2CShortCode = ""
	}
	return New(cfg)
}

// Adapter is a configured M-Pesa Daraja instance. It is safe for
// concurrent use.
type Adapter struct {
	cfg         Config
	base        string
	client      *http.Client
	now         func() time.Time
	tok         outbound.TokenCache
	cred        *credential // nil without payouts
	callbackKey []byte
	stkEnabled  bool
	b2cEnabled  bool
	sentMu      sync.Mutex
	sent        map[string]bool // keys this process sent or may have sent
	sentOrder   []string        // for the bound on sent
}

var (
	_ provider.Payouter        = (*Adapter)(nil)
	_ provider.Collector       = (*Adapter)(nil)
	_ provider.CallbackHandler = (*Adapter)(nil)
	_ provider.SendOnce        = (*Adapter)(nil)
)

// ErrNotConfigured is returned for a direction the instance has no
// settings for.
var ErrNotConfigured = errors.New("mpesa: not configured")

// New checks cfg and returns an Adapter.
func New(cfg Config) (*Adapter, error) {
	u, err := outbound.BaseURL(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("mpesa: %w", err)
	}
	if cfg.ConsumerKey.IsZero() || cfg.ConsumerSecret.IsZero() {
		return nil, errors.New("mpesa: the consumer key and secret are required")
	}
	if cfg.CallbackURL == "" {
		return nil, errors.New("mpesa: callbackBaseUrl is required (Daraja answers only by callback)")
	}
	if err := outbound.CheckCallbackURL(cfg.CallbackURL); err != nil {
		return nil, fmt.Errorf("mpesa: %w", err)
	}
	a := &Adapter{cfg: cfg, base: u.String(), client: cfg.HTTPClient, now: cfg.Now, sent: map[string]bool{}}
	if cfg.ShortCode != "" {
		if !outbound.Digits(cfg.ShortCode) || cfg.Passkey.IsZero() {
			return nil, errors.New("mpesa: collections need a numeric shortCode and the passkey")
		}
		if a.cfg.PartyB == "" {
			a.cfg.PartyB = cfg.ShortCode
		}
		switch a.cfg.TransactionType {
		case "":
			a.cfg.TransactionType = "CustomerPayBillOnline"
		case "CustomerPayBillOnline", "CustomerBuyGoodsOnline":
		default:
			return nil, fmt.Errorf("mpesa: transactionType %q is neither CustomerPayBillOnline nor CustomerBuyGoodsOnline", cfg.TransactionType)
		}
		a.stkEnabled = true
	}
	if cfg.B2CShortCode != "" {
		if !outbound.Digits(cfg.B2CShortCode) || cfg.InitiatorName == "" || cfg.InitiatorPassword.IsZero() {
			return nil, errors.New("mpesa: payouts need a numeric b2cShortCode, the initiatorName and its password")
		}
		if a.cred, err = parseCertificate(cfg.Certificate); err != nil {
			return nil, err
		}
		switch a.cfg.CommandID {
		case "":
			a.cfg.CommandID = "BusinessPayment"
		case "BusinessPayment", "SalaryPayment", "PromotionPayment":
		default:
			return nil, fmt.Errorf("mpesa: commandId %q is not a B2C command", cfg.CommandID)
		}
		if a.cfg.B2CPath == "" {
			a.cfg.B2CPath = b2cPathDefault
		}
		a.b2cEnabled = true
	}
	if !a.stkEnabled && !a.b2cEnabled {
		return nil, errors.New("mpesa: configure a shortCode (collections) or a b2cShortCode (payouts)")
	}
	a.cfg.RequestTimeout = outbound.OrDefault(a.cfg.RequestTimeout, requestTimeoutDefault)
	a.cfg.TokenRefreshBefore = outbound.OrDefault(a.cfg.TokenRefreshBefore, tokenRefreshBeforeDefault)
	a.cfg.CheckAfter = outbound.OrDefault(a.cfg.CheckAfter, checkAfterDefault)
	a.client = outbound.Client(a.client, a.cfg.RequestTimeout)
	if a.now == nil {
		a.now = time.Now
	}
	if !cfg.CallbackSecret.IsZero() {
		a.callbackKey = []byte(cfg.CallbackSecret.Reveal())
	} else {
		m := hmac.New(sha256.New, []byte(cfg.ConsumerSecret.Reveal()))
		m.Write([]byte("mpesa callback tokens"))
		a.callbackKey = m.Sum(nil)
	}
	return a, nil
}

// SendOnce reports true for payouts and collections: Daraja's refusal of a
// duplicate OriginatorConversationID is not promised to last, and a
// re-sent STK push prompts the payer a second time. See the package doc
// for what the caller does.
func (a *Adapter) SendOnce(provider.Direction) bool { return true }

// sentMax bounds the keys remembered as sent by this process.
const sentMax = 100_000

// markSent remembers that key was (or may have been) sent; it reports
// false if it already was.
func (a *Adapter) markSent(key string) bool {
	a.sentMu.Lock()
	defer a.sentMu.Unlock()
	if a.sent[key] {
		return false
	}
	if len(a.sentOrder) >= sentMax {
		old := a.sentOrder[:sentMax/2]
		for _, k := range old {
			delete(a.sent, k)
		}
		a.sentOrder = append(a.sentOrder[:0], a.sentOrder[sentMax/2:]...)
	}
	a.sent[key] = true
	a.sentOrder = append(a.sentOrder, key)
	return true
}

// prepare checks that the direction is configured (enabled) and that in
// is in whole shillings, and returns k as the instruction's key.
func (a *Adapter) prepare(enabled bool, direction string, in provider.Instruction, k string) (provider.Prepared, error) {
	if !enabled {
		return provider.Prepared{}, fmt.Errorf("%w: %s", ErrNotConfigured, direction)
	}
	if _, err := wholeShillings(in); err != nil {
		return provider.Prepared{}, err
	}
	return provider.Prepared{Key: k}, nil
}

// beginSend checks what prepare checks and marks k sent, by the SendOnce
// rule: a key this process already sent (what names the request in the
// error) is refused with ErrUnknownOutcome. It returns the amount in
// whole shillings.
func (a *Adapter) beginSend(enabled bool, direction, what string, in provider.Instruction, k string) (int64, error) {
	if !enabled {
		return 0, fmt.Errorf("%w: %s", ErrNotConfigured, direction)
	}
	amount, err := wholeShillings(in)
	if err != nil {
		return 0, err
	}
	if !a.markSent(k) {
		return 0, provider.Errorf(provider.ErrUnknownOutcome, "mpesa %s %s was already sent by this process: only its status may be asked", what, k)
	}
	return amount, nil
}

// unmarkSent forgets key after an answer that says nothing was done, so
// the caller may send it again.
func (a *Adapter) unmarkSent(key string) {
	a.sentMu.Lock()
	defer a.sentMu.Unlock()
	delete(a.sent, key)
}

func (a *Adapter) wasSent(key string) bool {
	a.sentMu.Lock()
	defer a.sentMu.Unlock()
	return a.sent[key]
}

func (a *Adapter) String() string { return fmt.Sprintf("mpesa(%s)", a.cfg.Name) }
