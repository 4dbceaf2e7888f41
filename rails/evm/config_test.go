package evm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"payments/rails/provider"
)

const (
	testKey  = "59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d" // anvil's account 1
	testXpub = "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5"
)

func testSettings(extra string) json.RawMessage {
	return json.RawMessage(`{"chain":"base","chainId":8453,"rpcUrl":"http://127.0.0.1:1",
		"tokens":{"USDC":{"address":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","decimals":6}},
		"confirmations":10` + extra + `}`)
}

// The providers file builds an evm instance through the registry, with its
// secrets from the environment; what is wrong is refused at start, and no
// error names a secret.
func TestFactoryThroughRegistry(t *testing.T) {
	env := map[string]string{"HOT": "0x" + testKey, "XPUB": testXpub, "BADKEY": "zz" + testKey[2:]}
	getenv := func(k string) string { return env[k] }
	build := func(settings, secrets, dirs string) (*provider.Registry, error) {
		cfg, err := provider.ParseConfig([]byte(`{"providers":[{"name":"evm_base","kind":"evm",
			"methods":[{"code":"usdc_base","directions":` + dirs + `}],
			"settings":` + settings + `,"secrets":` + secrets + `}]}`))
		if err != nil {
			return nil, err
		}
		return provider.Build(cfg, map[string]provider.Factory{Kind: Factory}, getenv)
	}
	both := `{"hotWalletKey":{"env":"HOT"},"depositXpub":{"env":"XPUB"}}`
	r, err := build(string(testSettings("")), both, `["payouts","deposits"]`)
	if err != nil {
		t.Fatal(err)
	}
	if _, in, ok := r.Payouter("usdc_base"); !ok || in.Kind != "evm" {
		t.Fatal("usdc_base payouts are not served")
	}
	if _, _, ok := r.Provisioner("usdc_base"); !ok {
		t.Fatal("usdc_base deposits are not served")
	}
	a := r.Instances()[0].Adapter.(*Adapter)
	if a.HotWallet().Hex() != "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" || a.methods["USDC"] != "usdc_base" {
		t.Fatalf("hot wallet %s, methods %v", a.HotWallet().Hex(), a.methods)
	}
	cases := []struct {
		name, settings, secrets, dirs, want string
	}{
		{"collections", string(testSettings("")), both, `["collections"]`, "no collections"},
		{"no hot key", string(testSettings("")), `{"depositXpub":{"env":"XPUB"}}`, `["payouts"]`, `"hotWalletKey" is not configured`},
		{"bad hot key", string(testSettings("")), `{"hotWalletKey":{"env":"BADKEY"}}`, `["payouts"]`, "not a 32-byte hex"},
		{"xprv in the service", string(testSettings("")), `{"hotWalletKey":{"env":"HOT"},"depositXprv":{"env":"XPUB"}}`, `["payouts"]`, "sweeper's"},
		{"unknown setting", string(testSettings(`,"confirmation":3`)), both, `["payouts"]`, "unknown field"},
		{"no confirmations", `{"chain":"base","chainId":8453,"rpcUrl":"http://127.0.0.1:1","tokens":{"USDC":{"address":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","decimals":6}}}`, both, `["payouts"]`, "confirmations"},
		{"bad token address", strings.Replace(string(testSettings("")), "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", "0x833589FCD6eDb6E08f4c7C32D4f71b54bdA02913", 1), both, `["payouts"]`, "checksum"},
		{"bad URL", strings.Replace(string(testSettings("")), "http://127.0.0.1:1", "ftp://key@host", 1), both, `["payouts"]`, "http or https"},
		{"upper-case chain", strings.Replace(string(testSettings("")), `"base"`, `"Base"`, 1), both, `["payouts"]`, "lower-case"},
		{"bad duration", string(testSettings(`,"stuckAfter":"soon"`)), both, `["payouts"]`, "duration"},
		{"bump under the nodes' rule", string(testSettings(`,"gas":{"bumpPercent":5}`)), both, `["payouts"]`, "bumpPercent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := build(c.settings, c.secrets, c.dirs)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
			for _, s := range []string{testKey, testXpub, "ftp://key@host"} {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("the error shows a secret: %v", err)
				}
			}
		})
	}
}

