package momo

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"payments/rails/internal/outbound"
	"payments/rails/provider"
)

// Kind is the adapter's name in a providers file.
const Kind = "mtn_momo"

// The MoMo products the adapter uses, as they appear in MoMo's paths.
const (
	collection   = "collection"   // requesttopay: money in, prompted on the payer's phone
	disbursement = "disbursement" // transfer: money out
)

// Defaults for what Settings leaves out.
const (
	requestTimeoutDefault     = 30 * time.Second
	tokenRefreshBeforeDefault = 60 * time.Second
	checkAfterDefault         = 15 * time.Second
	retryAfterDefault         = 1 * time.Second
)

// Credentials are one MoMo product's: its subscription key and the API user
// and API key created under it.
type Credentials struct {
	APIUser         provider.Secret
	APIKey          provider.Secret
	SubscriptionKey provider.Secret
}

// Config builds an Adapter. Factory fills it from a providers file; tests
// fill it directly.
type Config struct {
	// Name is the instance's name (for messages).
	Name string
	// BaseURL is MoMo's API root, e.g. https://sandbox.momodeveloper.mtn.com.
	BaseURL string
	// TargetEnvironment is X-Target-Environment: "sandbox", "mtnghana", …
	TargetEnvironment string
	// Currency and its number of decimal places: every instruction must
	// be in it (MoMo refuses another currency for the environment).
	Currency string
	Exponent int
	// CallbackURL is where MoMo sends its callbacks (this instance's
	// ingress route); empty: no X-Callback-Url, status polling only.
	CallbackURL string
	// Collection and Disbursement are the products' credentials; nil
	// means the product is not used (its operations answer an error).
	Collection, Disbursement *Credentials

	HTTPClient *http.Client     // nil: a client with RequestTimeout
	Now        func() time.Time // nil: time.Now
	// RequestTimeout bounds one HTTP exchange; TokenRefreshBefore is how
	// long before its expiry a token is replaced; CheckAfter is what a
	// pending outcome suggests as the next status check.
	RequestTimeout, TokenRefreshBefore, CheckAfter time.Duration
}

// Settings is the instance's "settings" object in a providers file.
type Settings struct {
	provider.HTTPSettings
	TargetEnvironment string `json:"targetEnvironment"`
	Currency          string `json:"currency"`
	CurrencyExponent  *int   `json:"currencyExponent"`
}

// Secret names in a providers file's "secrets" object.
const (
	SecretCollectionAPIUser           = "collectionApiUser"
	SecretCollectionAPIKey            = "collectionApiKey"
	SecretCollectionSubscriptionKey   = "collectionSubscriptionKey"
	SecretDisbursementAPIUser         = "disbursementApiUser"
	SecretDisbursementAPIKey          = "disbursementApiKey"
	SecretDisbursementSubscriptionKey = "disbursementSubscriptionKey"
)

var _ provider.Factory = Factory

