package blob

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"payments/ledger/disputes"
)

// ErrNotFound is returned by Open for a blob the store does not hold.
var ErrNotFound = errors.New("blob: not found")

// ErrDigestMismatch is returned by PutVerified when the bytes do not hash to
// the expected name.
var ErrDigestMismatch = errors.New("blob: bytes do not match their digest")

// ErrTooLarge is returned by PutVerified for more bytes than allowed.
var ErrTooLarge = errors.New("blob: larger than allowed")

const tempPrefix = ".tmp-"

// dirMode is the mode of the store's directories; files are created 0600
// (os.CreateTemp) and keep it through the rename. Uploaded documents are
// the owner's only.
const dirMode os.FileMode = 0o700

// Store is a directory of blobs.
type Store struct {
	dir string
}

// Open opens (creating it) the store in dir and removes temporary files a
// crash left behind.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return &Store{dir: dir}, nil
}

// Digest returns the name of data: its SHA-256 in lower-case hex.
func Digest(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// ValidDigest reports whether s can name a blob: the digest a dispute
// file's record holds (disputes.ValidDigest).
func ValidDigest(s string) bool { return disputes.ValidDigest(s) }

func (s *Store) path(digest string) string {
	return filepath.Join(s.dir, digest[:2], digest)
}

// Has reports whether the store holds the blob.
func (s *Store) Has(digest string) bool {
	if !ValidDigest(digest) {
		return false
	}
	_, err := os.Stat(s.path(digest))
	return err == nil
}

// Put stores data durably and returns its digest.
func (s *Store) Put(data []byte) (string, error) {
	digest := Digest(data)
	if s.Has(digest) {
		return digest, nil
	}
	return digest, s.write(digest, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// PutVerified stores at most sizeMax bytes read from r under digest, and
// only if they hash to it: what a peer sends is checked, not trusted.
func (s *Store) PutVerified(digest string, r io.Reader, sizeMax int64) error {
	if !ValidDigest(digest) {
		return ErrDigestMismatch
	}
	if s.Has(digest) {
		_, err := io.Copy(io.Discard, io.LimitReader(r, sizeMax+1))
		return err
	}
	return s.write(digest, func(w io.Writer) error {
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(r, sizeMax+1))
		switch {
		case err != nil:
			return err
		case n > sizeMax:
			return ErrTooLarge
		case hex.EncodeToString(h.Sum(nil)) != digest:
			return ErrDigestMismatch
		}
		return nil
	})
}

// write writes a temporary file with fill, syncs it, and renames it to the
// blob's name; on any error nothing is left behind.
func (s *Store) write(digest string, fill func(io.Writer) error) error {
	sub := filepath.Join(s.dir, digest[:2])
	if err := os.MkdirAll(sub, dirMode); err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	f, err := os.CreateTemp(s.dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	if err := os.Rename(tmp, s.path(digest)); err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	ok = true
	if err := syncDir(sub); err != nil {
		return err
	}
	return syncDir(s.dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("blob: sync %s: %w", dir, err)
	}
	return nil
}

// Open returns the blob for reading and its size. The caller closes it.
func (s *Store) Open(digest string) (*os.File, int64, error) {
	if !ValidDigest(digest) {
		return nil, 0, ErrNotFound
	}
	f, err := os.Open(s.path(digest))
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("blob: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("blob: %w", err)
	}
	return f, st.Size(), nil
}

// Sweep removes the blobs that keep refuses and that were last written
// before cutoff, and returns how many it removed. A blob is written before
// its file record commits (on the uploading node and on the peers it is
// pushed to), so a blob without a record is either an upload in progress
// or one whose record never committed; cutoff, well before now, spares the
// former.
func (s *Store) Sweep(keep func(digest string) bool, cutoff time.Time) (int, error) {
	shards, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, fmt.Errorf("blob: %w", err)
	}
	removed := 0
	for _, shard := range shards {
		if !shard.IsDir() || len(shard.Name()) != 2 {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(s.dir, shard.Name()))
		if err != nil {
			return removed, fmt.Errorf("blob: %w", err)
		}
		for _, e := range entries {
			digest := e.Name()
			if !ValidDigest(digest) || digest[:2] != shard.Name() || keep(digest) {
				continue
			}
			info, err := e.Info()
			if err != nil || !info.ModTime().Before(cutoff) {
				continue
			}
			if err := os.Remove(s.path(digest)); err != nil && !os.IsNotExist(err) {
				return removed, fmt.Errorf("blob: %w", err)
			}
			removed++
		}
	}
	return removed, nil
}
