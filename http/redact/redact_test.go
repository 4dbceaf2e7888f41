package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// One row per redaction rule (redact.go): the body sent, the body the log
// keeps.
func TestRedactBody(t *testing.T) {
	for _, tc := range []struct{ rule, in, want string }{
		// Rule 1, by name.
		{"account number", `{"to":{"accountNumber":"233241234567","code":"gh_mtn"}}`, `{"to":{"accountNumber":"[redacted]","code":"gh_mtn"}}`},
		{"account number, any spelling", `{"account_number":"12","Account-Number":"34"}`, `{"account_number":"[redacted]","Account-Number":"[redacted]"}`},
		{"iban", `{"iban":"x"}`, `{"iban":"[redacted]"}`},
		{"card number sent as a number", `{"cardNumber":4111}`, `{"cardNumber":"[redacted]"}`},
		{"msisdn", `{"msisdn":"x"}`, `{"msisdn":"[redacted]"}`},
		{"phone", `{"customerPhone":"+233 24 123"}`, `{"customerPhone":"[redacted]"}`},
		{"mobile", `{"mobile":"x"}`, `{"mobile":"[redacted]"}`},
		{"crypto address", `{"to":{"address":"TXYZ","chain":"Tron"}}`, `{"to":{"address":"[redacted]","chain":"Tron"}}`},
		{"postal address, whole object", `{"billingAddress":{"line1":"1 Main St","country":"GH"}}`, `{"billingAddress":{"line1":"[redacted]","country":"[redacted]"}}`},
		{"postal address fields", `{"street":"x","city":"Accra","postalCode":"GA-1","zip":"1"}`, `{"street":"[redacted]","city":"[redacted]","postalCode":"[redacted]","zip":"[redacted]"}`},
		{"destination tag and memo", `{"tag":"123","memo":"m"}`, `{"tag":"[redacted]","memo":"[redacted]"}`},
		{"name", `{"name":"Ama Mensah"}`, `{"name":"[redacted]"}`},
		{"names ending in name", `{"accountName":"A","firstName":"B","beneficiaryName":"C"}`, `{"accountName":"[redacted]","firstName":"[redacted]","beneficiaryName":"[redacted]"}`},
		{"bank name is kept", `{"bankName":"GCB"}`, `{"bankName":"GCB"}`},
		{"account holder", `{"accountHolder":"A"}`, `{"accountHolder":"[redacted]"}`},
		{"email", `{"customerEmail":"a@b.co"}`, `{"customerEmail":"[redacted]"}`},
		{"kyc, every leaf", `{"kyc":{"level":2,"docs":["a","b"],"verified":true,"note":null}}`, `{"kyc":{"level":"[redacted]","docs":["[redacted]","[redacted]"],"verified":true,"note":null}}`},
		{"date of birth", `{"dateOfBirth":"1990-01-01","dob":"x"}`, `{"dateOfBirth":"[redacted]","dob":"[redacted]"}`},
		{"national id despite ending in id", `{"nationalId":"GHA-1"}`, `{"nationalId":"[redacted]"}`},
		{"documents", `{"idDocument":"x","passportNumber":"y","taxId":"z","bvn":"1"}`, `{"idDocument":"[redacted]","passportNumber":"[redacted]","taxId":"[redacted]","bvn":"[redacted]"}`},
		{"secret", `{"secret":"whsec_abc","signingSecret":"s"}`, `{"secret":"[redacted]","signingSecret":"[redacted]"}`},
		{"password, token, api key", `{"password":"p","accessToken":"t","apiKey":"k"}`, `{"password":"[redacted]","accessToken":"[redacted]","apiKey":"[redacted]"}`},
		{"signing material", `{"privateKey":"k","mnemonic":"m","seed":"s","signature":"v1,x"}`, `{"privateKey":"[redacted]","mnemonic":"[redacted]","seed":"[redacted]","signature":"[redacted]"}`},
		{"key, pin, otp, cvv", `{"key":"k","pin":"1","otp":"2","cvv":"3"}`, `{"key":"[redacted]","pin":"[redacted]","otp":"[redacted]","cvv":"[redacted]"}`},
		{"free text", `{"narration":"refund for Ama Mensah","description":"d","reason":"r"}`, `{"narration":"[redacted]","description":"[redacted]","reason":"[redacted]"}`},
		{"array of names under a masked name", `{"emails":["a@b.co","c@d.co"]}`, `{"emails":["[redacted]","[redacted]"]}`},

		// Rule 2, by shape, whatever the name.
		{"email in free text", `{"metadata":{"x":"refund to ama@example.com please"}}`, `{"metadata":{"x":"[redacted]"}}`},
		{"digit run in metadata", `{"metadata":{"ref":"call 024 123 4567"}}`, `{"metadata":{"ref":"[redacted]"}}`},
		{"a short digit run is kept", `{"metadata":{"x":"invoice 104211"}}`, `{"metadata":{"x":"invoice 104211"}}`},
		{"iban in metadata", `{"metadata":{"x":"GB82 WEST 1234 5698 7654 32"}}`, `{"metadata":{"x":"[redacted]"}}`},
		{"iban without a long digit run", `{"x":"DE89ABCDEFGHIJKLMNOP"}`, `{"x":"[redacted]"}`},
		{"crypto address in metadata", `{"metadata":{"w":"TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7"}}`, `{"metadata":{"w":"[redacted]"}}`},
		{"EVM address", `{"x":"0x52908400098527886E0F7030069857D2E4169EE7"}`, `{"x":"[redacted]"}`},
		{"API key in free text", `{"x":"use sk_test_abcdefghijklmnop0123456789"}`, `{"x":"[redacted]"}`},
		{"long number", `{"metadata":{"n":233241234567}}`, `{"metadata":{"n":"[redacted]"}}`},
		{"short number kept", `{"metadata":{"n":42}}`, `{"metadata":{"n":42}}`},
		{"url: query and user information", `{"url":"https://user:pw@hooks.example.com/in?token=abc#f"}`, `{"url":"https://[redacted]@hooks.example.com/in?[redacted]"}`},
		{"url: a path segment with a token", `{"url":"https://hooks.example.com/T0123/abcdefghijklmnopqrstuvwxyz0123"}`, `{"url":"https://hooks.example.com/T0123/[redacted]"}`},
		{"url kept otherwise", `{"url":"https://hooks.example.com/payments"}`, `{"url":"https://hooks.example.com/payments"}`},

		// Rule 3, exempt from shapes.
		{"amounts", `{"amount":"12345678.00","to":{"amount":12345678},"fee":"1000000"}`, `{"amount":"12345678.00","to":{"amount":12345678},"fee":"1000000"}`},
		{"ids and references", `{"payoutId":"2332412345678","externalReference":"inv-2026110001"}`, `{"payoutId":"2332412345678","externalReference":"inv-2026110001"}`},
		{"timestamps by shape", `{"metadata":{"due":"2026-11-30T12:00:00.000Z"}}`, `{"metadata":{"due":"2026-11-30T12:00:00.000Z"}}`},
		{"times", `{"expiresAt":"2026-11-30T12:00:00Z"}`, `{"expiresAt":"2026-11-30T12:00:00Z"}`},
		{"codes and currencies", `{"code":"gh_mtn","currency":"GHS","country":"GH"}`, `{"code":"gh_mtn","currency":"GHS","country":"GH"}`},

		// The rest is kept as sent.
		{"shape kept", `{"a":[1,true,null,{"b":[]}],"c":{}}`, `{"a":[1,true,null,{"b":[]}],"c":{}}`},
		{"duplicate names", `{"name":"a","name":"b"}`, `{"name":"[redacted]","name":"[redacted]"}`},
		{"a top-level string", `"ama@example.com"`, `"[redacted]"`},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			got, ok := New().Body([]byte(tc.in))
			if !ok {
				t.Fatalf("refused %s", tc.in)
			}
			if string(got) != tc.want {
				t.Errorf("\n in  %s\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

// Bodies that are not one JSON value are not kept at all.
func TestRedactRefusesNonJSON(t *testing.T) {
	r := New()
	for _, in := range []string{``, `{`, `{"a":1}{"b":2}`, `name=ama`, "{\"a\":\"\xff\"}", `[1,]`} {
		if out, ok := r.Body([]byte(in)); ok {
			t.Errorf("%q kept as %q", in, out)
		}
	}
	// The redactor is reusable after a refusal.
	if out, ok := r.Body([]byte(`{"email":"a@b.co"}`)); !ok || string(out) != `{"email":"[redacted]"}` {
		t.Fatalf("after refusals: %q %v", out, ok)
	}
}

func TestRedactQueryAndPath(t *testing.T) {
	redactors := map[string]func(string) string{"Query": Query, "Path": Path}
	for _, tc := range []struct {
		rule, in, want string
		fn             string // the redactor, a key of redactors
	}{
		{"query by name", "email=ama%40example.com&limit=10", "email=[redacted]&limit=10", "Query"},
		{"query by shape", "q=0241234567&status=completed", "q=[redacted]&status=completed", "Query"},
		{"query exempt", "externalReference=2332412345678&from=2026-11-01T00%3A00%3A00Z", "externalReference=2332412345678&from=2026-11-01T00%3A00%3A00Z", "Query"},
		{"query flag without a value", "expand", "expand", "Query"},
		{"our ids are kept", "/v1/payouts/pay_bank_0k3m2a1234567abcdefgh", "/v1/payouts/pay_bank_0k3m2a1234567abcdefgh", "Path"},
		{"a reference shaped as a phone number", "/v1/payouts/by-reference/0241234567", "/v1/payouts/by-reference/[redacted]", "Path"},
		{"an escaped email", "/v1/x/ama%40example.com", "/v1/x/[redacted]", "Path"},
		{"plain", "/v1/requests", "/v1/requests", "Path"},
	} {
		if got := redactors[tc.fn](tc.in); got != tc.want {
			t.Errorf("%s: %s(%q) = %q, want %q", tc.rule, tc.fn, tc.in, got, tc.want)
		}
	}
}

// FuzzRedactBody holds the redactor to its promises on any input: either it
// refuses the body, or its output is JSON of the same shape (the same
// member names and array lengths, booleans and nulls), in which every
// string or number is the original or the mask, every leaf under a masked
// name is the mask, and no kept string has a sensitive shape unless its
// name exempts it. Redacting twice changes nothing more.
func FuzzRedactBody(f *testing.F) {
	for _, s := range []string{
		`{"to":{"accountNumber":"233241234567","amount":"150.00"},"externalReference":"x"}`,
		`{"kyc":{"a":[1,{"b":null}]},"metadata":{"k":"ama@example.com"}}`,
		`{"url":"https://u:p@h.example/a/b?c=d"}`, `[]`, `"x"`, `12345678`, `{"name":"a","name":"b"}`,
		`{"narration":"\u00e9\ud83d\ude00 024 123 4567"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := New()
		out, ok := r.Body(in)
		if !ok {
			return
		}
		out = bytes.Clone(out)
		if !json.Valid(out) {
			t.Fatalf("output is not JSON: %q → %q", in, out)
		}
		checkRedacted(t, in, out)
		again, ok := r.Body(out)
		if !ok || !bytes.Equal(again, out) {
			t.Fatalf("redacting twice: %q → %q → %q (%v)", in, out, again, ok)
		}
	})
}

// checkRedacted walks the input and output token by token.
func checkRedacted(t *testing.T, in, out []byte) {
	din, dout := json.NewDecoder(bytes.NewReader(in)), json.NewDecoder(bytes.NewReader(out))
	din.UseNumber()
	dout.UseNumber()
	type frame struct {
		object, expectName bool
		name               string
		masked             bool
	}
	var stack []frame
	for {
		a, errA := din.Token()
		b, errB := dout.Token()
		if errors.Is(errA, io.EOF) && errors.Is(errB, io.EOF) {
			return
		}
		if errA != nil || errB != nil {
			t.Fatalf("%q → %q: %v / %v", in, out, errA, errB)
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.object && top.expectName {
			if _, isDelim := a.(json.Delim); !isDelim {
				if a != b {
					t.Fatalf("member name %v became %v", a, b)
				}
				top.name, top.expectName = a.(string), false
				continue
			}
		}
		name, masked := "", false
		if top != nil {
			name, masked = top.name, top.masked
			if top.object {
				top.expectName = true
			}
		}
		masked = masked || name != "" && maskedName(name)
		switch av := a.(type) {
		case json.Delim:
			if a != b {
				t.Fatalf("%q → %q: delimiter %v became %v", in, out, a, b)
			}
			switch av {
			case '{', '[':
				stack = append(stack, frame{object: av == '{', expectName: av == '{', name: name, masked: masked})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].expectName = true
				}
			}
		case string, json.Number:
			if masked && b != Mask {
				t.Fatalf("%q → %q: %v under masked name %q kept as %v", in, out, a, name, b)
			}
			if b != a && b != Mask && !strings.HasPrefix(strings.ToLower(toString(a)), "http") {
				t.Fatalf("%q → %q: %v became %v", in, out, a, b)
			}
			if s, isString := b.(string); isString && s != Mask && !(name != "" && exemptName(name)) &&
				!strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") && sensitiveShape(s) {
				t.Fatalf("%q → %q: kept %q of a sensitive shape", in, out, s)
			}
		default:
			if a != b {
				t.Fatalf("%q → %q: %v became %v", in, out, a, b)
			}
		}
	}
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return string(v)
	}
	return ""
}

// FuzzRedactFastAgrees holds the fast path to the token-by-token one: a
// body the fast path takes comes out exactly as the other makes it, and
// one it takes the other does not refuse.
func FuzzRedactFastAgrees(f *testing.F) {
	for _, s := range []string{
		`{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"150.00"},"externalReference":"inv-1042"}`,
		`{"kyc":{"a":[1,{"b":null}]},"metadata":{"k":"ama@example.com","n":233241234567,"m":-1.5e3}}`,
		`{"url":"https://u:p@h.example/a/b?c=d"}`, `[]`, `"x"`, `12345678`, `{"name":"a","name":"b"}`,
		` { "a" : [ 1 , 2 ] , "" : "0241234567" } `, `{"a":1,}`, `[1,]`, `{"a":01}`, `{"a":1.}`, `{"a":tru}`,
		`{"a":1}{"b":2}`, `{"a":"x"`, `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
		`{"description":"refund for Ama"}`, `{"x":"DE89ABCDEFGHIJKLMNOP"}`, `{"due":"2026-11-30T12:00:00.000Z"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := New()
		fast, ok := r.redactFast(in, nil)
		if !ok {
			return
		}
		slow, ok := New().bodyByTokens(in)
		if !ok || !bytes.Equal(fast, slow) {
			t.Fatalf("%q: fast path %q, token path %q (%v)", in, fast, slow, ok)
		}
	})
}

// Every row of the rules' table is a body the fast path takes (ASCII, no
// escapes), and the same bodies' results by tokens match (the table checks
// the results themselves).
func TestRedactFastTakesPlainBodies(t *testing.T) {
	r := New()
	for _, in := range []string{
		`{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"150.00"},"externalReference":"bench-1-u-42"}`,
		`{"metadata":{"x":"refund to ama@example.com please"},"amount":12345678,"tags":["a","b"],"ok":true,"n":null}`,
	} {
		fast, ok := r.redactFast([]byte(in), nil)
		if !ok {
			t.Fatalf("the fast path left %s", in)
		}
		slow, ok := New().bodyByTokens([]byte(in))
		if !ok || string(fast) != string(slow) {
			t.Fatalf("%s: fast %s, by tokens %s", in, fast, slow)
		}
	}
	// Escapes and bytes outside ASCII go by tokens.
	for _, in := range []string{`{"a":"\u00e9"}`, "{\"a\":\"\xc3\xa9\"}", `{"a\"b":1}`} {
		if _, ok := r.redactFast([]byte(in), nil); ok {
			t.Errorf("the fast path took %s", in)
		}
	}
}
