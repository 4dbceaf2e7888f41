package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Set stores value under key with one fsync. hashicorp/raft keeps its current
// term and its vote here: losing either after a crash could make a node vote
// twice in one term.
func (s *Store) Set(key, value []byte) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	n, err := stableRecordLen(key, value)
	if err != nil {
		return fmt.Errorf("wal: set %q: %w", key, err)
	}
	b := s.db.NewBatchWithSize(1 + len(key) + n + 16)
	defer b.Close()
	op := b.SetDeferred(1+len(key), n)
	op.Key[0] = prefixStable
	copy(op.Key[1:], key)
	encodeStableRecord(op.Value, key, value)
	if err := op.Finish(); err != nil {
		return fmt.Errorf("wal: set %q: %w", key, err)
	}
	if err := s.commit(b); err != nil {
		return fmt.Errorf("wal: set %q: %w", key, err)
	}
	return nil
}

// Get returns a copy of the value stored under key. For a missing key the
// error's text is exactly "not found", which is how hashicorp/raft recognises
// it. A record that fails its checksum returns an error wrapping ErrCorrupt
// and fails the store.
func (s *Store) Get(key []byte) (value []byte, err error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	defer s.recoverFatal(&err)
	v, closer, err := s.db.Get(stableKey(key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, s.readError(fmt.Sprintf("get %q", key), err)
	}
	defer closer.Close()
	got, value, err := decodeStableRecord(v)
	if err != nil {
		return nil, s.fail(fmt.Errorf("%w: stable key %q: %w", ErrCorrupt, key, err))
	}
	if !bytes.Equal(got, key) {
		return nil, s.fail(fmt.Errorf("%w: stable key %q: record holds key %q", ErrCorrupt, key, got))
	}
	return bytes.Clone(value), nil
}

// SetUint64 stores v under key as 8 big-endian bytes, with one fsync.
func (s *Store) SetUint64(key []byte, v uint64) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], v)
	return s.Set(key, buf[:])
}

// GetUint64 returns the number SetUint64 stored under key. A missing key gives
// the "not found" error of Get.
func (s *Store) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("wal: get uint64 %q: value is %d bytes, not 8", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}
