package evm

import (
	"bytes"
	"cmp"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"payments/rails/provider"
)

// Kind is the provider kind this package's Factory is registered under.
const Kind = "evm"

// Secret names, as an instance's "secrets" object names them.
const (
	SecretHotWalletKey = "hotWalletKey" // hex secp256k1 key of the payout hot wallet
	SecretDepositXpub  = "depositXpub"  // BIP-32 xpub of the deposit tree (depth 3 or 4)
	SecretRPCURL       = "rpcUrl"       // optional: the node's URL when it embeds a credential
	SecretDepositXprv  = "depositXprv"  // the sweeper's only: the deposit tree's xprv
	SecretGasWalletKey = "gasWalletKey" // the sweeper's only: pays deposit addresses' gas
)

// Settings is an instance's "settings" object. Durations are Go duration
// strings ("12s"); wei amounts are decimal strings.
//
//	{"chain": "ethereum", "chainId": 1, "rpcUrl": "https://…",
//	 "tokens": {"USDC": {"address": "0xA0b8…", "decimals": 6}},
//	 "confirmations": 12, "blockTime": "12s", "stuckAfter": "3m",
//	 "gas": {"maxFeePerGasWei": "300000000000"},
//	 "deposits": {"startBlock": 21000000}}
type Settings struct {
	// Chain is the reference chain the instance serves ("ethereum",
	// "base", "polygon", "bsc"); it begins every deposit Identity.
	Chain   string `json:"chain"`
	ChainID uint64 `json:"chainId"`
	// RPCURL is the node (http or https). A URL with a credential in it
	// belongs in the rpcUrl secret instead, which wins.
	RPCURL string `json:"rpcUrl"`
	// Tokens by currency code.
	Tokens map[string]TokenSettings `json:"tokens"`
	// Confirmations a transfer needs before it is final: a payout
	// completes, a deposit may be credited.
	Confirmations int `json:"confirmations"`
	// BlockTime is the chain's usual block interval: it paces CheckAfter.
	BlockTime Duration `json:"blockTime"`
	// StuckAfter: a payout transaction at the head of the hot wallet's
	// queue and unmined this long gets a Replacement with higher fees.
	StuckAfter Duration `json:"stuckAfter"`
	// RPCTimeout bounds each call to the node.
	RPCTimeout Duration        `json:"rpcTimeout"`
	Gas        GasSettings     `json:"gas"`
	Deposits   DepositSettings `json:"deposits"`
	Nonces     NonceSettings   `json:"nonces"`
	Sweep      SweepSettings   `json:"sweep"`
}

// TokenSettings is one ERC-20 token.
type TokenSettings struct {
	Address  string `json:"address"`
	Decimals int    `json:"decimals"` // the contract's decimals()
	// Exponent is the currency's minor unit in the service (6 for USDC
	// and USDT, the default); deposits are reported in it.
	Exponent *int `json:"exponent"`
}

// GasSettings is the gas policy: fees come from the node, within these
// bounds; none is a hard-coded price.
type GasSettings struct {
	// MaxFeePerGasWei is a ceiling: a payout whose fee would exceed it is
	// not prepared (ErrUnavailable) and a stuck one is not bumped past it.
	MaxFeePerGasWei string `json:"maxFeePerGasWei"`
	// LimitMarginPercent is added to eth_estimateGas (default 20).
	LimitMarginPercent int `json:"limitMarginPercent"`
	// TipPercentile of recent blocks' priority fees (eth_feeHistory),
	// default 50.
	TipPercentile float64 `json:"tipPercentile"`
	// FeeHistoryBlocks is how many recent blocks the tip is drawn from
	// (default 10).
	FeeHistoryBlocks int `json:"feeHistoryBlocks"`
	// BumpPercent raises both fee fields of a replacement (default 15;
	// nodes require at least 10).
	BumpPercent int `json:"bumpPercent"`
}

// DepositSettings bound the log watcher.
type DepositSettings struct {
	// StartBlock is where a feed with no cursor begins; 0 means the
	// chain's head at the first poll.
	StartBlock uint64 `json:"startBlock"`
	// RangeBlocks is the widest eth_getLogs range (default 500);
	// RangesPerPoll how many ranges one poll scans (default 4).
	RangeBlocks   uint64 `json:"rangeBlocks"`
	RangesPerPoll int    `json:"rangesPerPoll"`
	// Lookahead: the feed watches the addresses of indexes up to the
	// highest it knows issued plus this many (default 100), so an address
	// issued on another node or just before a restart, not yet in the
	// cursor, is watched all the same.
	Lookahead uint32 `json:"lookahead"`
	// AddressesMax bounds the watched set (default 1,000,000).
	AddressesMax uint32 `json:"addressesMax"`
	// TopicFilterMax: up to this many watched addresses the node filters
	// (-1: never)
	// logs by recipient; beyond it the watcher reads every Transfer of
	// the tokens in the range and filters itself (default 1000): size
	// rangeBlocks for the token's traffic then.
	TopicFilterMax int `json:"topicFilterMax"`
	// DepositsPerPollMax bounds one poll's answer (default 1000).
	DepositsPerPollMax int `json:"depositsPerPollMax"`
	// ReorgDepthMax is how many recent block hashes the cursor keeps
	// beyond the confirmations (default 16): a reorganisation deeper than
	// confirmations + this stops the feed with an error.
	ReorgDepthMax int `json:"reorgDepthMax"`
}

