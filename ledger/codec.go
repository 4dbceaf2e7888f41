package ledger

import (
	"encoding/binary"
	"errors"
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

type Encoder struct {
	buf []byte
	// generic is the fieldCodec that encodeByFields writes through, like
	// decoder.generic.
	generic Codec
}

func (e *Encoder) u8(v uint8)       { e.buf = append(e.buf, v) }
func (e *Encoder) uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *Encoder) varint(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *Encoder) minor(v Minor)    { e.varint(int64(v)) }
func (e *Encoder) bool(v bool) {
	if v {
		e.u8(1)
	} else {
		e.u8(0)
	}
}
func (e *Encoder) str(s string) {
	e.uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// Decoder reads what encoder wrote. The first error sticks; every later read
// returns zero values, so decode functions check d.err once at the end.
type Decoder struct {
	buf []byte
	err error
	// short, when set, holds the short strings str returns, many to an
	// allocation (DecodeBatch's: a payout's life decodes some nine).
	short *strings.Builder
	// generic is the fieldCodec that decodeFields reads through: a
	// method called through a type parameter cannot keep it on the stack.
	generic Codec
}

// Limits of decoder.short: a chunk is shared by the short strings of a few
// commands, and a string that outlives the others (an organization's name,
// say) keeps at most one chunk alive.
const (
	strChunkBytes   = 512
	strPooledLenMax = 64
)

func (d *Decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.buf = nil
}

func (d *Decoder) u8() uint8 {
	if len(d.buf) < 1 {
		d.fail(errTruncated)
		return 0
	}
	v := d.buf[0]
	d.buf = d.buf[1:]
	return v
}

// errOverlong is a varint in more bytes than it needs. The format has one
// encoding per value, so such bytes were not written by this codec.
var errOverlong = errors.New("ledger: non-canonical varint")

func (d *Decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if !d.skipVarint(n) {
		return 0
	}
	return v
}

func (d *Decoder) varint() int64 {
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
		d.fail(errTruncated)
		return false
	}
	if n > 1 && d.buf[n-1] == 0 {
		d.fail(errOverlong)
		return false
	}
	d.buf = d.buf[n:]
	return true
}

func (d *Decoder) minor() Minor { return Minor(d.varint()) }

// u32 reads a uvarint that must fit 32 bits (a scope set).
func (d *Decoder) u32() uint32 {
	v := d.uvarint()
	if v > math.MaxUint32 {
		d.fail(errors.New("ledger: value exceeds 32 bits"))
		return 0
	}
	return uint32(v)
}

// more reports whether bytes remain: a record whose value ends where an
// older layout ended has none of the fields appended to its kind since
// (doc.go, "Appended fields").
func (d *Decoder) more() bool { return d.err == nil && len(d.buf) > 0 }

// appendedRef reads the reference a command kind "with the reference"
// appends (KindExecuteQuoteRef, KindDepositOrderRef). It is never empty: a
// command without one is written as the plain kind, so an empty one would
// not re-encode as read.
func (d *Decoder) appendedRef() string {
	ref := d.str()
	if ref == "" && d.err == nil {
		d.fail(errors.New("ledger: empty appended reference"))
	}
	return ref
}

// u16 reads a uvarint that must fit 16 bits (a set of flags).
func (d *Decoder) u16() uint16 {
	v := d.uvarint()
	if v > math.MaxUint16 {
		d.fail(errors.New("ledger: value exceeds 16 bits"))
		return 0
	}
	return uint16(v)
}

func (d *Decoder) bool() bool {
	switch d.u8() {
	case 0:
		return false
	case 1:
		return true
	default:
		d.fail(errors.New("ledger: invalid boolean"))
		return false
	}
}

func (d *Decoder) str() string {
	b := d.rawBytes()
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

// strs writes a list of strings: its length, then each. Disputes' file ids
// and webhook endpoints' events share it.
func (e *Encoder) strs(v []string) {
	e.uvarint(uint64(len(v)))
	for _, s := range v {
		e.str(s)
	}
}

// strs reads what encoder.strs wrote; an empty list is nil.
func (d *Decoder) strs() []string {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make([]string, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, d.str())
	}
	return out
}

func (d *Decoder) rawBytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > stringLenMax || n > uint64(len(d.buf)) || n > math.MaxInt32 {
		d.fail(errTruncated)
		return nil
	}
	b := d.buf[:n]
	d.buf = d.buf[n:]
	return b
}

