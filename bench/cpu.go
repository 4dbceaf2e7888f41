package bench

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// ReadCPU returns the CPU time process pid has used so far, user and
// system, all its threads, from fields 14 and 15 of /proc/<pid>/stat
// (Linux only). On a machine the load generator shares, or that others
// load, the server's CPU time per request moves far less from run to run
// than its throughput does.
func ReadCPU(pid int) (time.Duration, error) {
	return readProcFile(pid, "stat", "cpu", parseStatCPU)
}

// readProcFile parses /proc/<pid>/<file> with parse; its errors say what
// was read (what) and of which process.
func readProcFile[T any](pid int, file, what string, parse func([]byte) (T, error)) (T, error) {
	var v T
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + file)
	if err == nil {
		v, err = parse(b)
	}
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s of process %d: %w", what, pid, err)
	}
	return v, nil
}

// clockTicksPerSecond is the unit of /proc's times (USER_HZ): 100 on
// every Linux architecture Go runs on.
const clockTicksPerSecond = 100

// parseStatCPU reads utime and stime from a /proc/<pid>/stat line. The
// command name (field 2) is in parentheses and may hold spaces and
// parentheses itself, so fields are counted after the last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("stat line without a command name")
	}
	f := bytes.Fields(stat[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("stat line of %d fields, want at least 15", len(f)+2)
	}
	var ticks uint64
	for _, v := range f[11:13] { // fields 14 and 15
		n, err := strconv.ParseUint(string(v), 10, 63)
		if err != nil {
			return 0, fmt.Errorf("stat field %q: want a number of clock ticks", v)
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / clockTicksPerSecond), nil
}