// NonceSettings tune the hot wallet's nonce source.
type NonceSettings struct {
	// HoldTimeout releases a nonce handed out by PreparePayout and never
	// seen again (not submitted, asked about or restored) for this long
	// (default 2m): its transaction was not committed, and the next
	// PreparePayout fills the gap it left.
	HoldTimeout Duration `json:"holdTimeout"`
}

// SweepSettings are the sweeper's.
type SweepSettings struct {
	// To is where swept tokens go: the hot wallet's address. The sweeper
	// needs no key of it.
	To string `json:"to"`
	// MinMinor per currency: a smaller balance is left where it is.
	MinMinor map[string]int64 `json:"minMinor"`
}

// Duration is a time.Duration written as a Go duration string in JSON.
type Duration time.Duration

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errors.New("a duration is a string such as \"12s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("bad duration %q", s)
	}
	*d = Duration(v)
	return nil
}

// config is the validated form of Settings and secrets.
type config struct {
	chain          string
	chainID        *big.Int
	rpcURL         string
	tokens         map[string]*token // by currency
	tokenByAddress map[common.Address]*token
	confirmations  int
	blockTime      time.Duration
	stuckAfter     time.Duration
	rpcTimeout     time.Duration
	maxFeePerGas   *big.Int // nil: no ceiling
	limitMargin    int
	tipPercentile  float64
	historyBlocks  int
	bumpPercent    int
	deposits       DepositSettings
	holdTimeout    time.Duration
	sweepMin       map[string]int64
	sweepTo        string
}

type token struct {
	currency string
	address  common.Address
	decimals int
	exponent int
}

var chainName = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

