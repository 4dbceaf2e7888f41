package bench

import (
	"os"
	"testing"
)

// statusSample is the head of a /proc/<pid>/status file (Linux 6.x).
const statusSample = `Name:	payments
Umask:	0022
State:	S (sleeping)
Tgid:	4242
Pid:	4242
VmPeak:	 2345676 kB
VmSize:	 2345676 kB
VmLck:	       0 kB
VmHWM:	  101200 kB
VmRSS:	   85244 kB
RssAnon:	   61234 kB
RssFile:	   24010 kB
Threads:	12
`

func TestParseVmRSS(t *testing.T) {
	testParse(t, parseVmRSS, []parseCase[uint64]{
		{"sample", statusSample, 85244 << 10, ""},
		{"last line without newline", "Name:\tx\nVmRSS:\t12 kB", 12 << 10, ""},
		{"zero", "VmRSS:\t0 kB\n", 0, ""},
		{"kernel thread", "Name:\tkthreadd\nState:\tS (sleeping)\n", 0, "no VmRSS line"},
		{"empty", "", 0, "no VmRSS line"},
		{"not a number", "VmRSS:\tlots kB\n", 0, "want a number of kB"},
		{"other unit", "VmRSS:\t12 MB\n", 0, "want a number of kB"},
		{"no unit", "VmRSS:\t12\n", 0, "want a number of kB"},
		{"too large", "VmRSS:\t99999999999999999999 kB\n", 0, "want a number of kB"},
	})
}

func TestReadRSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	if n, err := ReadRSS(os.Getpid()); err != nil || n < 1<<20 {
		t.Errorf("this process's RSS: %d bytes, %v", n, err)
	}
	// Pid 0 is never a process of /proc.
	if _, err := ReadRSS(0); err == nil {
		t.Error("RSS of pid 0: no error")
	}
}
