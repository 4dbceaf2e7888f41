package wal

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"
)

// assertOwnerOnly fails for anything under root that a group or others may
// read, write or enter.
func assertOwnerOnly(t *testing.T, root string) (files int) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v", path, info.Mode().Perm())
		}
		if !d.IsDir() {
			files++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// The log and the state store on the real file system create every file
// and directory for their owner only, whatever the process's umask.
func TestStoresAreOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask, which Pebble's 0666 and 0755 pass through
	t.Cleanup(func() { syscall.Umask(old) })
	dir := t.TempDir()
	s, err := Open(filepath.Join(dir, "wal"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustStore(t, s, entries(1, 10))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := OpenState(filepath.Join(dir, "state"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if n := assertOwnerOnly(t, filepath.Join(dir, "wal")) + assertOwnerOnly(t, filepath.Join(dir, "state")); n == 0 {
		t.Fatal("the stores created no files")
	}
}