func parseSettings(raw json.RawMessage, secrets provider.Secrets) (*config, error) {
	var s Settings
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("evm: settings are required")
	}
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("evm: settings: %w", err)
	}
	c := &config{
		chain:          s.Chain,
		confirmations:  s.Confirmations,
		blockTime:      time.Duration(s.BlockTime),
		stuckAfter:     time.Duration(s.StuckAfter),
		rpcTimeout:     time.Duration(s.RPCTimeout),
		limitMargin:    s.Gas.LimitMarginPercent,
		tipPercentile:  s.Gas.TipPercentile,
		historyBlocks:  s.Gas.FeeHistoryBlocks,
		bumpPercent:    s.Gas.BumpPercent,
		deposits:       s.Deposits,
		holdTimeout:    time.Duration(s.Nonces.HoldTimeout),
		sweepMin:       s.Sweep.MinMinor,
		sweepTo:        s.Sweep.To,
		tokens:         map[string]*token{},
		tokenByAddress: map[common.Address]*token{},
	}
	if !chainName.MatchString(c.chain) {
		return nil, errors.New("evm: settings: chain is the reference chain's lower-case name, such as \"ethereum\"")
	}
	if s.ChainID == 0 {
		return nil, errors.New("evm: settings: chainId is required")
	}
	c.chainID = new(big.Int).SetUint64(s.ChainID)
	c.rpcURL = s.RPCURL
	if v, ok := secrets[SecretRPCURL]; ok && !v.IsZero() {
		c.rpcURL = v.Reveal()
	}
	u, err := url.Parse(c.rpcURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL may carry a credential: never print it.
		return nil, errors.New("evm: settings: rpcUrl (or the rpcUrl secret) must be an http or https URL")
	}
	if len(s.Tokens) == 0 {
		return nil, errors.New("evm: settings: at least one token is required")
	}
	for cur, ts := range s.Tokens {
		if cur == "" || strings.ToUpper(cur) != cur {
			return nil, fmt.Errorf("evm: settings: token %q: currency codes are upper case", cur)
		}
		addr, err := parseAddress(ts.Address)
		if err != nil {
			return nil, fmt.Errorf("evm: settings: token %s: %w", cur, err)
		}
		if ts.Decimals < 0 || ts.Decimals > 36 {
			return nil, fmt.Errorf("evm: settings: token %s: decimals must be 0 to 36", cur)
		}
		t := &token{currency: cur, address: addr, decimals: ts.Decimals, exponent: 6}
		if ts.Exponent != nil {
			t.exponent = *ts.Exponent
		}
		if t.exponent < 0 || t.exponent > 18 {
			return nil, fmt.Errorf("evm: settings: token %s: exponent must be 0 to 18", cur)
		}
		if _, dup := c.tokenByAddress[addr]; dup {
			return nil, fmt.Errorf("evm: settings: token %s: the address serves two currencies", cur)
		}
		c.tokens[cur] = t
		c.tokenByAddress[addr] = t
	}
	if c.confirmations < 1 || c.confirmations > 10000 {
		return nil, errors.New("evm: settings: confirmations must be 1 to 10000")
	}
	c.blockTime = cmp.Or(c.blockTime, 12*time.Second)
	c.stuckAfter = cmp.Or(c.stuckAfter, 3*time.Minute)
	c.rpcTimeout = cmp.Or(c.rpcTimeout, 10*time.Second)
	c.holdTimeout = cmp.Or(c.holdTimeout, 2*time.Minute)
	if s.Gas.MaxFeePerGasWei != "" {
		v, ok := new(big.Int).SetString(s.Gas.MaxFeePerGasWei, 10)
		if !ok || v.Sign() <= 0 {
			return nil, errors.New("evm: settings: gas.maxFeePerGasWei is a positive decimal integer string")
		}
		c.maxFeePerGas = v
	}
	c.limitMargin = cmp.Or(c.limitMargin, 20)
	c.tipPercentile = cmp.Or(c.tipPercentile, 50)
	c.historyBlocks = cmp.Or(c.historyBlocks, 10)
	c.bumpPercent = cmp.Or(c.bumpPercent, 15)
	switch {
	case c.limitMargin < 0 || c.limitMargin > 200:
		return nil, errors.New("evm: settings: gas.limitMarginPercent must be 0 to 200")
	case c.tipPercentile < 0 || c.tipPercentile > 100:
		return nil, errors.New("evm: settings: gas.tipPercentile must be 0 to 100")
	case c.historyBlocks < 1 || c.historyBlocks > 1024:
		return nil, errors.New("evm: settings: gas.feeHistoryBlocks must be 1 to 1024")
	case c.bumpPercent < 10 || c.bumpPercent > 500:
		return nil, errors.New("evm: settings: gas.bumpPercent must be 10 to 500")
	}
	d := &c.deposits
	d.RangeBlocks = cmp.Or(d.RangeBlocks, 500)
	d.RangesPerPoll = cmp.Or(d.RangesPerPoll, 4)
	d.Lookahead = cmp.Or(d.Lookahead, 100)
	d.AddressesMax = cmp.Or(d.AddressesMax, 1_000_000)
	d.TopicFilterMax = cmp.Or(d.TopicFilterMax, 1000)
	d.DepositsPerPollMax = cmp.Or(d.DepositsPerPollMax, 1000)
	d.ReorgDepthMax = cmp.Or(d.ReorgDepthMax, 16)
	switch {
	case d.RangeBlocks > 100_000, d.RangesPerPoll < 1 || d.RangesPerPoll > 100:
		return nil, errors.New("evm: settings: deposits.rangeBlocks must be at most 100000 and rangesPerPoll 1 to 100")
	case d.TopicFilterMax < -1 || d.TopicFilterMax > 10_000:
		return nil, errors.New("evm: settings: deposits.topicFilterMax must be -1 to 10000")
	case d.Lookahead > d.AddressesMax:
		return nil, errors.New("evm: settings: deposits.lookahead must not exceed addressesMax")
	case d.DepositsPerPollMax < 1 || d.DepositsPerPollMax > 100_000:
		return nil, errors.New("evm: settings: deposits.depositsPerPollMax must be 1 to 100000")
	case d.ReorgDepthMax < 1 || c.confirmations+d.ReorgDepthMax > cursorHashesMax:
		return nil, fmt.Errorf("evm: settings: confirmations + deposits.reorgDepthMax must be at most %d", cursorHashesMax)
	}
	for cur, v := range c.sweepMin {
		if _, ok := c.tokens[cur]; !ok || v < 0 {
			return nil, fmt.Errorf("evm: settings: sweep.minMinor: %q is not a configured token or is negative", cur)
		}
	}
	return c, nil
}

// parseAddress reads a 0x-prefixed hex address; a mixed-case one must
// carry a valid EIP-55 checksum.
func parseAddress(s string) (common.Address, error) {
	if !common.IsHexAddress(s) || !strings.HasPrefix(s, "0x") {
		return common.Address{}, errors.New("not a 0x-prefixed 20-byte hex address")
	}
	a := common.HexToAddress(s)
	body := s[2:]
	if strings.ToLower(body) != body && strings.ToUpper(body) != body && a.Hex() != s {
		return common.Address{}, errors.New("the address's mixed-case checksum (EIP-55) is wrong")
	}
	if a == (common.Address{}) {
		return common.Address{}, errors.New("the zero address")
	}
	return a, nil
}

func parsePrivateKey(s provider.Secret) (*ecdsa.PrivateKey, error) {
	h := strings.TrimPrefix(strings.TrimSpace(s.Reveal()), "0x")
	key, err := crypto.HexToECDSA(h)
	if err != nil {
		// Never the key or the library's words about it.
		return nil, errors.New("not a 32-byte hex secp256k1 private key")
	}
	return key, nil
}

// directions reads which ways the instance's methods go.
func directions(cfg provider.InstanceConfig) (payouts, deposits bool) {
	for _, m := range cfg.Methods {
		payouts = payouts || slices.Contains(m.Directions, "payouts")
		deposits = deposits || slices.Contains(m.Directions, "deposits")
	}
	return payouts, deposits
}
