package wal

import (
	"io"
	"os"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Modes of the files and directories a store creates on disk: the owner
// only. The log and the state store hold every organization's records and
// the hashes of its keys.
const (
	dirMode  os.FileMode = 0o700
	fileMode os.FileMode = 0o600
)

// ownerOnlyFS is the operating system's file system as Pebble sees it, but
// what Pebble creates is readable by the owner only: Pebble creates files
// with mode 0666 and directories with 0755 (less the umask).
type ownerOnlyFS struct{ vfs.FS }

// defaultFS is the file system a store uses when Options.FS is nil.
func defaultFS() vfs.FS { return ownerOnlyFS{vfs.Default} }

func (fs ownerOnlyFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return f, fs.restrict(f, err, name, fileMode)
}

func (fs ownerOnlyFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return f, fs.restrict(f, err, newname, fileMode)
}

func (fs ownerOnlyFS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	return f, fs.restrict(f, err, name, fileMode)
}

// MkdirAll creates missing directories with dirMode; it leaves the mode of
// an existing one alone.
func (fs ownerOnlyFS) MkdirAll(dir string, _ os.FileMode) error { return fs.FS.MkdirAll(dir, dirMode) }

// restrict sets the mode of a file just opened; on failure it closes it.
func (fs ownerOnlyFS) restrict(f vfs.File, err error, name string, mode os.FileMode) error {
	if err != nil {
		return err
	}
	if err := os.Chmod(name, mode); err != nil {
		f.Close()
		return err
	}
	return nil
}

// Unwrap returns the file system underneath (vfs.Root).
func (fs ownerOnlyFS) Unwrap() vfs.FS { return fs.FS }

func (fs ownerOnlyFS) Lock(name string) (io.Closer, error) {
	c, err := fs.FS.Lock(name)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(name, fileMode); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
