package ledger

import (
	"bytes"
	"testing"

	"payments/ledger/kv"
)

// flagged is a record with a flag appended after its format was frozen
// (an invitation that is a password reset link: package team).
type flagged struct {
	ID   string
	Flag bool
}

func (v *flagged) fields(f *Codec) {
	f.Str(&v.ID)
	f.AppendedFlag(&v.Flag)
}

// An appended flag is written only when true, as the last byte, so a
// record without it keeps the older format's bytes; a false one written
// would not re-encode as read, and is refused.
func TestAppendedFlag(t *testing.T) {
	plain, withFlag := flagged{ID: "inv_p"}, flagged{ID: "inv_p", Flag: true}
	var e, f Encoder
	plain.fields(e.Codec())
	withFlag.fields(f.Codec())
	if !bytes.Equal(f.Bytes(), append(bytes.Clone(e.Bytes()), 1)) {
		t.Fatalf("the flag is not appended: %x after %x", f.Bytes(), e.Bytes())
	}
	for _, c := range []struct {
		buf  []byte
		want flagged
		ok   bool
	}{{e.Bytes(), plain, true}, {f.Bytes(), withFlag, true}, {append(bytes.Clone(e.Bytes()), 0), flagged{}, false}} {
		d := kv.NewDecoder(c.buf)
		var got flagged
		got.fields(d.Codec())
		if (d.Err() == nil) != c.ok || c.ok && (got != c.want || len(d.Rest()) != 0) {
			t.Fatalf("%x read as %+v, %v", c.buf, got, d.Err())
		}
	}
}
