package bench

import (
	"os"
	"testing"
	"time"

	"payments/actors/actorstest/testkit"
)

func TestParseStatCPU(t *testing.T) {
	testParse(t, parseStatCPU, []parseCase[time.Duration]{
		{"sample", "4242 (payments) S 1 4242 4242 0 -1 4194560 5321 0 0 0 1234 567 0 0 20 0 12 0 100 2345676 21311 18446744073709551615\n", 1801 * 10 * time.Millisecond, ""},
		{"name with spaces and parentheses", "7 (a) b (c)) R 1 7 7 0 -1 0 0 0 0 0 10 20 0 0 20 0 1 0 5 0 0\n", 30 * 10 * time.Millisecond, ""},
		{"zero", "1 (x) S 0 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0", 0, ""},
		{"no name", "1 x S 0", 0, "without a command name"},
		{"short", "1 (x) S 0 1 1", 0, "want at least 15"},
		{"not a number", "1 (x) S 0 1 1 0 -1 0 0 0 0 0 lots 0 0 0 20", 0, "want a number of clock ticks"},
		{"negative", "1 (x) S 0 1 1 0 -1 0 0 0 0 0 -5 0 0 0 20", 0, "want a number of clock ticks"},
	})
}

// parseCase is what a parser of a /proc file is given, and what it must
// answer: want, and an error only where err is set.
type parseCase[T comparable] struct {
	name  string
	input string
	want  T
	err   string // in the error; "" for none
}

// testParse runs parse on each case's input.
func testParse[T comparable](t *testing.T, parse func([]byte) (T, error), cases []parseCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parse([]byte(tc.input))
			if !testkit.WantErr(t, err, tc.err) && got != tc.want {
				t.Fatalf("%v, want %v", got, tc.want)
			}
		})
	}
}

// ReadCPU of this process grows while it spins.
func TestReadCPUOfSelf(t *testing.T) {
	before, err := ReadCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if after, err := ReadCPU(os.Getpid()); err != nil {
			t.Fatal(err)
		} else if after > before {
			return
		}
	}
	t.Fatal("no CPU time counted after 5s of spinning")
}
