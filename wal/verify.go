package wal

import (
	"bytes"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// verify reads every record, checks it, and sets the log's bounds. Open calls
// it before the store is shared.
func (s *Store) verify() error {
	b, err := s.verifyLog()
	if err != nil {
		return err
	}
	if err := s.verifyStable(); err != nil {
		return err
	}
	if f := s.failure.Load(); f != nil {
		return *f
	}
	s.bounds.Store(&b)
	return nil
}

// verifyLog checks every log record's checksum, that its key names its index,
// and that the indexes are contiguous.
func (s *Store) verifyLog() (b logBounds, err error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixLog}, UpperBound: logKeyEnd})
	if err != nil {
		return b, err
	}
	defer func() {
		if cerr := it.Close(); err == nil && cerr != nil {
			err = classify("close log iterator", cerr)
		}
	}()
	for valid := it.First(); valid; valid = it.Next() {
		index, ok := parseLogKey(it.Key())
		if !ok {
			return b, fmt.Errorf("%w: malformed log key %x", ErrCorrupt, it.Key())
		}
		v, err := it.ValueAndErr()
		if err != nil {
			return b, classify(fmt.Sprintf("read log %d", index), err)
		}
		rec, err := parseLogRecord(v)
		if err != nil {
			return b, fmt.Errorf("%w: log %d: %w", ErrCorrupt, index, err)
		}
		if rec.index != index {
			return b, fmt.Errorf("%w: log %d: record holds index %d", ErrCorrupt, index, rec.index)
		}
		if b.nonEmpty && index != b.last+1 {
			return b, fmt.Errorf("%w: log not contiguous: %d follows %d", ErrCorrupt, index, b.last)
		}
		if !b.nonEmpty {
			b = logBounds{first: index, nonEmpty: true}
		}
		b.last = index
	}
	if err := it.Error(); err != nil {
		return b, classify("iterate log", err)
	}
	return b, nil
}

// verifyStable checks every stable record's checksum and that it holds the key
// it is stored under.
func (s *Store) verifyStable() (err error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixStable}, UpperBound: []byte{prefixStable + 1}})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := it.Close(); err == nil && cerr != nil {
			err = classify("close stable iterator", cerr)
		}
	}()
	for valid := it.First(); valid; valid = it.Next() {
		key := it.Key()[1:]
		v, err := it.ValueAndErr()
		if err != nil {
			return classify(fmt.Sprintf("read stable key %q", key), err)
		}
		got, _, err := decodeStableRecord(v)
		if err != nil {
			return fmt.Errorf("%w: stable key %q: %w", ErrCorrupt, key, err)
		}
		if !bytes.Equal(got, key) {
			return fmt.Errorf("%w: stable key %q: record holds key %q", ErrCorrupt, key, got)
		}
	}
	if err := it.Error(); err != nil {
		return classify("iterate stable keys", err)
	}
	return nil
}

// classify marks Pebble's corruption errors with ErrCorrupt.
func classify(what string, err error) error {
	if pebble.IsCorruptionError(err) {
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
