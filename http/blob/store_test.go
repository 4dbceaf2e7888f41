package blob

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestPutOpenVerify(t *testing.T) {
	dir := t.TempDir()
	// A temporary file left by a crash is removed on open.
	if err := os.WriteFile(filepath.Join(dir, tempPrefix+"crash"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, tempPrefix+"crash")); !os.IsNotExist(err) {
		t.Fatal("temporary file survived Open")
	}
	data := []byte("%PDF-1.4 evidence")
	d, err := s.Put(data)
	if err != nil || d != Digest(data) || !s.Has(d) {
		t.Fatalf("Put = %q, %v", d, err)
	}
	if d2, err := s.Put(data); err != nil || d2 != d {
		t.Fatalf("second Put = %q, %v", d2, err)
	}
	f, size, err := s.Open(d)
	if err != nil || size != int64(len(data)) {
		t.Fatalf("Open: %v %d", err, size)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(got, data) {
		t.Fatal("read back different bytes")
	}

	other, _ := Open(t.TempDir())
	cases := []struct {
		name   string
		digest string
		body   []byte
		max    int64
		want   error
	}{
		{"wrong bytes", d, []byte("tampered"), 100, ErrDigestMismatch},
		{"too large", d, data, 4, ErrTooLarge},
		{"not a digest", "xyz", data, 100, ErrDigestMismatch},
	}
	for _, c := range cases {
		if err := other.PutVerified(c.digest, bytes.NewReader(c.body), c.max); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if other.Has(d) {
			t.Fatalf("%s: a refused blob was stored", c.name)
		}
	}
	left, _ := os.ReadDir(other.dir)
	for _, e := range left {
		if !e.IsDir() {
			t.Fatalf("left behind %s", e.Name())
		}
	}
	if err := other.PutVerified(d, bytes.NewReader(data), 100); err != nil || !other.Has(d) {
		t.Fatalf("PutVerified: %v", err)
	}
	if _, _, err := other.Open(Digest([]byte("absent"))); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open absent: %v", err)
	}
	if _, _, err := other.Open("../../etc/passwd"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Open of a path: %v", err)
	}
}

// Sweep removes only old blobs that keep refuses: a named blob stays
// however old, and a recent unnamed one (an upload in progress) stays.
func TestSweep(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	put := func(data string, age time.Duration) string {
		d, err := s.Put([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(s.path(d), old, old); err != nil {
			t.Fatal(err)
		}
		return d
	}
	named := put("named", 48*time.Hour)
	orphan := put("orphan", 2*time.Hour)
	recent := put("recent", time.Minute)
	n, err := s.Sweep(func(d string) bool { return d == named }, time.Now().Add(-time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("removed %d, %v; want 1", n, err)
	}
	if !s.Has(named) || s.Has(orphan) || !s.Has(recent) {
		t.Fatalf("after the sweep: named %v, orphan %v, recent %v", s.Has(named), s.Has(orphan), s.Has(recent))
	}
}

// Uploaded documents and their directories are the owner's only, whatever
// the umask.
func TestBlobsAreOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := filepath.Join(t.TempDir(), "blobs")
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d, err := s.Put([]byte("%PDF-1.4 passport scan"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, filepath.Join(dir, d[:2]), s.path(d)} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v", p, info.Mode().Perm())
		}
	}
}
