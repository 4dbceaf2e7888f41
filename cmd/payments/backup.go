package main

import (
	"crypto/sha256"
	byteorder "encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	nethttp "net/http"
	"os"
	"path/filepath"
	"time"

	"payments/raft"
)

// backupCommand runs `payments backup --to <file>`: an online backup of a
// running node through its admin API, written to a temporary file, checked
// (the dump's CRC-32C), synced and renamed into place.
func backupCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	to := fs.String("to", "", "the backup file to write")
	addr := fs.String("admin-addr", "127.0.0.1:9400", "the admin API of the node to back up")
	tokenFile := fs.String("admin-token-file", "", "file holding the operator token")
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
		return fmt.Errorf("reading the backup: %w", err)
	}
	applied, err := checkDump(tmp)
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
	fmt.Fprintf(stdout, "backup=%s\napplied_index=%d\nbytes=%d\nsha256=%s\n", to, applied, size, hex.EncodeToString(sum.Sum(nil)))
	return nil
}

// checkDump verifies a dump's frame: its magic, and the CRC-32C of every
// byte before the last four against them. It returns the applied index.
func checkDump(f *os.File) (uint64, error) {
	const magic, headLen = "PAYSTATE", 8 + 1 + 8
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if st.Size() < headLen+1+4 {
		return 0, errors.New("the backup is cut short")
	}
	head := make([]byte, headLen)
	if _, err := io.ReadFull(f, head); err != nil {
		return 0, err
	}
	if string(head[:8]) != magic {
		return 0, errors.New("not a backup of a payments node")
	}
	crc := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	crc.Write(head)
	if _, err := io.CopyN(crc, f, st.Size()-headLen-4); err != nil {
		return 0, err
	}
	var want [4]byte
	if _, err := io.ReadFull(f, want[:]); err != nil {
		return 0, err
	}
	if crc.Sum32() != byteorder.BigEndian.Uint32(want[:]) {
		return 0, errors.New("the backup's checksum does not match: it is damaged or cut short")
	}
	return byteorder.BigEndian.Uint64(head[9:]), nil
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
		if _, err := checkDump(f); err != nil {
			return err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		applied, err := raft.RestoreBackup(*dataDir, f, *nodeID, *raftAddr, ps)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "restored=%s\napplied_index=%d\n", *dataDir, applied)
		return nil
	}()
	if err != nil {
		fmt.Fprintln(stderr, "payments restore:", err)
		return 1
	}
	return 0
}
