package ledger

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"

	"payments/ledger/kv"
)

var updateEncodings = flag.Bool("update-encodings", false, "rewrite testdata/encodings.golden")

// The encodings of commands and stored records are frozen (doc.go): an
// entry in a Raft log or a state store written by one build is read by
// every later one. TestEncodingsFrozen holds every command kind and every
// kind of record to the bytes in testdata/encodings.golden, for values
// filled deterministically, so a codec change that moves a byte fails here
// rather than in a node reading an older log. A new kind adds its lines
// with -update-encodings; a changed line is a format break.
func TestEncodingsFrozen(t *testing.T) {
	got := encodingSamples(t, encodingSamplesPerType)
	const path = "testdata/encodings.golden"
	if *updateEncodings {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-encodings to write it)", err)
	}
	gotLines, wantLines := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < min(len(gotLines), len(wantLines)); i++ {
		if !bytes.Equal(gotLines[i], wantLines[i]) {
			t.Fatalf("line %d of %s changed:\n got %s\nwant %s", i+1, path, gotLines[i], wantLines[i])
		}
	}
	if len(gotLines) != len(wantLines) {
		t.Fatalf("%s has %d lines, the codecs write %d", path, len(wantLines), len(gotLines))
	}
}

// encodingSamplesPerType is how many values of each command type and
// each kind of record the golden file holds.
const encodingSamplesPerType = 8

// encodingSamples encodes n filled values of every command type and every
// kind of record, one line each: what it is, then its bytes in hex. Each
// value is also decoded and encoded again, which must give the same bytes.
func encodingSamples(t *testing.T, n int) []byte {
	var out bytes.Buffer
	// One type can write several kinds (a payout that names its bank, an
	// execution under a reference): sample each type, under the kind its
	// value chooses.
	var types []reflect.Type
	seen := map[reflect.Type]bool{}
	for _, k := range registeredKinds() {
		if typ, ok := commandType(k); ok && !seen[typ] {
			seen[typ] = true
			types = append(types, typ)
		}
	}
	charged := reflect.TypeOf(Charges.Charged("", 0, nil)).Elem()
	for _, typ := range []reflect.Type{charged, reflect.TypeOf(Decided{})} { // wrappers: no zero encoding
		if !seen[typ] {
			seen[typ] = true
			types = append(types, typ)
		}
	}
	for ti, typ := range types {
		rng := rand.New(rand.NewPCG(uint64(ti), 1))
		for i := range n {
			c := reflect.New(typ)
			fillValue(c.Elem(), rng, i)
			cmd := c.Interface().(Command)
			b := EncodeBatch(nil, []Command{cmd})
			back, err := DecodeBatch(b)
			if err != nil {
				t.Fatalf("%s sample %d: decode: %v", typ.Name(), i, err)
			}
			if again := EncodeBatch(nil, back); !bytes.Equal(again, b) {
				t.Fatalf("%s sample %d: decoded and encoded again:\n%x\nwas\n%x", typ.Name(), i, again, b)
			}
			fmt.Fprintf(&out, "command %d %s %d %s\n", cmd.Kind(), typeName(typ), i, hex.EncodeToString(b))
		}
	}
	for _, k := range registeredKinds() {
		if !bytes.Contains(out.Bytes(), fmt.Appendf(nil, "command %d ", k)) {
			t.Errorf("no sample of command kind %d", k)
		}
	}
	subjectSamples(t, &out, n)
	recordSamples(t, &out, n, accountKind)
	recordSamples(t, &out, n, clockKind)
	recordSamples(t, &out, n, collectionKind)
	featureSamples(t, &out, n, TagQuote)
	featureSamples(t, &out, n, TagConversion)
	featureSamples(t, &out, n, TagCryptoAddress)
	recordSamples(t, &out, n, refusalKind)
	featureSamples(t, &out, n, TagDeposit)
	featureSamples(t, &out, n, TagProvider)
	featureSamples(t, &out, n, TagDispute)
	featureSamples(t, &out, n, TagFile)
	featureSamples(t, &out, n, TagFileSigningKey)
	recordSamples(t, &out, n, fundingKind)
	featureSamples(t, &out, n, TagInstruction)
	featureSamples(t, &out, n, TagMember)
	featureSamples(t, &out, n, TagInvitation)
	featureSamples(t, &out, n, TagDashboardSession)
	featureSamples(t, &out, n, TagOrder)
	featureSamples(t, &out, n, TagOrderDeposit)
	recordSamples(t, &out, n, organizationKind)
	recordSamples(t, &out, n, apiKeyKind)
	featureSamples(t, &out, n, TagPaymentLink)
	featureSamples(t, &out, n, TagPaymentPage)
	featureSamples(t, &out, n, TagCheckoutSession)
	featureSamples(t, &out, n, TagCheckoutDeposit)
	recordSamples(t, &out, n, payoutKind)
	featureSamples(t, &out, n, TagIDKey)
	featureSamples(t, &out, n, TagRecipient)
	featureSamples(t, &out, n, TagSpendCharge)
	featureSamples(t, &out, n, TagFloatFunding)
	featureSamples(t, &out, n, TagVirtualAccount)
	featureSamples(t, &out, n, TagWebhookEndpoint)
	featureSamples(t, &out, n, TagWebhookDelivery)
	for tag := range recordKinds {
		if !bytes.Contains(out.Bytes(), fmt.Appendf(nil, "record %c ", tag)) {
			t.Errorf("no sample of the records of tag %q", tag)
		}
	}
	return out.Bytes()
}

