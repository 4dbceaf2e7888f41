package money

import (
	stdjson "encoding/json"
	"io"
	"reflect"
	"strings"
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
		std := reflect.New(stdMirror(reflect.TypeFor[payoutRequestBody]()))
		dec := stdjson.NewDecoder(bytesReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(std.Interface()); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", body, err)
		}
		if got, want := summarize(reflect.ValueOf(&ours)), summarize(std); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q decoded as %+v, encoding/json reads %+v", body, got, want)
		}
	})
}

// stdAmount and stdObject hold, as encoding/json reads them, the members
// that core.Amount and core.JSONObject decode.
type (
	stdAmount struct{ stdjson.RawMessage }
	stdObject struct{ stdjson.RawMessage }
)

// stdMirror is a request body type with standard types: the same members
// under the same names, core.Amount and core.JSONObject as raw JSON.
func stdMirror(t reflect.Type) reflect.Type {
	switch t {
	case reflect.TypeFor[core.Amount]():
		return reflect.TypeFor[stdAmount]()
	case reflect.TypeFor[core.JSONObject]():
		return reflect.TypeFor[stdObject]()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return reflect.PointerTo(stdMirror(t.Elem()))
	case reflect.Struct:
		fields := make([]reflect.StructField, t.NumField())
		for i := range fields {
			f := t.Field(i)
			fields[i] = reflect.StructField{Name: f.Name, Type: stdMirror(f.Type), Tag: f.Tag}
		}
		return reflect.StructOf(fields)
	}
	return t
}

// summary is what the service reads of a body: strings, amount literals,
// and objects as parsed values, by their JSON path.
type summary struct {
	Strings map[string]string
	Amounts map[string]string
	Objects map[string]any
}

// summarize reads body, a pointer to a request body or to its stdMirror.
func summarize(body reflect.Value) summary {
	s := summary{Strings: map[string]string{}, Amounts: map[string]string{}, Objects: map[string]any{}}
	s.read("", body.Elem())
	return s
}

func (s summary) read(prefix string, v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		path := prefix + name
		switch f := v.Field(i).Interface().(type) {
		case *string:
			if f != nil {
				s.Strings[path] = *f
			}
		case core.Amount:
			if f.Set {
				s.Amounts[path] = f.Text
			}
		case stdAmount:
			if raw := f.RawMessage; len(raw) > 0 && string(raw) != "null" {
				var str string
				if stdjson.Unmarshal(raw, &str) != nil {
					str = string(raw)
				}
				s.Amounts[path] = str
			}
		case core.JSONObject:
			if f.Set {
				s.object(path, []byte(f.Raw))
			}
		case stdObject:
			if raw := f.RawMessage; len(raw) > 0 && string(raw) != "null" {
				s.object(path, raw)
			}
		default: // a pointer to a nested object
			if p := v.Field(i); !p.IsNil() {
				s.read(path+".", p.Elem())
			}
		}
	}
}

func (s summary) object(path string, raw []byte) {
	var v any
	stdjson.Unmarshal(raw, &v)
	s.Objects[path] = v
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
