package main

import (
	"bufio"
	"crypto/sha256"
	byteorder "encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	nethttp "net/http"
	"os"
	"path/filepath"
	"time"

	"payments/http/blob"
	"payments/ledger/disputes"
	"payments/raft"
)

// backupCommand runs `payments backup --to <file>`: an online backup of a
// running node through its admin API (its state and the uploaded files the
// state records), written to a temporary file, checked whole (checkBackup),
// synced and renamed into place.
func backupCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	to := fs.String("to", "", "the backup file to write")
	addr, tokenFile := adminClientFlags(fs, "the admin API of the node to back up")
	if err := applyEnv(fs); err != nil {
		fmt.Fprintln(stderr, "payments backup:", err)
		return 2
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *to == "" || *tokenFile == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: payments backup --to <file> --admin-addr host:port --admin-token-file <file>")
		return 2
	}
	if err := backup(*to, *addr, *tokenFile, stdout); err != nil {
		fmt.Fprintln(stderr, "payments backup:", err)
		return 1
	}
	return 0
}

func backup(to, addr, tokenFile string, stdout io.Writer) error {
	token, err := readAdminToken(tokenFile)
	if err != nil {
		return err
	}
	req, err := nethttp.NewRequest("GET", "http://"+addr+"/v1/backup", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&nethttp.Client{Timeout: time.Hour}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	tmp, err := os.CreateTemp(filepath.Dir(to), filepath.Base(to)+".partial-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	sum := sha256.New()
	size, err := io.Copy(io.MultiWriter(tmp, sum), resp.Body)
	if err != nil {
		return fmt.Errorf("the node stopped sending the backup before its end (its log says why): %w", err)
	}
	layout, err := checkBackup(tmp)
	if err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), to); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backup=%s\napplied_index=%d\nfiles=%d\nbytes=%d\nsha256=%s\n", to, layout.applied, layout.files, size, hex.EncodeToString(sum.Sum(nil)))
	return nil
}