// Amounts convert exactly or not at all on the way out, and round down on
// the way in.
func TestAmountConversion(t *testing.T) {
	out := []struct {
		minor         int64
		exp, decimals int
		want          string // "" for a refusal
	}{
		{12_345_678, 6, 6, "12345678"},
		{1, 6, 18, "1000000000000"},
		{100, 2, 6, "1000000"},
		{123, 8, 6, ""},
		{100, 8, 6, "1"},
		{0, 6, 6, ""},
		{-5, 6, 6, ""},
		{1<<63 - 1, 0, 36, "9223372036854775807000000000000000000000000000000000000"},
	}
	for _, c := range out {
		got, err := toTokenUnits(c.minor, c.exp, c.decimals)
		if c.want == "" {
			if err == nil {
				t.Errorf("%d at exponent %d to %d decimals: %s, want a refusal", c.minor, c.exp, c.decimals, got)
			}
			continue
		}
		if err != nil || got.String() != c.want {
			t.Errorf("%d at exponent %d to %d decimals: %v, %v; want %s", c.minor, c.exp, c.decimals, got, err, c.want)
		}
	}
	in := []struct {
		units         string
		decimals, exp int
		minor         int64
		exact, err    bool
	}{
		{"25500000", 6, 6, 25_500_000, true, false},
		{"1000000000000000001", 18, 6, 1_000_000, false, false},
		{"5", 0, 2, 500, true, false},
		{"100000000000000000000000000000000", 6, 6, 0, false, true},
	}
	for _, c := range in {
		u, _ := new(big.Int).SetString(c.units, 10)
		minor, exact, err := toMinor(u, c.decimals, c.exp)
		if (err != nil) != c.err || (!c.err && (minor != c.minor || exact != c.exact)) {
			t.Errorf("%s units, %d decimals, exponent %d: %d %v %v", c.units, c.decimals, c.exp, minor, exact, err)
		}
	}
}

// A Prepared round-trips, and one that is not this hot wallet's, or whose
// key does not name its newest transaction, is refused.
func TestPreparedEncoding(t *testing.T) {
	a, err := Factory(provider.InstanceConfig{Settings: testSettings(""), Methods: []provider.MethodConfig{{Code: "usdc_base", Directions: []string{"payouts"}}}},
		provider.Secrets{SecretHotWalletKey: provider.NewSecret(testKey)})
	if err != nil {
		t.Fatal(err)
	}
	ad := a.(*Adapter)
	f := fees{tip: big.NewInt(1), feeCap: big.NewInt(10)}
	tok := ad.cfg.tokens["USDC"].address
	tx1, _ := ad.sign(7, tok, transferData(tok, big.NewInt(5)), 60000, f)
	tx2, _ := ad.sign(7, tok, transferData(tok, big.NewInt(5)), 60000, fees{tip: big.NewInt(2), feeCap: big.NewInt(20)})
	for _, chain := range [][]*types.Transaction{{tx1}, {tx2, tx1}} {
		p, err := encodePrepared(chain)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ad.decodePrepared(p)
		if err != nil || len(got) != len(chain) || got[0].Hash() != chain[0].Hash() {
			t.Fatalf("round trip of %d: %v", len(chain), err)
		}
		if len(chain) == 2 && p.Payload[0] != chainMarker {
			t.Fatal("a replacement's payload lacks the marker")
		}
	}
	other, _ := crypto.GenerateKey()
	foreign, _ := types.SignNewTx(other, ad.signer, &types.DynamicFeeTx{ChainID: ad.cfg.chainID, Nonce: 7, Gas: 1, GasTipCap: big.NewInt(1), GasFeeCap: big.NewInt(1), To: &tok})
	otherNonce, _ := ad.sign(8, tok, nil, 60000, f)
	good, _ := encodePrepared([]*types.Transaction{tx1})
	for name, p := range map[string]provider.Prepared{
		"foreign signer": must(encodePrepared([]*types.Transaction{foreign})),
		"mixed nonces":   must(encodePrepared([]*types.Transaction{otherNonce, tx1})),
		"wrong key":      {Key: tx2.Hash().Hex(), Payload: good.Payload},
		"empty":          {},
		"garbage":        {Key: "x", Payload: []byte{chainMarker, 1, 2}},
	} {
		if _, err := ad.decodePrepared(p); err == nil || errors.Is(err, provider.ErrRejected) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func must(p provider.Prepared, err error) provider.Prepared {
	if err != nil {
		panic(err)
	}
	return p
}

func TestRevertReason(t *testing.T) {
	str := append(append(append([]byte{}, selErrorString...), make([]byte, 31)...), 0x20)
	str = append(str, make([]byte, 31)...)
	str = append(str, 20)
	str = append(str, []byte("insufficient balance")...)
	cases := map[string][]byte{
		"insufficient balance":       str,
		"insufficient token balance": crypto.Keccak256([]byte("ERC20InsufficientBalance(address,uint256,uint256)"))[:4],
		"custom error 0xdeadbeef":    {0xde, 0xad, 0xbe, 0xef},
		"":                           {1, 2},
	}
	for want, data := range cases {
		if got := revertReason(data); got != want {
			t.Errorf("revertReason(%x) = %q, want %q", data, got, want)
		}
	}
}

// Cursor decoding never panics and keeps its bounds.
func FuzzDecodeCursor(f *testing.F) {
	f.Add([]byte(`{"v":1,"next":5,"base":3,"hashes":["0x01","0x02"],"issued":2,"open":[]}`))
	f.Add([]byte(`{"v":1}`))
	f.Add([]byte(fmt.Sprintf(`{"v":1,"next":%d,"base":0}`, uint64(1)<<63)))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCursor(b)
		if err != nil {
			return
		}
		if len(c.Hashes) > cursorHashesMax || len(c.Open) > openMax || (len(c.Hashes) > 0 && c.Base+uint64(len(c.Hashes)) != c.Next) {
			t.Fatalf("cursor out of bounds accepted: %+v", c)
		}
	})
}
