package kv

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// The state store, as the ledger sees it: an ordered key-value store that
// holds every record, open or closed, and the indexes the reads need. The
// FSM owns it (package raft wires it to package wal); the ledger decides
// what goes in it and reads it through these interfaces, so it stays free
// of I/O of its own. The layout of the keys is in ledger/doc.go.

// Reader reads the committed state store. Implementations must be safe for
// concurrent use; a read sees whole applied batches, never part of one.
type Reader interface {
	// Get calls fn with the value stored at key and reports whether there
	// was one. The value is valid only during fn.
	Get(key []byte, fn func(value []byte)) (bool, error)
	// NewIter returns an iterator over the keys in [lower, upper). It sees
	// the store as it was when it was created; Close it promptly.
	NewIter(lower, upper []byte) (Iterator, error)
}

// Iterator walks keys in order. Its methods have the meaning of Pebble's.
type Iterator interface {
	First() bool
	Last() bool
	Next() bool
	Prev() bool
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	Valid() bool
	Key() []byte
	Value() []byte
	Error() error
	Close() error
}

// Writer takes the writes of one applied batch; the FSM commits them
// atomically, with the index of the batch's last log entry.
type Writer interface {
	Set(key, value []byte) error
	// SingleDelete deletes a key that was set exactly once since it was
	// last deleted (the open-set and filter entries): the cheapest delete
	// in an LSM, since the set and the delete cancel at the next flush.
	SingleDelete(key []byte) error
}

// StoreError is the panic value of a failed read or write of the state
// store. Apply cannot go on without its state, so a failure there stops
// the node; readers recover it into a 500 (see package http), and work of
// the node's own that reads while the node shuts down stops quietly on
// ErrClosed.
type StoreError struct{ Err error }

// ErrClosed is the cause of a StoreError raised by a read made after
// the node closed its state store: the node is shutting down.
var ErrClosed = errors.New("ledger: state store closed")

func (e StoreError) Error() string { return "ledger: state store: " + e.Err.Error() }
func (e StoreError) Unwrap() error { return e.Err }

// Must panics with a StoreError when err is set.
func Must(err error) {
	if err != nil {
		panic(StoreError{err})
	}
}

// RecoverStoreError turns a StoreError panic in the calling goroutine into
// *err, for the functions that return the store's failure rather than
// raise it; other panics go on. Defer it directly.
func RecoverStoreError(err *error) {
	r := recover()
	if r == nil {
		return
	}
	se, ok := r.(StoreError)
	if !ok {
		panic(r)
	}
	*err = se
}

// Key builds keys: a tag, then fixed-width integers and length-prefixed
// strings, so that a key's components never run into each other and a
// prefix of components is a prefix of the key.
type Key []byte

func NewKey(tag ...byte) Key {
	k := make(Key, 0, 48)
	return append(k, tag...)
}

func (k Key) Str(s string) Key {
	k = binary.AppendUvarint(k, uint64(len(s)))
	return append(k, s...)
}

func (k Key) U64(v uint64) Key { return binary.BigEndian.AppendUint64(k, v) }

// Ref appends an organization's reference as str(refKey(org, Ref)) does,
// without joining the strings first.
func (k Key) Ref(org, ref string) Key {
	if ref == "" {
		return k.Str("")
	}
	k = binary.AppendUvarint(k, uint64(len(org)+1+len(ref)))
	k = append(k, org...)
	k = append(k, 0)
	return append(k, ref...)
}

// PrefixEnd returns the first key after every key that starts with p.
func PrefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}

// TrailingSeq reads the big-endian sequence number that ends an index key.
func TrailingSeq(key []byte) uint64 {
	if len(key) < 8 {
		panic(fmt.Sprintf("ledger: index key %x has no sequence number", key))
	}
	return binary.BigEndian.Uint64(key[len(key)-8:])
}

// GetRecord reads the value at key and decodes it with dec. A value that
// does not decode was written by this ledger and damaged since: a
// StoreError.
func GetRecord[V any](kv Reader, key []byte, dec func(*Decoder) V) (V, bool) {
	var v V
	var derr error
	ok, err := kv.Get(key, func(b []byte) {
		d := Decoder{buf: b}
		v = dec(&d)
		if d.err == nil && len(d.buf) != 0 {
			d.err = errors.New("trailing bytes")
		}
		derr = d.err
	})
	Must(err)
	if derr != nil {
		Must(fmt.Errorf("record at %q: %w", key, derr))
	}
	return v, ok
}

// Scan calls fn for each key in [lower, upper), in order or in reverse, until
// fn returns false.
func Scan(kv Reader, lower, upper []byte, reverse bool, fn func(key, value []byte) bool) {
	it, err := kv.NewIter(lower, upper)
	Must(err)
	defer it.Close()
	var ok bool
	if reverse {
		ok = it.Last()
	} else {
		ok = it.First()
	}
	for ; ok; ok = step(it, reverse) {
		if !fn(it.Key(), it.Value()) {
			break
		}
	}
	Must(it.Error())
}

func step(it Iterator, reverse bool) bool {
	if reverse {
		return it.Prev()
	}
	return it.Next()
}

