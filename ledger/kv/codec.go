// Package kv is the ledger's byte-level machinery, beneath the kernel
// (package ledger) and its features: the binary codec of commands and
// records (Encoder, Decoder, and Codec, a fields method's one list of
// fields for both directions), and the ordered key-value state store as
// the ledger sees it (Reader, Writer, Iterator, StoreError), with the keys
// and scans its records are stored and found by (Key, Scan, GetRecord,
// SortedWriter) and the Bloom filter that proves a lookup key new
// (LookupFilter). It knows no command, record or rule: what goes in the
// store, and under which keys, is the ledger's (ledger/doc.go, layout.go).
// Package ledger names its types again (ledger.Encoder, ledger.KVReader…).
// It imports the standard library only.
package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

// The binary codec of commands and snapshots. Integers are varints, strings
// and byte strings are a uvarint length then the bytes. The codec is frozen:
// a change of layout is a new command kind or a new snapshot version, never an
// edit, because old log entries must replay exactly.

// errTruncated is returned when a decoder runs out of input.
var errTruncated = errors.New("ledger: truncated record")

// stringLenMax bounds any decoded string, so a corrupt length cannot make the
// decoder allocate gigabytes.
const stringLenMax = 1 << 20

// Encoder writes the codec's bytes.
type Encoder struct {
	buf []byte
	// generic is the Codec that Codec returns, like Decoder.generic.
	generic Codec
}

// NewEncoder returns an Encoder that appends to buf.
func NewEncoder(buf []byte) Encoder { return Encoder{buf: buf} }

// Bytes is what e holds: the buffer it was made with, and what it wrote.
func (e *Encoder) Bytes() []byte { return e.buf }

// Reset empties e, keeping its buffer.
func (e *Encoder) Reset() { e.buf = e.buf[:0] }

func (e *Encoder) U8(v uint8)       { e.buf = append(e.buf, v) }
func (e *Encoder) Uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *Encoder) Varint(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *Encoder) Bool(v bool) {
	if v {
		e.U8(1)
	} else {
		e.U8(0)
	}
}
func (e *Encoder) Str(s string) {
	e.Uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// Decoder reads what Encoder wrote. The first error sticks; every later read
// returns zero values, so decode functions check d.err once at the end.
type Decoder struct {
	buf []byte
	err error
	// short, when set, holds the short strings str returns, many to an
	// allocation (DecodeBatch's: a payout's life decodes some nine).
	short *strings.Builder
	// generic is the Codec that Codec returns: a fields method called
	// through a type parameter cannot keep its Codec on the stack.
	generic Codec
}

// Limits of decoder.short: a chunk is shared by the short strings of a few
// commands, and a string that outlives the others (an organization's name,
// say) keeps at most one chunk alive.
const (
	strChunkBytes   = 512
	strPooledLenMax = 64
)

// NewDecoder returns a Decoder that reads b.
func NewDecoder(b []byte) Decoder { return Decoder{buf: b} }

// PoolStrings makes d cut its short strings from shared chunks (a batch's
// commands: see Decoder.short).
func (d *Decoder) PoolStrings() { d.short = new(strings.Builder) }

// Err is the first error d met, nil if none.
func (d *Decoder) Err() error { return d.err }

// Rest is what d has not read yet.
func (d *Decoder) Rest() []byte { return d.buf }

// Fail sets d's error, if it has none yet, and stops d reading.
func (d *Decoder) Fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.buf = nil
}

func (d *Decoder) U8() uint8 {
	if len(d.buf) < 1 {
		d.Fail(errTruncated)
		return 0
	}
	v := d.buf[0]
	d.buf = d.buf[1:]
	return v
}

// errOverlong is a varint in more bytes than it needs. The format has one
// encoding per value, so such bytes were not written by this codec.
var errOverlong = errors.New("ledger: non-canonical varint")

func (d *Decoder) Uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if !d.skipVarint(n) {
		return 0
	}
	return v
}

func (d *Decoder) Varint() int64 {
	v, n := binary.Varint(d.buf)
	if !d.skipVarint(n) {
		return 0
	}
	return v
}

// skipVarint consumes the n bytes that binary.Uvarint or binary.Varint has
// just read from the front of the buffer, or fails the decoder where they
// are truncated (n <= 0) or overlong: one rule, so that both kinds of
// varint refuse the same bytes.
func (d *Decoder) skipVarint(n int) bool {
	if n <= 0 {
		d.Fail(errTruncated)
		return false
	}
	if n > 1 && d.buf[n-1] == 0 {
		d.Fail(errOverlong)
		return false
	}
	d.buf = d.buf[n:]
	return true
}

// U32 reads a uvarint that must fit 32 bits (a scope set).
func (d *Decoder) U32() uint32 { return uint32(d.uvarintBits(32)) }

