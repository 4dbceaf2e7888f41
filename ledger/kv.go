package ledger

import "payments/ledger/kv"

// The codec's and the state store's names, as package kv defines them
// (its byte-level machinery, beneath the kernel): the kernel, its features
// and its callers go on naming them ledger.Encoder, ledger.KVReader….

type (
	Encoder  = kv.Encoder
	Decoder  = kv.Decoder
	Codec    = kv.Codec
	KVReader = kv.Reader
	KVWriter = kv.Writer
	Iterator = kv.Iterator
	// StoreError is the panic value of a failed read or write of the
	// state store (kv.StoreError).
	StoreError = kv.StoreError
	// IterStore is what KVOf adapts.
	IterStore[I Iterator] = kv.IterStore[I]
)

// ErrStoreClosed is the cause of a StoreError raised by a read made after
// the node closed its state store: the node is shutting down.
var ErrStoreClosed = kv.ErrClosed

// KVOf returns s as the KVReader Apply and the readers read (kv.ReaderOf).
func KVOf[I Iterator](s IterStore[I]) KVReader { return kv.ReaderOf(s) }

// FieldSlice reads or writes a slice: its length, then each element by
// each. A length over most fails the decoding (what names the elements in
// the error); an empty slice decodes as nil.
func FieldSlice[T any](f *Codec, p *[]T, most int, what string, each func(*Codec, *T)) {
	kv.FieldSlice(f, p, most, func(n int) error { return Errorf(CodeInternal, "%d %s, at most %d", n, what, most) }, each)
}

// FieldU8 reads or writes a one-byte enumeration (a side, a status).
func FieldU8[T ~uint8](f *Codec, p *T) { kv.FieldU8(f, p) }

// AppendedSlice reads or writes a slice appended to a record's layout
// (kv.AppendedSlice).
func AppendedSlice[T any](f *Codec, p *[]T, what string, each func(*Codec, *T)) {
	kv.AppendedSlice(f, p, what, each)
}
