package bench

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// ReadRSS returns the resident memory of process pid, in bytes, from the
// VmRSS line of /proc/<pid>/status (Linux only). It fails when the process
// does not exist, cannot be read, or has no VmRSS line (a kernel thread or
// a zombie).
func ReadRSS(pid int) (uint64, error) {
	return readProcFile(pid, "status", "rss", parseVmRSS)
}

// parseVmRSS reads the VmRSS line ("VmRSS:	   85244 kB") of a
// /proc/<pid>/status file, in bytes.
func parseVmRSS(status []byte) (uint64, error) {
	for line := range bytes.Lines(status) {
		v, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(v)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("VmRSS line %q: want a number of kB", bytes.TrimSpace(line))
		}
		kb, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil || kb > 1<<53 {
			return 0, fmt.Errorf("VmRSS line %q: want a number of kB", bytes.TrimSpace(line))
		}
		return kb << 10, nil
	}
	return 0, errors.New("no VmRSS line")
}