// U16 reads a uvarint that must fit 16 bits (a set of flags).
func (d *Decoder) U16() uint16 { return uint16(d.uvarintBits(16)) }

// uvarintBits reads a uvarint that must fit bits bits.
func (d *Decoder) uvarintBits(bits int) uint64 {
	v := d.Uvarint()
	if v >= uint64(1)<<bits {
		d.Fail(fmt.Errorf("ledger: value exceeds %d bits", bits))
		return 0
	}
	return v
}

// More reports whether bytes remain: a record whose value ends where an
// older layout ended has none of the fields appended to its kind since
// (doc.go, "Appended fields").
func (d *Decoder) More() bool { return d.err == nil && len(d.buf) > 0 }

// AppendedRef reads the reference a command kind "with the reference"
// appends (KindExecuteQuoteRef, KindDepositOrderRef). It is never empty: a
// command without one is written as the plain kind, so an empty one would
// not re-encode as read.
func (d *Decoder) AppendedRef() string {
	ref := d.Str()
	if ref == "" && d.err == nil {
		d.Fail(errors.New("ledger: empty appended reference"))
	}
	return ref
}

func (d *Decoder) Bool() bool {
	switch d.U8() {
	case 0:
		return false
	case 1:
		return true
	default:
		d.Fail(errors.New("ledger: invalid boolean"))
		return false
	}
}

func (d *Decoder) Str() string {
	b := d.RawBytes()
	sb := d.short
	if sb == nil || len(b) == 0 || len(b) > strPooledLenMax {
		return string(b)
	}
	// A Builder only ever appends within its capacity, so a string cut
	// from what it holds never changes; a full chunk is left to its
	// strings, and the next ones go to a new one.
	if sb.Cap()-sb.Len() < len(b) {
		sb.Reset()
		sb.Grow(strChunkBytes)
	}
	start := sb.Len()
	sb.Write(b)
	return sb.String()[start:]
}

// Strs writes a list of strings: its length, then each. Disputes' file ids
// and webhook endpoints' events share it.
func (e *Encoder) Strs(v []string) {
	e.Uvarint(uint64(len(v)))
	for _, s := range v {
		e.Str(s)
	}
}

// Strs reads what Encoder.Strs wrote; an empty list is nil.
func (d *Decoder) Strs() []string {
	n := d.Count()
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, d.Str())
	}
	return out
}

func (d *Decoder) RawBytes() []byte {
	n := d.Uvarint()
	if d.err != nil {
		return nil
	}
	if n > stringLenMax || n > uint64(len(d.buf)) || n > math.MaxInt32 {
		d.Fail(errTruncated)
		return nil
	}
	b := d.buf[:n]
	d.buf = d.buf[n:]
	return b
}

// Count reads a collection length and bounds it by the bytes left, since
// every element takes at least one byte.
func (d *Decoder) Count() int {
	n := d.Uvarint()
	if d.err != nil {
		return 0
	}
	if n > uint64(len(d.buf)) {
		d.Fail(errTruncated)
		return 0
	}
	return int(n)
}

// Codec runs a command's field list in one direction: a command with a
// fields method names each field once, in its frozen order, and that one
// list both writes the command and reads it back, so the two cannot drift
// apart. Exactly one of enc and dec is set.
type Codec struct {
	enc *Encoder
	dec *Decoder
}

// Codec returns a Codec that writes to e. It is held in e, so that a
// fields method called through a type parameter allocates none.
func (e *Encoder) Codec() *Codec {
	e.generic = Codec{enc: e}
	return &e.generic
}

// Codec returns a Codec that reads from d, held in d as Encoder.Codec's.
func (d *Decoder) Codec() *Codec {
	d.generic = Codec{dec: d}
	return &d.generic
}

// Encoder is the encoder f writes to; nil when f reads.
func (f *Codec) Encoder() *Encoder { return f.enc }

// Decoder is the decoder f reads from; nil when f writes.
func (f *Codec) Decoder() *Decoder { return f.dec }

// Varint runs int64 fields, in order.
func (f *Codec) Varint(ps ...*int64) { fieldEach(f, ps, (*Encoder).Varint, (*Decoder).Varint) }

// Uvarint runs uint64 fields, in order.
func (f *Codec) Uvarint(ps ...*uint64) { fieldEach(f, ps, (*Encoder).Uvarint, (*Decoder).Uvarint) }

// Bool runs bool fields, in order.
func (f *Codec) Bool(ps ...*bool) { fieldEach(f, ps, (*Encoder).Bool, (*Decoder).Bool) }

// Str runs string fields, in order.
func (f *Codec) Str(ps ...*string) { fieldEach(f, ps, (*Encoder).Str, (*Decoder).Str) }

