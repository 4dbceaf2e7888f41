package bench

import (
	"strings"
	"testing"
)

func TestWriteRatios(t *testing.T) {
	var b strings.Builder
	ours := []*Result{{Workload: "uniform", RequestsPerSecond: 7000}}
	bare := []*Result{{Workload: "uniform (bare)", RequestsPerSecond: 20000}}
	if err := WriteRatios(&b, ours, bare, 2); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "35.0 %") || !strings.Contains(b.String(), "20000") {
		t.Fatalf("table:\n%s", b.String())
	}
}
