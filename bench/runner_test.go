package bench

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestConfigValidate checks the settings Validate refuses, and that it
// accepts soak mode and a noisy neighbour within bounds.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		err  string // in the error; "" for none
	}{
		{"defaults", Config{}, ""},
		{"soak", Config{Duration: 3 * time.Minute, Window: 5 * time.Second, ServerPID: 42}, ""},
		{"window of the whole duration", Config{Duration: 5 * time.Second, Window: 5 * time.Second}, ""},
		{"shortest window", Config{Duration: time.Second, Window: windowMin}, ""},
		{"negative window", Config{Window: -time.Second}, "window must not be negative"},
		{"window too short", Config{Window: 50 * time.Millisecond}, "window must be at least 100ms"},
		{"window longer than duration", Config{Duration: 10 * time.Second, Window: 20 * time.Second}, "longer than the duration"},
		{"too many windows", Config{Duration: time.Hour, Window: 500 * time.Millisecond}, "7200 windows"},
		{"negative pid", Config{ServerPID: -1}, "server pid must be positive"},
		{"noise", Config{NoiseExports: 16, NoisePayouts: 5000}, ""},
		{"negative noise", Config{NoiseExports: -1}, "noise exports must be 0 to 256"},
		{"too much noise", Config{NoiseExports: 257}, "noise exports must be 0 to 256"},
		{"negative noise payouts", Config{NoiseExports: 1, NoisePayouts: -1}, "noise payouts must be 1 to 200000"},
		{"too many noise payouts", Config{NoiseExports: 1, NoisePayouts: 200_001}, "noise payouts must be 1 to 200000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one saying %q", err, tc.err)
			}
		})
	}
}

// TestTallySummarize checks how outcomes count: errors are non-2xx and
// transport errors; unexpected adds any 2xx other than the expected one.
func TestTallySummarize(t *testing.T) {
	var a, b tally
	for range 3 {
		a.add(nil, 201)
	}
	a.add(nil, 200)
	a.add(nil, 429)
	b.add(nil, 700)
	b.add(errors.New("dial tcp: refused"), 0)
	b.add(nil, 201)
	a.merge(&b)
	s := a.summarize(201)
	if s.requests != 8 || s.responses != 7 || s.errors != 3 || s.unexpected != 4 {
		t.Errorf("%d requests, %d responses, %d errors, %d unexpected; want 8, 7, 3, 4",
			s.requests, s.responses, s.errors, s.unexpected)
	}
	if got := counts(s.statuses); got != "200=1 201=4 429=1 other=1" {
		t.Errorf("statuses %s", got)
	}
	if len(s.transport) != 1 {
		t.Errorf("transport errors %v", s.transport)
	}
}
