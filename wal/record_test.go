package wal

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	hraft "github.com/hashicorp/raft"
)

// appendLogRecord appends the encoding of l to dst.
func appendLogRecord(dst []byte, l *hraft.Log) ([]byte, error) {
	n, err := logRecordLen(l)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	encodeLogRecord(dst[start:], l)
	return dst, nil
}

// appendStableRecord appends a stable record to dst.
func appendStableRecord(dst, key, value []byte) ([]byte, error) {
	n, err := stableRecordLen(key, value)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	encodeStableRecord(dst[start:], key, value)
	return dst, nil
}

func TestLogRecordRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		log  hraft.Log
	}{
		{"zero value", hraft.Log{}},
		{"every field", *entry(42)},
		{"extremes", hraft.Log{
			Index: math.MaxUint64, Term: math.MaxUint64, Type: hraft.LogType(255),
			Data: []byte{0}, Extensions: []byte{0xff},
			AppendedAt: time.Unix(0, 999_999_999).UTC(),
		}},
		{"data without extensions", hraft.Log{Index: 1, Data: []byte("cmd")}},
		{"extensions without data", hraft.Log{Index: 1, Extensions: []byte("ext")}},
		{"before 1970", hraft.Log{Index: 1, AppendedAt: time.Date(1601, 1, 1, 0, 0, 0, 1, time.UTC)}},
		{"far future", hraft.Log{Index: 1, AppendedAt: time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := appendLogRecord(nil, &tt.log)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := logRecordLen(&tt.log); n != len(rec) {
				t.Fatalf("logRecordLen = %d, encoded %d bytes", n, len(rec))
			}
			var got hraft.Log
			if err := decodeLogRecord(rec, &got); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(got, tt.log) {
				t.Fatalf("decoded %+v, want %+v", got, tt.log)
			}
		})
	}
}