// count reads a collection length and bounds it by the bytes left, since
// every element takes at least one byte.
func (d *Decoder) count() int {
	n := d.uvarint()
	if d.err != nil {
		return 0
	}
	if n > uint64(len(d.buf)) {
		d.fail(errTruncated)
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

// Codec returns a fieldCodec that writes to e.
func (e *Encoder) Codec() *Codec { return &Codec{enc: e} }

// Codec returns a fieldCodec that reads from d.
func (d *Decoder) Codec() *Codec { return &Codec{dec: d} }

func (f *Codec) Varint(p *int64) {
	if f.enc != nil {
		f.enc.varint(*p)
		return
	}
	*p = f.dec.varint()
}

func (f *Codec) Uvarint(p *uint64) {
	if f.enc != nil {
		f.enc.uvarint(*p)
		return
	}
	*p = f.dec.uvarint()
}

func (f *Codec) Minor(p *Minor) {
	if f.enc != nil {
		f.enc.minor(*p)
		return
	}
	*p = f.dec.minor()
}

func (f *Codec) Bool(p *bool) {
	if f.enc != nil {
		f.enc.bool(*p)
		return
	}
	*p = f.dec.bool()
}

func (f *Codec) Str(p *string) {
	if f.enc != nil {
		f.enc.str(*p)
		return
	}
	*p = f.dec.str()
}

func (f *Codec) Strs(p *[]string) {
	if f.enc != nil {
		f.enc.strs(*p)
		return
	}
	*p = f.dec.strs()
}

// fieldsCommand is a command (a pointer P to a T) whose fields method is
// its codec.
type fieldsCommand[T any] interface {
	*T
	Command
	fields(f *Codec)
}

// decodeFields reads a command of type T by its fields method.
func decodeFields[T any, P fieldsCommand[T]](d *Decoder) P {
	c := P(new(T))
	d.generic = Codec{dec: d}
	c.fields(&d.generic)
	return c
}

// registerFields makes kind k decodable by its command's fields method.
func registerFields[T any, P fieldsCommand[T]](k Kind) {
	RegisterCommand(k, func(d *Decoder) Command { return decodeFields[T, P](d) })
}

func (f *Codec) U16(p *uint16) {
	if f.enc != nil {
		f.enc.uvarint(uint64(*p))
		return
	}
	*p = f.dec.u16()
}

// FieldSlice reads or writes a slice: its length, then each element by
// each. A length over most fails the decoding (what names the elements in
// the error); an empty slice decodes as nil.
func FieldSlice[T any](f *Codec, p *[]T, most int, what string, each func(*Codec, *T)) {
	if f.enc != nil {
		f.enc.uvarint(uint64(len(*p)))
		for i := range *p {
			each(f, &(*p)[i])
		}
		return
	}
	d := f.dec
	n := d.count()
	if n > most {
		d.fail(Errorf(CodeInternal, "%d %s, at most %d", n, what, most))
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

// fielded is a record (a pointer P to a V) whose fields method is its
// codec.
type fielded[V any] interface {
	*V
	fields(f *Codec)
}

// encodeByFields writes a record by its fields method.
func encodeByFields[V any, P fielded[V]](e *Encoder, v *V) {
	e.generic = Codec{enc: e}
	P(v).fields(&e.generic)
}

// decodeByFields reads a record by its fields method. The record escapes
// (a method called through a type parameter): the records read on every
// request or payout (payouts, collections, accounts) call their fields
// method directly instead.
func decodeByFields[V any, P fielded[V]](d *Decoder) (v V) {
	d.generic = Codec{dec: d}
	P(&v).fields(&d.generic)
	return v
}

// registerFieldsSubject makes a record type an event subject, coded by its
// fields method.
func registerFieldsSubject[V Subject, P fielded[V]](k SubjectKind) {
	registerSubject(k,
		func(e *Encoder, s Subject) { v := s.(V); P(&v).fields(e.Codec()) },
		func(d *Decoder) Subject { return decodeByFields[V, P](d) })
}

// FieldU8 reads or writes a one-byte enumeration (a side, a status).
func FieldU8[T ~uint8](f *Codec, p *T) {
	if f.enc != nil {
		f.enc.u8(uint8(*p))
		return
	}
	*p = T(f.dec.u8())
}

// Scopes reads or writes an API key's Scopes: a uvarint of 32 bits.
func (f *Codec) Scopes(p *Scopes) {
	if f.enc != nil {
		f.enc.uvarint(uint64(*p))
		return
	}
	*p = Scopes(f.dec.u32())
}

// Decoding reports whether f reads (rather than writes): a Fields method
// sets what the bytes leave implied only when reading.
func (f *Codec) Decoding() bool { return f.dec != nil }
