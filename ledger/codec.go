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

func (e *Encoder) U8(v uint8)       { e.buf = append(e.buf, v) }
func (e *Encoder) Uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }
func (e *Encoder) Varint(v int64)   { e.buf = binary.AppendVarint(e.buf, v) }
func (e *Encoder) minor(v Minor)    { e.Varint(int64(v)) }
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

func (d *Decoder) minor() Minor { return Minor(d.Varint()) }

// U32 reads a uvarint that must fit 32 bits (a scope set).
func (d *Decoder) U32() uint32 {
	v := d.Uvarint()
	if v > math.MaxUint32 {
		d.Fail(errors.New("ledger: value exceeds 32 bits"))
		return 0
	}
	return uint32(v)
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

// U16 reads a uvarint that must fit 16 bits (a set of flags).
func (d *Decoder) U16() uint16 {
	v := d.Uvarint()
	if v > math.MaxUint16 {
		d.Fail(errors.New("ledger: value exceeds 16 bits"))
		return 0
	}
	return uint16(v)
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

// Strs reads what encoder.Strs wrote; an empty list is nil.
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

// Codec returns a fieldCodec that writes to e.
func (e *Encoder) Codec() *Codec { return &Codec{enc: e} }

// Codec returns a fieldCodec that reads from d.
func (d *Decoder) Codec() *Codec { return &Codec{dec: d} }

func (f *Codec) Varint(p *int64) {
	if f.enc != nil {
		f.enc.Varint(*p)
		return
	}
	*p = f.dec.Varint()
}

func (f *Codec) Uvarint(p *uint64) {
	if f.enc != nil {
		f.enc.Uvarint(*p)
		return
	}
	*p = f.dec.Uvarint()
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
		f.enc.Bool(*p)
		return
	}
	*p = f.dec.Bool()
}

func (f *Codec) Str(p *string) {
	if f.enc != nil {
		f.enc.Str(*p)
		return
	}
	*p = f.dec.Str()
}

func (f *Codec) Strs(p *[]string) {
	if f.enc != nil {
		f.enc.Strs(*p)
		return
	}
	*p = f.dec.Strs()
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
		f.enc.Uvarint(uint64(*p))
		return
	}
	*p = f.dec.U16()
}

// FieldSlice reads or writes a slice: its length, then each element by
// each. A length over most fails the decoding (what names the elements in
// the error); an empty slice decodes as nil.
func FieldSlice[T any](f *Codec, p *[]T, most int, what string, each func(*Codec, *T)) {
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
		d.Fail(Errorf(CodeInternal, "%d %s, at most %d", n, what, most))
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
		f.enc.U8(uint8(*p))
		return
	}
	*p = T(f.dec.U8())
}

// Scopes reads or writes an API key's Scopes: a uvarint of 32 bits.
func (f *Codec) Scopes(p *Scopes) {
	if f.enc != nil {
		f.enc.Uvarint(uint64(*p))
		return
	}
	*p = Scopes(f.dec.U32())
}

// Decoding reports whether f reads (rather than writes): a Fields method
// sets what the bytes leave implied only when reading.
func (f *Codec) Decoding() bool { return f.dec != nil }
