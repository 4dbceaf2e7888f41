package money

import (
	stdjson "encoding/json"
	"io"
	"reflect"
	"testing"

	"payments/http/core"
)

// The API's codec must never accept a body that encoding/json would read
// differently: whatever decodeBody accepts, encoding/json (with unknown
// fields disallowed) accepts too, into the same values.
func FuzzDecodePayoutBody(f *testing.F) {
	for _, s := range []string{
		`{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":150},"externalReference":"x"}`,
		`{"to":{"amount":"1.50"},"from":{"amount":1e2,"kyc":{"a":[1,{"b":null}]}},"metadata":{"k":"v"}}`,
		`{"narration":"\u00e9\ud83d\ude00","to":null}`,
		`{"To":{"code":"x"}}`,
		`{"to":{"code":"a","code":"b"}}`,
		`{"metadata":{"a":1,"a":2}}`,
		"{\"narration\":\"\xff\"}",
		`[]`, `null`, `{"to":{"amount":-0}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var ours payoutRequestBody
		if core.DecodeBody(body, &ours) != nil {
			return
		}
		var std stdPayoutBody
		dec := stdjson.NewDecoder(bytesReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&std); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", body, err)
		}
		if got, want := summarize(&ours), summarizeStd(&std); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q decoded as %+v, encoding/json reads %+v", body, got, want)
		}
	})
}

// stdPayoutBody mirrors payoutRequestBody with standard types.
type stdPayoutBody struct {
	From *struct {
		Amount   stdjson.RawMessage `json:"amount"`
		Currency *string            `json:"currency"`
		KYC      stdjson.RawMessage `json:"kyc"`
	} `json:"from"`
	To *struct {
		Code          *string            `json:"code"`
		Currency      *string            `json:"currency"`
		AccountNumber *string            `json:"accountNumber"`
		Address       *string            `json:"address"`
		Tag           *string            `json:"tag"`
		Amount        stdjson.RawMessage `json:"amount"`
		KYC           stdjson.RawMessage `json:"kyc"`
	} `json:"to"`
	Narration         *string            `json:"narration"`
	ExternalReference *string            `json:"externalReference"`
	Metadata          stdjson.RawMessage `json:"metadata"`
}

// summary is what the service reads of a body: strings, amount literals,
// and objects as parsed values.
type summary struct {
	Strings map[string]string
	Amounts map[string]string
	Objects map[string]any
}

func deref(s *string) (string, bool) {
	if s == nil {
		return "", false
	}
	return *s, true
}

func summarize(b *payoutRequestBody) summary {
	s := summary{Strings: map[string]string{}, Amounts: map[string]string{}, Objects: map[string]any{}}
	put := func(k string, v *string) {
		if x, ok := deref(v); ok {
			s.Strings[k] = x
		}
	}
	put("narration", b.Narration)
	put("externalReference", b.ExternalReference)
	obj := func(k string, o core.JSONObject) {
		if o.Set {
			var v any
			stdjson.Unmarshal([]byte(o.Raw), &v)
			s.Objects[k] = v
		}
	}
	obj("metadata", b.Metadata)
	if b.To != nil {
		put("to.code", b.To.Code)
		put("to.currency", b.To.Currency)
		put("to.accountNumber", b.To.AccountNumber)
		put("to.address", b.To.Address)
		put("to.tag", b.To.Tag)
		if b.To.Amount.Set {
			s.Amounts["to.amount"] = b.To.Amount.Text
		}
		obj("to.kyc", b.To.KYC)
	}
	if b.From != nil {
		put("from.currency", b.From.Currency)
		if b.From.Amount.Set {
			s.Amounts["from.amount"] = b.From.Amount.Text
		}
		obj("from.kyc", b.From.KYC)
	}
	return s
}

func summarizeStd(b *stdPayoutBody) summary {
	s := summary{Strings: map[string]string{}, Amounts: map[string]string{}, Objects: map[string]any{}}
	put := func(k string, v *string) {
		if x, ok := deref(v); ok {
			s.Strings[k] = x
		}
	}
	amount := func(k string, raw stdjson.RawMessage) {
		if len(raw) == 0 || string(raw) == "null" {
			return
		}
		var str string
		if stdjson.Unmarshal(raw, &str) == nil {
			s.Amounts[k] = str
			return
		}
		s.Amounts[k] = string(raw)
	}
	obj := func(k string, raw stdjson.RawMessage) {
		if len(raw) == 0 || string(raw) == "null" {
			return
		}
		var v any
		stdjson.Unmarshal(raw, &v)
		s.Objects[k] = v
	}
	put("narration", b.Narration)
	put("externalReference", b.ExternalReference)
	obj("metadata", b.Metadata)
	if b.To != nil {
		put("to.code", b.To.Code)
		put("to.currency", b.To.Currency)
		put("to.accountNumber", b.To.AccountNumber)
		put("to.address", b.To.Address)
		put("to.tag", b.To.Tag)
		amount("to.amount", b.To.Amount)
		obj("to.kyc", b.To.KYC)
	}
	if b.From != nil {
		put("from.currency", b.From.Currency)
		amount("from.amount", b.From.Amount)
		obj("from.kyc", b.From.KYC)
	}
	return s
}

func bytesReader(b []byte) *byteReader { return &byteReader{b: b} }

type byteReader struct{ b []byte }

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