// TestAppendedAtKeepsTheInstant: a time in another zone, or with a monotonic
// reading, comes back as the same instant in UTC; the zero time comes back as
// exactly time.Time{}.
func TestAppendedAtKeepsTheInstant(t *testing.T) {
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	for _, at := range []time.Time{time.Now(), time.Date(2024, 2, 29, 12, 0, 0, 123_456_789, zone), {}} {
		rec, err := appendLogRecord(nil, &hraft.Log{AppendedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		var got hraft.Log
		if err := decodeLogRecord(rec, &got); err != nil {
			t.Fatal(err)
		}
		if !got.AppendedAt.Equal(at) || got.AppendedAt.Location() != time.UTC {
			t.Fatalf("appended at %v decoded as %v", at, got.AppendedAt)
		}
		if at.IsZero() && got.AppendedAt != (time.Time{}) {
			t.Fatalf("zero time decoded as %#v", got.AppendedAt)
		}
	}
}

// TestLogRecordLayout pins the frozen byte layout drawn in doc.go.
func TestLogRecordLayout(t *testing.T) {
	rec, err := appendLogRecord(nil, &hraft.Log{
		Index: 0x0102030405060708, Term: 9, Type: hraft.LogConfiguration,
		Data: []byte("ab"), Extensions: []byte("c"),
		AppendedAt: time.Unix(10, 11),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "01" + "xxxxxxxx" + "4c" + "0102030405060708" + "0000000000000009" + "05" +
		"000000000000000a" + "0000000b" + "00000002" + "00000001" + "6162" + "63"
	got := hex.EncodeToString(rec)
	sum := crc32.Checksum(rec[5:], crc32.MakeTable(crc32.Castagnoli))
	want = strings.Replace(want, "xxxxxxxx", hex.EncodeToString(binary.BigEndian.AppendUint32(nil, sum)), 1)
	if got != want {
		t.Fatalf("record\n got %s\nwant %s", got, want)
	}
}

func TestStableRecordLayout(t *testing.T) {
	rec, err := appendStableRecord(nil, []byte("k"), []byte("vv"))
	if err != nil {
		t.Fatal(err)
	}
	sum := crc32.Checksum(rec[5:], crc32.MakeTable(crc32.Castagnoli))
	want := "01" + hex.EncodeToString(binary.BigEndian.AppendUint32(nil, sum)) + "53" + "00000001" + "6b" + "00000002" + "7676"
	if got := hex.EncodeToString(rec); got != want {
		t.Fatalf("record\n got %s\nwant %s", got, want)
	}
	key, value, err := decodeStableRecord(rec)
	if err != nil || string(key) != "k" || string(value) != "vv" {
		t.Fatalf("decode = %q, %q, %v", key, value, err)
	}
}

// withChecksum returns rec with its checksum recomputed, so that a test can
// reach the checks behind it.
func withChecksum(rec []byte) []byte {
	out := bytes.Clone(rec)
	if len(out) >= checksumEnd {
		binary.BigEndian.PutUint32(out[checksumOffset:], crc32.Checksum(out[checksumEnd:], castagnoli))
	}
	return out
}

func TestDecodeLogRecordRejects(t *testing.T) {
	good, err := appendLogRecord(nil, entry(7))
	if err != nil {
		t.Fatal(err)
	}
	stable, err := appendStableRecord(nil, []byte("k"), []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	assertRejects(t, func(rec []byte) error { return decodeLogRecord(rec, new(hraft.Log)) }, []rejectedRecord{
		{"empty", nil, "too short"},
		{"version only", []byte{1}, "too short"},
		{"unknown version", edit(func(b []byte) []byte { b[0] = 2; return b }), "unknown format version 2"},
		{"flipped data bit", edit(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), "checksum"},
		{"flipped checksum bit", edit(func(b []byte) []byte { b[1] ^= 0x80; return b }), "checksum"},
		{"truncated", good[:len(good)-1], "checksum"},
		{"stable record", stable, "kind"},
		{"short header", withChecksum(good[:logHeaderLen-1]), "shorter than a log header"},
		{"trailing byte", withChecksum(append(bytes.Clone(good), 0)), "fields say"},
		{"data length too long", withChecksum(edit(func(b []byte) []byte { b[38]++; return b })), "fields say"},
		{"nanoseconds out of range", withChecksum(edit(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[31:], uint32(time.Second))
			return b
		})), "out of range"},
		{"seconds out of range", withChecksum(edit(func(b []byte) []byte {
			binary.BigEndian.PutUint64(b[23:], math.MaxInt64)
			return b
		})), "out of range"},
	})
}

func TestDecodeStableRecordRejects(t *testing.T) {
	good, err := appendStableRecord(nil, []byte("key"), []byte("value"))
	if err != nil {
		t.Fatal(err)
	}
	logRec, err := appendLogRecord(nil, entry(1))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	assertRejects(t, func(rec []byte) error { _, _, err := decodeStableRecord(rec); return err }, []rejectedRecord{
		{"empty", nil, "too short"},
		{"flipped value bit", edit(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), "checksum"},
		{"log record", logRec, "kind"},
		{"short header", withChecksum(good[:stableHeaderLen-1]), "shorter than a stable header"},
		{"key length overruns", withChecksum(edit(func(b []byte) []byte { b[9] = 200; return b })), "overruns"},
		{"value length wrong", withChecksum(edit(func(b []byte) []byte { b[len(b)-6]++; return b })), "length says"},
		{"trailing byte", withChecksum(append(bytes.Clone(good), 0)), "length says"},
	})
}

// rejectedRecord is a record a decoder must refuse, and a word its error
// must mention.
type rejectedRecord struct {
	name string
	rec  []byte
	want string
}

// assertRejects checks that decode refuses each record with errRecord.
func assertRejects(t *testing.T, decode func(rec []byte) error, tests []rejectedRecord) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := decode(tt.rec)
			if !errors.Is(err, errRecord) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestLogKey(t *testing.T) {
	for _, index := range []uint64{0, 1, 255, 256, math.MaxUint64} {
		k := logKey(index)
		if got, ok := parseLogKey(k); !ok || got != index {
			t.Fatalf("parseLogKey(logKey(%d)) = %d, %v", index, got, ok)
		}
	}
	// Big-endian keys sort in index order.
	if bytes.Compare(logKey(255), logKey(256)) >= 0 {
		t.Fatal("log keys do not sort by index")
	}
	for _, k := range [][]byte{nil, {prefixLog}, []byte("l1234567"), append([]byte{prefixStable}, make([]byte, 8)...)} {
		if _, ok := parseLogKey(k); ok {
			t.Fatalf("parseLogKey(%q) accepted", k)
		}
	}
}

// FuzzDecodeLogRecord: decoding arbitrary bytes never panics, and a record
// that decodes re-encodes to the same bytes. Each input is tried as is and
// with its checksum repaired, so that the fuzzer gets past the checksum.
func FuzzDecodeLogRecord(f *testing.F) {
	for _, l := range []*hraft.Log{{}, entry(1), entry(1 << 40), {Index: 3, Data: []byte("x")}} {
		rec, err := appendLogRecord(nil, l)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(rec)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 0, 0, 'L'})
	f.Fuzz(func(t *testing.T, rec []byte) {
		for _, r := range [][]byte{rec, withChecksum(rec)} {
			var l hraft.Log
			if err := decodeLogRecord(r, &l); err != nil {
				if !errors.Is(err, errRecord) {
					t.Fatalf("error does not wrap errRecord: %v", err)
				}
				continue
			}
			again, err := appendLogRecord(nil, &l)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			if !bytes.Equal(again, r) {
				t.Fatalf("re-encoded\n%x\nfrom\n%x", again, r)
			}
		}
	})
}