// Backup file format, version 2: what GET /v1/backup sends, `payments
// backup` writes and `payments restore` reads. Every part carries its own
// check, so a damaged file is refused before anything is restored.
//
//	magic    "PAYBACKUP"                          9 bytes
//	version  2                                    1 byte
//	applied  the state's applied index            8 bytes, big-endian
//	files    how many blobs follow                8 bytes, big-endian
//	crc      CRC-32C of the 26 bytes above        4 bytes, big-endian
//	blobs    each: its SHA-256 (32 bytes), its size (8 bytes, big-endian),
//	         its bytes; one per file the state records, in digest order
//	state    the state's dump at the same applied index (package wal's
//	         dump format: "PAYSTATE", its version, the applied index, every
//	         record, its own CRC-32C), to the end of the file
//
// The blobs come first because the file records to include are read from
// the same pinned view of the state as the dump, before it is written.
// Version 1 was the dump alone (a file that starts with "PAYSTATE"):
// restore still reads it, and restores no files.
const (
	backupMagic   = "PAYBACKUP"
	backupVersion = 2
	backupHeadLen = len(backupMagic) + 1 + 8 + 8
	dumpMagic     = "PAYSTATE"
	dumpHeadLen   = len(dumpMagic) + 1 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// writeBackup writes a backup of view to w, the bytes of each file it
// records read through openBlob, and returns the number of files.
func writeBackup(w io.Writer, view *raft.BackupView, openBlob func(digest string) (io.ReadCloser, int64, error)) (files int, size int64, err error) {
	digests := view.FileDigests()
	head := make([]byte, backupHeadLen, backupHeadLen+4)
	copy(head, backupMagic)
	head[len(backupMagic)] = backupVersion
	byteorder.BigEndian.PutUint64(head[len(backupMagic)+1:], view.Applied())
	byteorder.BigEndian.PutUint64(head[len(backupMagic)+9:], uint64(len(digests)))
	head = byteorder.BigEndian.AppendUint32(head, crc32.Checksum(head, castagnoli))
	if _, err := w.Write(head); err != nil {
		return 0, 0, err
	}
	size = int64(len(head))
	for _, digest := range digests {
		n, err := writeBackupBlob(w, digest, openBlob)
		size += n
		if err != nil {
			return 0, size, err
		}
	}
	n, err := view.WriteDump(w)
	return len(digests), size + n, err
}

func writeBackupBlob(w io.Writer, digest string, openBlob func(string) (io.ReadCloser, int64, error)) (int64, error) {
	sum, err := hex.DecodeString(digest)
	if err != nil || len(sum) != sha256.Size {
		return 0, fmt.Errorf("file digest %q is not a SHA-256", digest)
	}
	r, blobSize, err := openBlob(digest)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	if _, err := w.Write(byteorder.BigEndian.AppendUint64(sum, uint64(blobSize))); err != nil {
		return 0, err
	}
	n, err := io.Copy(w, io.LimitReader(r, blobSize))
	if err == nil && n != blobSize {
		err = fmt.Errorf("file %s: read %d of its %d bytes", digest, n, blobSize)
	}
	return sha256.Size + 8 + n, err
}

// backupLayout is where a verified backup's parts are.
type backupLayout struct {
	applied    uint64
	files      int
	blobsAt    int64 // offset of the first blob
	dumpAt     int64 // offset of the state's dump
	legacyDump bool  // version 1: the dump alone
}

// checkBackup reads the whole backup and verifies every part: the header's
// CRC-32C, each file's bytes against its SHA-256, and the state dump's
// frame and CRC-32C. Its errors say what is wrong in words an operator
// can act on.
func checkBackup(f *os.File) (backupLayout, error) {
	damaged := func(format string, a ...any) (backupLayout, error) {
		return backupLayout{}, fmt.Errorf("the backup %s is damaged and was not restored: %s", f.Name(), fmt.Sprintf(format, a...))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return backupLayout{}, err
	}
	r := bufio.NewReaderSize(f, 256<<10)
	lead, err := r.Peek(len(dumpMagic))
	if err != nil {
		return damaged("it is cut short")
	}
	if string(lead) == dumpMagic {
		applied, err := checkDump(f, 0)
		return backupLayout{applied: applied, legacyDump: true}, err
	}
	head := make([]byte, backupHeadLen+4)
	if _, err := io.ReadFull(r, head); err != nil {
		return damaged("it is cut short")
	}
	if string(head[:len(backupMagic)]) != backupMagic {
		return backupLayout{}, fmt.Errorf("%s is not a backup of a payments node", f.Name())
	}
	if v := head[len(backupMagic)]; v != backupVersion {
		return backupLayout{}, fmt.Errorf("%s is a backup of format version %d; this binary reads versions 1 and %d", f.Name(), v, backupVersion)
	}
	if crc32.Checksum(head[:backupHeadLen], castagnoli) != byteorder.BigEndian.Uint32(head[backupHeadLen:]) {
		return damaged("its header's checksum does not match")
	}
	l := backupLayout{
		applied: byteorder.BigEndian.Uint64(head[len(backupMagic)+1:]),
		blobsAt: int64(len(head)),
	}
	files := byteorder.BigEndian.Uint64(head[len(backupMagic)+9:])
	at := l.blobsAt
	prev := ""
	for i := uint64(0); i < files; i++ {
		var entry [sha256.Size + 8]byte
		if _, err := io.ReadFull(r, entry[:]); err != nil {
			return damaged("it is cut short in file %d of %d", i+1, files)
		}
		digest := hex.EncodeToString(entry[:sha256.Size])
		size := int64(byteorder.BigEndian.Uint64(entry[sha256.Size:]))
		if digest <= prev {
			return damaged("file %d of %d is out of order", i+1, files)
		}
		if size < 0 || size > disputes.FileSizeMaxBytes {
			return damaged("file %s claims %d bytes", digest, size)
		}
		h := sha256.New()
		if n, err := io.Copy(h, io.LimitReader(r, size)); err != nil || n != size {
			return damaged("it is cut short in file %s", digest)
		}
		if hex.EncodeToString(h.Sum(nil)) != digest {
			return damaged("the bytes of file %s do not match its SHA-256", digest)
		}
		prev = digest
		at += int64(len(entry)) + size
	}
	l.files = int(files)
	l.dumpAt = at
	applied, err := checkDump(f, at)
	if err != nil {
		return backupLayout{}, err
	}
	if applied != l.applied {
		return damaged("its state is at index %d, its header says %d", applied, l.applied)
	}
	return l, nil
}

// checkDump verifies the state dump that starts at offset at and runs to
// the end of f: its magic, and the CRC-32C of every byte before the last
// four against them. It returns the dump's applied index.
func checkDump(f *os.File, at int64) (uint64, error) {
	damaged := func(what string) (uint64, error) {
		return 0, fmt.Errorf("the backup %s is damaged and was not restored: %s", f.Name(), what)
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if st.Size()-at < int64(dumpHeadLen)+1+4 {
		return damaged("its state is cut short")
	}
	if _, err := f.Seek(at, io.SeekStart); err != nil {
		return 0, err
	}
	r := bufio.NewReaderSize(f, 256<<10)
	head := make([]byte, dumpHeadLen)
	if _, err := io.ReadFull(r, head); err != nil {
		return 0, err
	}
	if string(head[:len(dumpMagic)]) != dumpMagic {
		if at == 0 {
			return 0, fmt.Errorf("%s is not a backup of a payments node", f.Name())
		}
		return damaged("its state does not start where the files end")
	}
	crc := crc32.New(castagnoli)
	crc.Write(head)
	if _, err := io.CopyN(crc, r, st.Size()-at-int64(dumpHeadLen)-4); err != nil {
		return 0, err
	}
	var want [4]byte
	if _, err := io.ReadFull(r, want[:]); err != nil {
		return 0, err
	}
	if crc.Sum32() != byteorder.BigEndian.Uint32(want[:]) {
		return damaged("its state's checksum does not match (damaged or cut short)")
	}
	return byteorder.BigEndian.Uint64(head[len(dumpMagic)+1:]), nil
}

// restoreBlobs copies a verified backup's files into the blob store in
// dir, each checked again against its digest as it is written.
func restoreBlobs(f *os.File, l backupLayout, dir string) error {
	store, err := blob.Open(dir)
	if err != nil {
		return err
	}
	if _, err := f.Seek(l.blobsAt, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 256<<10)
	for i := 0; i < l.files; i++ {
		var entry [sha256.Size + 8]byte
		if _, err := io.ReadFull(r, entry[:]); err != nil {
			return err
		}
		digest := hex.EncodeToString(entry[:sha256.Size])
		size := int64(byteorder.BigEndian.Uint64(entry[sha256.Size:]))
		if err := store.PutVerified(digest, io.LimitReader(r, size), disputes.FileSizeMaxBytes); err != nil {
			return fmt.Errorf("file %s: %w", digest, err)
		}
	}
	return nil
}

// restoreCommand runs `payments restore --from <file> --data-dir <dir>`.
func restoreCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	from := fs.String("from", "", "the backup file")
	dataDir := fs.String("data-dir", "", "the new node's data directory (empty or absent)")
	nodeID := fs.String("node-id", "n1", "the new node's name")
	raftAddr := fs.String("raft-addr", "127.0.0.1:7000", "a single node: the Raft address it will listen on")
	peers := fs.String("peers", "", "a new cluster: every node, as in serve --peers (restore each node's directory from the same backup)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *from == "" || *dataDir == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: payments restore --from <file> --data-dir <dir> [--node-id n1] [--raft-addr host:port | --peers …]")
		return 2
	}
	err := func() error {
		ps, _, err := parsePeers(*peers)
		if err != nil {
			return err
		}
		f, err := os.Open(*from)
		if err != nil {
			return err
		}
		defer f.Close()
		layout, err := checkBackup(f)
		if err != nil {
			return err
		}
		if _, err := f.Seek(layout.dumpAt, io.SeekStart); err != nil {
			return err
		}
		applied, err := raft.RestoreBackup(*dataDir, f, *nodeID, *raftAddr, ps)
		if err != nil {
			return err
		}
		if err := restoreBlobs(f, layout, blobsDir(*dataDir)); err != nil {
			return fmt.Errorf("restoring the files into %s (remove the directory before trying again): %w", *dataDir, err)
		}
		fmt.Fprintf(stdout, "restored=%s\napplied_index=%d\nfiles=%d\n", *dataDir, applied, layout.files)
		return nil
	}()
	if err != nil {
		fmt.Fprintln(stderr, "payments restore:", err)
		return 1
	}
	return 0
}
