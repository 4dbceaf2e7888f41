package main

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Everything the node writes under its data directory (the Raft log, the
// state store, snapshots, blobs) is readable by its owner only.
func TestDataDirIsOwnerOnly(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	p := startReady(t, dataDir, "--snapshot-threshold", "2", "--snapshot-interval", "50ms")
	for i := range 5 {
		status, err := call(p.addr, "POST", "/v1/simulations/fund-balance",
			map[string]string{"amount": "10.00", "currency": "GHS", "externalReference": fmt.Sprintf("perm-%d", i)}, nil)
		if err != nil || status != 201 {
			t.Fatalf("fund: %d %v", status, err)
		}
	}
	// Wait for a snapshot, whose files hashicorp/raft creates itself.
	waitUntil(t, 10*time.Second, "a snapshot taken", func() bool {
		m, _ := filepath.Glob(filepath.Join(dataDir, "snapshots", "*", "meta.json"))
		return len(m) > 0
	})
	var open []string
	files := 0
	filepath.WalkDir(dataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file removed while walking
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if !d.IsDir() {
			files++
		}
		if info.Mode().Perm()&0o077 != 0 {
			open = append(open, fmt.Sprintf("%s %v", path, info.Mode().Perm()))
		}
		return nil
	})
	if files == 0 {
		t.Fatal("no files in the data directory")
	}
	if len(open) > 0 {
		t.Fatalf("readable by others:\n%s", strings.Join(open, "\n"))
	}
}