// typeName is a command's or a subject's type name, qualified by its package outside
// package ledger (a feature's: recipients.Create).
func typeName(typ reflect.Type) string {
	if typ.PkgPath() == reflect.TypeFor[Payout]().PkgPath() {
		return typ.Name()
	}
	return typ.String()
}

// sampledKind is a kind of record whatever its type, for the features'
// kinds (recordKinds).
type sampledKind interface {
	samples(t *testing.T, out *bytes.Buffer, n int)
}

func (k *kind[V]) samples(t *testing.T, out *bytes.Buffer, n int) { recordSamples(t, out, n, k) }

// featureSamples samples the records of a feature's kind, by its tag.
func featureSamples(t *testing.T, out *bytes.Buffer, n int, tag byte) {
	k, ok := recordKinds[tag].(sampledKind)
	if !ok {
		t.Fatalf("no feature registered tag %q: is its package linked (features_test.go)?", tag)
	}
	k.samples(t, out, n)
}

func recordSamples[V any](t *testing.T, out *bytes.Buffer, n int, k *kind[V]) {
	rng := rand.New(rand.NewPCG(uint64(k.tag), 2))
	for i := range n {
		var v V
		fillValue(reflect.ValueOf(&v).Elem(), rng, i)
		e := Encoder{}
		k.encodeStored(&e, uint64(i), &v)
		d := kv.NewDecoder(e.Bytes())
		back := k.decodeStored(&d)
		if d.Err() != nil {
			t.Fatalf("%s sample %d: decode: %v", k.name, i, d.Err())
		}
		again := Encoder{}
		k.encodeStored(&again, back.seq, &back.v)
		if !bytes.Equal(again.Bytes(), e.Bytes()) {
			t.Fatalf("%s sample %d: decoded and encoded again:\n%x\nwas\n%x", k.name, i, again.Bytes(), e.Bytes())
		}
		fmt.Fprintf(out, "record %c %s %d %s\n", k.tag, k.name, i, hex.EncodeToString(e.Bytes()))
	}
}

