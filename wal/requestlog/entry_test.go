package requestlog

import (
	"reflect"
	"testing"
)

// FuzzDecodeEntry holds the index's entry decoding to its promises on any
// bytes a damaged file could hold: it never panics, and what it accepts
// encodes back to the same bytes.
func FuzzDecodeEntry(f *testing.F) {
	for _, e := range []entry{
		{},
		{newestAt: 1, maxSeq: 9, block: 7, bytes: 120, orgs: []section{{org: "org_a", seqs: []uint64{9, 8, 7}}}},
		{newestAt: -5, maxSeq: 1 << 40, bytes: 300, unattributed: 50,
			orgs: []section{{org: "", seqs: []uint64{1 << 40}}, {org: "org_b", prev: 3, seqs: []uint64{12}}}},
	} {
		f.Add(e.encode())
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		e, err := decodeEntry(v)
		if err != nil {
			return
		}
		again := e.encode()
		e2, err := decodeEntry(again)
		if err != nil || !reflect.DeepEqual(e, e2) {
			t.Fatalf("%x decodes to %+v, which encodes to %x, which decodes to %+v (%v)", v, e, again, e2, err)
		}
	})
}