// SortedWriter gathers one flush's writes and hands them on in key order.
// Pebble inserts a batch into its memtable in the batch's order, starting
// each search from where the previous key went in, so keys that land near
// each other (new records, list entries and pages go in at the end of
// their ranges) cost a short walk instead of a search from the top of the
// skiplist. On BenchmarkSustainedPayouts (100 payouts a batch) it measured
// a few per cent less CPU per payout, the sort included: a small gain, at
// the edge of the run-to-run noise. Writes of one key keep their order.
type SortedWriter struct {
	buf []byte
	ops []sortedOp
}

type sortedOp struct {
	at, keyLen, valLen uint32 // the key at buf[at:], the value after it
	del                bool   // a SingleDelete
}

func (s *SortedWriter) key(op sortedOp) []byte { return s.buf[op.at : op.at+op.keyLen] }

func (s *SortedWriter) Set(key, value []byte) error {
	s.ops = append(s.ops, sortedOp{at: uint32(len(s.buf)), keyLen: uint32(len(key)), valLen: uint32(len(value))})
	s.buf = append(append(s.buf, key...), value...)
	return nil
}

// SetString is Set with a value held as a string (a record id).
func (s *SortedWriter) SetString(key []byte, value string) {
	s.ops = append(s.ops, sortedOp{at: uint32(len(s.buf)), keyLen: uint32(len(key)), valLen: uint32(len(value))})
	s.buf = append(append(s.buf, key...), value...)
}

func (s *SortedWriter) SingleDelete(key []byte) error {
	s.ops = append(s.ops, sortedOp{at: uint32(len(s.buf)), keyLen: uint32(len(key)), del: true})
	s.buf = append(s.buf, key...)
	return nil
}

// WriteTo sorts the writes, passes them to w and empties s.
func (s *SortedWriter) WriteTo(w Writer) {
	slices.SortFunc(s.ops, func(a, b sortedOp) int {
		if c := bytes.Compare(s.key(a), s.key(b)); c != 0 {
			return c
		}
		return cmp.Compare(a.at, b.at) // buf only grows: at is the order written
	})
	for _, op := range s.ops {
		k := s.key(op)
		if op.del {
			Must(w.SingleDelete(k))
		} else {
			end := op.at + op.keyLen
			Must(w.Set(k, s.buf[end:end+op.valLen]))
		}
	}
	s.ops = s.ops[:0]
	if cap(s.buf) > 64<<20 { // one huge batch does not pin its buffer
		s.buf = nil
	}
	s.buf = s.buf[:0]
}

// Grouper gathers values under string keys, keys in the order first seen,
// and keeps its memory from one use to the next (flushes group a batch's
// journal entries by account and its events by organization).
type Grouper[T any] struct {
	index  map[string]int
	keys   []string
	groups [][]T // groups[i] belongs to keys[i]; those past len(keys) are spare
}

func (g *Grouper[T]) Add(key string, v T) {
	i, ok := g.index[key]
	if !ok {
		if g.index == nil {
			g.index = make(map[string]int)
		}
		i = len(g.keys)
		g.index[key] = i
		g.keys = append(g.keys, key)
		if i == len(g.groups) {
			g.groups = append(g.groups, nil)
		}
		g.groups[i] = g.groups[i][:0]
	}
	g.groups[i] = append(g.groups[i], v)
}

// Keys are the keys added since the last Reset, in the order first seen.
func (g *Grouper[T]) Keys() []string { return g.keys }

// Group is what was added under Keys()[i], in the order added.
func (g *Grouper[T]) Group(i int) []T { return g.groups[i] }

// Reset empties g, keeping its memory, but for what one large use grew.
func (g *Grouper[T]) Reset() {
	if len(g.keys) > grouperKeysMax {
		*g = Grouper[T]{}
		return
	}
	for i := range g.keys {
		clear(g.groups[i])
	}
	clear(g.index)
	clear(g.keys)
	g.keys = g.keys[:0]
}

// grouperKeysMax bounds the groups a grouper keeps memory for.
const grouperKeysMax = 4096

// IterStore is what ReaderOf adapts: a store whose iterators are of a concrete
// type, as package wal's state store, its snapshots and its point readers.
type IterStore[I Iterator] interface {
	Get(key []byte, fn func(value []byte)) (bool, error)
	NewIter(lower, upper []byte) (I, error)
}

// ReaderOf returns s as the Reader Apply and the readers read: the same
// methods, with NewIter's iterator as an Iterator.
func ReaderOf[I Iterator](s IterStore[I]) Reader { return storeReader[I]{s} }

type storeReader[I Iterator] struct{ s IterStore[I] }

func (kv storeReader[I]) Get(key []byte, fn func([]byte)) (bool, error) { return kv.s.Get(key, fn) }

func (kv storeReader[I]) NewIter(lower, upper []byte) (Iterator, error) {
	it, err := kv.s.NewIter(lower, upper)
	if err != nil {
		return nil, err // not it: a nil *T in an Iterator is not a nil Iterator
	}
	return it, nil
}