// Factory builds an Adapter from a providers file entry of kind "mtn_momo".
// The disbursement secrets are required when a method serves payouts, the
// collection secrets when one serves collections.
func Factory(ic provider.InstanceConfig, secrets provider.Secrets) (any, error) {
	var s Settings
	if err := ic.DecodeSettings(&s); err != nil {
		return nil, fmt.Errorf("momo: settings: %w", err)
	}
	cfg := Config{
		Name:              ic.Name,
		BaseURL:           s.BaseURL,
		TargetEnvironment: s.TargetEnvironment,
		Currency:          s.Currency,
		Exponent:          2,
	}
	if s.CurrencyExponent != nil {
		cfg.Exponent = *s.CurrencyExponent
	}
	cfg.CallbackURL = ic.CallbackURL(s.CallbackBaseURL)
	var err error
	if cfg.RequestTimeout, cfg.TokenRefreshBefore, cfg.CheckAfter, err = s.Timing(); err != nil {
		return nil, fmt.Errorf("momo: settings: %w", err)
	}
	creds := func(user, key, sub string) (*Credentials, error) {
		var c Credentials
		var err error
		if c.APIUser, err = secrets.Get(user); err != nil {
			return nil, fmt.Errorf("momo: %w", err)
		}
		if c.APIKey, err = secrets.Get(key); err != nil {
			return nil, fmt.Errorf("momo: %w", err)
		}
		if c.SubscriptionKey, err = secrets.Get(sub); err != nil {
			return nil, fmt.Errorf("momo: %w", err)
		}
		return &c, nil
	}
	if ic.Serves(provider.Payouts) {
		if cfg.Disbursement, err = creds(SecretDisbursementAPIUser, SecretDisbursementAPIKey, SecretDisbursementSubscriptionKey); err != nil {
			return nil, err
		}
	}
	if ic.Serves(provider.Collections) {
		if cfg.Collection, err = creds(SecretCollectionAPIUser, SecretCollectionAPIKey, SecretCollectionSubscriptionKey); err != nil {
			return nil, err
		}
	}
	return New(cfg)
}

// Adapter is a configured MoMo instance. It is safe for concurrent use.
type Adapter struct {
	cfg          Config
	base         *url.URL
	client       *http.Client
	now          func() time.Time
	collection   *product
	disbursement *product
}

var (
	_ provider.Payouter        = (*Adapter)(nil)
	_ provider.Collector       = (*Adapter)(nil)
	_ provider.CallbackHandler = (*Adapter)(nil)
	_ provider.NameLooker      = (*Adapter)(nil)
	_ provider.Balancer        = (*Adapter)(nil)
)

// ErrNotConfigured is returned for an operation of a product the instance
// has no credentials for.
var ErrNotConfigured = errors.New("momo: product not configured")

// New checks cfg and returns an Adapter.
func New(cfg Config) (*Adapter, error) {
	base, err := outbound.BaseURL(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("momo: %w", err)
	}
	if cfg.TargetEnvironment == "" {
		return nil, errors.New("momo: targetEnvironment is required")
	}
	if len(cfg.Currency) != 3 {
		return nil, fmt.Errorf("momo: currency %q is not a three-letter code", cfg.Currency)
	}
	if cfg.Exponent < 0 || cfg.Exponent > 6 {
		return nil, fmt.Errorf("momo: currencyExponent %d is out of range", cfg.Exponent)
	}
	if cfg.CallbackURL != "" {
		if err := outbound.CheckCallbackURL(cfg.CallbackURL); err != nil {
			return nil, fmt.Errorf("momo: %w", err)
		}
	}
	if cfg.Collection == nil && cfg.Disbursement == nil {
		return nil, errors.New("momo: neither collection nor disbursement credentials are configured")
	}
	cfg.RequestTimeout = outbound.OrDefault(cfg.RequestTimeout, requestTimeoutDefault)
	cfg.TokenRefreshBefore = outbound.OrDefault(cfg.TokenRefreshBefore, tokenRefreshBeforeDefault)
	cfg.CheckAfter = outbound.OrDefault(cfg.CheckAfter, checkAfterDefault)
	a := &Adapter{cfg: cfg, base: base, client: outbound.Client(cfg.HTTPClient, cfg.RequestTimeout), now: cfg.Now}
	if a.now == nil {
		a.now = time.Now
	}
	if cfg.Collection != nil {
		a.collection = &product{name: collection, creds: *cfg.Collection}
	}
	if cfg.Disbursement != nil {
		a.disbursement = &product{name: disbursement, creds: *cfg.Disbursement}
	}
	return a, nil
}

func (a *Adapter) product(name string) (*product, error) {
	p := a.disbursement
	if name == collection {
		p = a.collection
	}
	if p == nil {
		return nil, fmt.Errorf("%w: %s", ErrNotConfigured, name)
	}
	return p, nil
}