// fieldEach runs fields of one type, in order: each written by enc or read
// by dec.
func fieldEach[T any](f *Codec, ps []*T, enc func(*Encoder, T), dec func(*Decoder) T) {
	for _, p := range ps {
		if f.enc != nil {
			enc(f.enc, *p)
			continue
		}
		*p = dec(f.dec)
	}
}

func (f *Codec) Strs(p *[]string) {
	if f.enc != nil {
		f.enc.Strs(*p)
		return
	}
	*p = f.dec.Strs()
}

func (f *Codec) U16(p *uint16) {
	if f.enc != nil {
		f.enc.Uvarint(uint64(*p))
		return
	}
	*p = f.dec.U16()
}

// FieldSlice reads or writes a slice: its length, then each element by
// each. A length over most fails the decoding with tooMany(n) (an error
// that names the elements); an empty slice decodes as nil.
func FieldSlice[T any](f *Codec, p *[]T, most int, tooMany func(n int) error, each func(*Codec, *T)) {
	if f.enc != nil {
		f.enc.Uvarint(uint64(len(*p)))
		for i := range *p {
			each(f, &(*p)[i])
		}
		return
	}
	d := f.dec
	n := d.Count()
	if n > most {
		d.Fail(tooMany(n))
		return
	}
	if n == 0 {
		*p = nil
		return
	}
	*p = make([]T, n)
	for i := 0; i < n && d.err == nil; i++ {
		each(f, &(*p)[i])
	}
}

// FieldU8 reads or writes a one-byte enumeration (a side, a status).
func FieldU8[T ~uint8](f *Codec, p *T) {
	if f.enc != nil {
		f.enc.U8(uint8(*p))
		return
	}
	*p = T(f.dec.U8())
}

// FieldU32 reads or writes a set of 32 bits (an API key's scopes): a
// uvarint that must fit them.
func FieldU32[T ~uint32](f *Codec, p *T) {
	if f.enc != nil {
		f.enc.Uvarint(uint64(*p))
		return
	}
	*p = T(f.dec.U32())
}

// Decoding reports whether f reads (rather than writes): a Fields method
// sets what the bytes leave implied only when reading.
func (f *Codec) Decoding() bool { return f.dec != nil }

// More reports, while decoding, whether bytes remain: a record read where
// an older layout ended has none of the fields appended since (doc.go,
// "Appended fields").
func (f *Codec) More() bool { return f.dec != nil && f.dec.More() }

// AppendedRef reads the reference a command kind "with the reference"
// appends to its base kind's fields (KindExecuteQuoteRef); it is never
// empty. Writing, it writes a reference that is not empty.
func (f *Codec) AppendedRef(p *string) {
	if f.enc != nil {
		if *p != "" {
			f.enc.Str(*p)
		}
		return
	}
	*p = f.dec.AppendedRef()
}

// AppendedFlag reads or writes a flag appended to a kind of record after
// its format was frozen (doc.go, "Appended fields"): written only when
// true, as the record's last byte, so a record without it keeps the older
// format's bytes; read only when bytes remain. A false flag written would
// not re-encode as read, so reading one fails.
func (f *Codec) AppendedFlag(p *bool) {
	if f.enc != nil {
		if *p {
			f.enc.Bool(true)
		}
		return
	}
	d := f.dec
	if !d.More() {
		*p = false
		return
	}
	if *p = d.Bool(); !*p && d.err == nil {
		d.Fail(errors.New("ledger: an appended flag that is false"))
	}
}

// AppendedVarint reads or writes the field a variant kind appends to its
// base kind's fields (an attempt with its start). It is never zero: a
// command without it is written as the base kind, so a zero would not
// encode again as it was read.
func (f *Codec) AppendedVarint(p *int64, what string) {
	if f.enc != nil {
		f.enc.Varint(*p)
		return
	}
	*p = f.dec.Varint()
	if *p == 0 && f.dec.err == nil {
		f.dec.Fail(fmt.Errorf("ledger: appended %s of zero", what))
	}
}

// AppendedSlice reads or writes a slice appended to a record's layout
// (doc.go, "Appended fields"): written only when it is not empty, so that
// a record without it keeps the older layout, and read only where bytes
// remain. An appended length of zero fails the decoding (it would not
// encode again as read).
func AppendedSlice[T any](f *Codec, p *[]T, what string, each func(*Codec, *T)) {
	if f.enc != nil {
		if len(*p) == 0 {
			return
		}
		f.enc.Uvarint(uint64(len(*p)))
		for i := range *p {
			each(f, &(*p)[i])
		}
		return
	}
	d := f.dec
	if !d.More() {
		return
	}
	n := d.Count()
	if n == 0 && d.err == nil {
		d.Fail(fmt.Errorf("ledger: empty appended %s", what))
	}
	*p = make([]T, n)
	for i := range *p {
		each(f, &(*p)[i])
	}
}