// subjectSamples encodes n events of every kind of subject (an event holds
// a copy of its resource).
func subjectSamples(t *testing.T, out *bytes.Buffer, n int) {
	var types []reflect.Type
	seen := map[reflect.Type]bool{}
	for _, k := range SubjectKinds() {
		d := kv.NewDecoder(make([]byte, 256))
		zero := subjectCodecs[k].decode(&d)
		if d.Err() != nil || zero == nil {
			continue // a kind a field's value selects (a payout that names its bank)
		}
		if typ := reflect.TypeOf(zero); !seen[typ] {
			seen[typ] = true
			types = append(types, typ)
		}
	}
	start := out.Len()
	for ti, typ := range types {
		rng := rand.New(rand.NewPCG(uint64(ti), 3))
		for i := range n {
			v := reflect.New(typ).Elem()
			fillValue(v, rng, i)
			ev := Event{Seq: uint64(i + 1), OrgID: "org", Type: "payout.created", ResourceID: "id", At: int64(i), Subject: v.Interface().(Subject)}
			e := Encoder{}
			encodeEvent(&e, &ev)
			d := kv.NewDecoder(e.Bytes())
			back := decodeEvent(&d)
			if d.Err() != nil {
				t.Fatalf("%s sample %d: decode: %v", typ.Name(), i, d.Err())
			}
			again := Encoder{}
			encodeEvent(&again, &back)
			if !bytes.Equal(again.Bytes(), e.Bytes()) {
				t.Fatalf("%s sample %d: decoded and encoded again:\n%x\nwas\n%x", typ.Name(), i, again.Bytes(), e.Bytes())
			}
			fmt.Fprintf(out, "subject %d %s %d %s\n", ev.Subject.SubjectKind(), typeName(typ), i, hex.EncodeToString(e.Bytes()))
		}
	}
	for _, k := range SubjectKinds() {
		if !bytes.Contains(out.Bytes()[start:], fmt.Appendf(nil, "subject %d ", k)) {
			t.Errorf("no sample of subject kind %d", k)
		}
	}
}

// commandType is the type of kind k's command, found by decoding an
// encoding of zeros; a kind that only a field's value selects (a variant of
// another kind's type) or that wraps another command has none.
func commandType(k Kind) (reflect.Type, bool) {
	buf := append([]byte{byte(k)}, make([]byte, 256)...)
	d := kv.NewDecoder(buf)
	c, err := decodeCommand(&d)
	if err != nil || c == nil {
		return nil, false
	}
	return reflect.TypeOf(c).Elem(), true
}

// fillValue fills v with values drawn from rng; sample 0 is left zero
// (but for a wrapped command, a payout with only its reference), so every encoding's shortest
// form is held too. Enumerations stay in their ranges (method types,
// one-byte enums below 4), a string is empty one time in three (fields
// appended only when set), slices and maps hold up to three elements,
// pointers are set every other sample.
func fillValue(v reflect.Value, rng *rand.Rand, sample int) {
	fill(v, rng, sample, 0)
}

var commandInterface = reflect.TypeOf((*Command)(nil)).Elem()

func fill(v reflect.Value, rng *rand.Rand, sample, depth int) {
	if !v.CanSet() || depth > 6 {
		return
	}
	if v.Type() == commandInterface {
		op := &CreatePayout{}
		if sample > 0 {
			fill(reflect.ValueOf(op).Elem(), rng, sample, depth+1)
		}
		op.ExternalReference = "ref" + op.ExternalReference // Decided wraps only creates under a reference
		v.Set(reflect.ValueOf(op))
		return
	}
	if sample == 0 && v.Kind() != reflect.Struct {
		return
	}
	if v.Type() == reflect.TypeOf(MethodType(0)) {
		v.SetUint(uint64(rng.IntN(int(MethodWallet) + 1)))
		return
	}
	switch v.Kind() {
	case reflect.String:
		const letters = "abcdefghijklmnopqrstuvwxyz0123456789_"
		n := rng.IntN(12)
		if rng.IntN(3) == 0 {
			n = 0
		}
		b := make([]byte, n)
		for i := range b {
			b[i] = letters[rng.IntN(len(letters))]
		}
		v.SetString(string(b))
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 1)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(rng.Int64N(1 << 40))
	case reflect.Uint8:
		v.SetUint(uint64(rng.IntN(4)))
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(rng.IntN(1 << 20)))
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fill(v.Field(i), rng, sample, depth+1)
		}
	case reflect.Pointer:
		if sample%2 == 1 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), rng, sample, depth+1)
		}
	case reflect.Slice:
		n := rng.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			fill(s.Index(i), rng, sample, depth+1)
		}
		v.Set(s)
	case reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fill(v.Index(i), rng, sample, depth+1)
		}
	case reflect.Map:
		n := rng.IntN(4)
		m := reflect.MakeMapWithSize(v.Type(), n)
		for i := 0; i < n; i++ {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			fill(k, rng, sample, depth+1)
			fill(e, rng, sample, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	}
}
