package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// BareRatioTarget is the share of the bare server's throughput the service
// should reach on a 2-core machine, generator beside the server (issue 25).
const BareRatioTarget = 0.35

// WriteRatios prints, per workload, the service's req/s, the bare
// server's (bench/cmd/barepay, run right after it with the same load) and
// their ratio. ours and bare are matched by position; a bare result's
// workload name carries a " (bare)" suffix.
func WriteRatios(w io.Writer, ours, bare []*Result, cpus int) error {
	fmt.Fprintf(w, "against the bare server (fasthttp + router + go-json + apd; target on 2 cores: ≥ %.0f %%), %d CPUs\n", BareRatioTarget*100, cpus)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tours req/s\tbare req/s\tratio\t")
	for i, b := range bare {
		if i >= len(ours) {
			break
		}
		o := ours[i]
		ratio := 0.0
		if b.RequestsPerSecond > 0 {
			ratio = o.RequestsPerSecond / b.RequestsPerSecond
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.1f %%\t\n", strings.TrimSuffix(b.Workload, " (bare)"), o.RequestsPerSecond, b.RequestsPerSecond, ratio*100)
	}
	return tw.Flush()
}
