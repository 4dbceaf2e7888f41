package http_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"payments/actors/actorstest/testkit"
	"payments/actors/actorstest/wait"
	"payments/rails"
)

// The HTTP contract as data: each testdata/*.txt file is a script of
// requests and the responses the server must give, run in order against a
// fresh stack. Blocks are separated by "====" lines; in each block the
// request comes first, then a "----" line, then the response (status line,
// the headers that carry meaning, and the body as indented JSON).
//
// Identifiers, secrets, account numbers and timestamps differ on every run,
// so responses are normalized: each distinct value becomes a numbered
// placeholder such as <pay:1>, the same value the same placeholder. A request
// may use a placeholder seen in an earlier response; it is replaced by the
// value it stands for. {{key}} is the bootstrap key (every scope).
//
// Run with -update to regenerate after an intended change, and review the
// diff.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			runGolden(t, file)
		})
	}
}

type goldenBlock struct {
	request  string
	response string
}

func parseGolden(t *testing.T, text string) []goldenBlock {
	var blocks []goldenBlock
	var cur *goldenBlock
	var part *strings.Builder
	var req, resp strings.Builder
	flush := func() {
		if cur != nil {
			cur.request, cur.response = req.String(), resp.String()
			blocks = append(blocks, *cur)
		}
		req.Reset()
		resp.Reset()
		cur, part = &goldenBlock{}, &req
	}
	flush()
	for _, line := range strings.SplitAfter(text, "\n") {
		switch strings.TrimRight(line, "\n") {
		case "====":
			flush()
		case "----":
			part = &resp
		default:
			part.WriteString(line)
		}
	}
	flush()
	var out []goldenBlock
	for _, b := range blocks {
		if strings.TrimSpace(b.request) != "" {
			out = append(out, b)
		}
	}
	return out
}

func runGolden(t *testing.T, file string) {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	opts := stackOptions{}
	if bytes.HasPrefix(raw, []byte("# stack: production")) {
		opts.live = true
	}
	// "# rails: fast" settles collections and payouts in tens of
	// milliseconds; blocks wait for them with "# retry-until:".
	if bytes.HasPrefix(raw, []byte("# rails: fast")) {
		opts.timing = rails.SandboxTiming{SubmitLatency: time.Millisecond, Settlement: 20 * time.Millisecond,
			Timeout: time.Hour, DelayedCompletion: time.Hour, CustomerTimeout: time.Hour}
	}
	st := newStack(t, opts)
	n := newNormalizer()
	n.optIn(t, string(raw))
	var out strings.Builder
	for i, b := range parseGolden(t, string(raw)) {
		method, path, headers, body := parseRequest(t, n.expand(strings.ReplaceAll(b.request, "{{key}}", st.key)))
		// "# retry-until: <text>" repeats the request (for up to ten
		// seconds) until the response contains the text: for a state that
		// the rails reach asynchronously. It repeats at 20 a second, under
		// every rate limit of the stack (the checkout's is per address, and
		// all of the harness's requests come from one).
		until := retryUntil(b.request)
		var got string
		wait.Until(10*time.Second, 50*time.Millisecond, func() bool {
			var r response
			if body == "" {
				r = st.do(method, path, "", nil, headers...)
			} else {
				r = st.do(method, path, "", []byte(body), headers...)
			}
			got = renderResponse(t, n, r)
			return until == "" || strings.Contains(got, until)
		})
		if i > 0 {
			out.WriteString("====\n")
		}
		out.WriteString(b.request)
		out.WriteString("----\n")
		out.WriteString(got)
		if !*testkit.Update && got != b.response {
			t.Errorf("%s, block %d (%s %s):\n--- want\n%s--- got\n%s", file, i+1, method, path, b.response, got)
		}
	}
	if *testkit.Update {
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func retryUntil(request string) string {
	for _, line := range strings.Split(request, "\n") {
		if v, ok := strings.CutPrefix(line, "# retry-until: "); ok {
			return v
		}
	}
	return ""
}

// parseRequest reads "METHOD /path", header lines, a blank line and a body.
// Lines starting with # are comments. An Authorization header may be given
// as is; its value is expanded like the rest.
func parseRequest(t *testing.T, text string) (method, path string, headers []string, body string) {
	lines := strings.Split(text, "\n")
	i := 0
	for i < len(lines) && (strings.HasPrefix(lines[i], "#") || strings.TrimSpace(lines[i]) == "") {
		i++
	}
	if i == len(lines) {
		t.Fatalf("block without a request line:\n%s", text)
	}
	method, path, _ = strings.Cut(lines[i], " ")
	i++
	for ; i < len(lines) && lines[i] != ""; i++ {
		k, v, ok := strings.Cut(lines[i], ": ")
		if !ok {
			t.Fatalf("bad header line %q", lines[i])
		}
		headers = append(headers, k, v)
	}
	body = strings.TrimSpace(strings.Join(lines[min(i, len(lines)):], "\n"))
	return method, path, headers, body
}

// shownHeaders are the response headers golden files record, when present.
var shownHeaders = []string{"idempotent-replayed", "retry-after", "allow"}

func renderResponse(t *testing.T, n *normalizer, r response) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", r.status)
	for _, h := range shownHeaders {
		if v, ok := r.header[h]; ok {
			fmt.Fprintf(&b, "%s: %s\n", h, n.normalize(v))
		}
	}
	b.WriteString("\n")
	if len(r.body) == 0 { // 204
		return b.String()
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, r.body, "", "  "); err != nil {
		t.Fatalf("response body is not JSON: %s", r.body)
	}
	b.WriteString(n.normalize(pretty.String()))
	b.WriteString("\n")
	return b.String()
}

// normalizer maps run-specific values to stable placeholders and back.
type normalizer struct {
	forward  map[string]string // value → placeholder
	backward map[string]string // placeholder → value
	counts   map[string]int
	// numberRequests numbers request ids (<req:1>) so that a request can
	// name one seen earlier ("# normalize: requests"); otherwise every
	// request id is <request-id>.
	numberRequests bool
	extra          []struct {
		kind string
		re   *regexp.Regexp
	}
}

// optInVolatile are run-specific values that a file normalizes only when a
// "# normalize: kind…" line names them, because the same shapes appear as
// fixed values in other files (a Tron address saved in a recipient).
var optInVolatile = map[string]*regexp.Regexp{
	"tron":     regexp.MustCompile(`\bT[1-9A-HJ-NP-Za-km-z]{33}\b`), // an order's Tron deposit address
	"vanumber": regexp.MustCompile(`\b98\d{8}\b`),                   // an order's sandbox virtual account number
}

var normalizeLine = regexp.MustCompile(`(?m)^# normalize: (.*)$`)

// optIn enables the opt-in kinds a golden file names.
func (n *normalizer) optIn(t *testing.T, file string) {
	for _, m := range normalizeLine.FindAllStringSubmatch(file, -1) {
		for _, kind := range strings.Fields(m[1]) {
			if kind == "requests" {
				n.numberRequests = true
				continue
			}
			re, ok := optInVolatile[kind]
			if !ok {
				t.Fatalf("# normalize: unknown kind %q", kind)
			}
			n.extra = append(n.extra, struct {
				kind string
				re   *regexp.Regexp
			}{kind, re})
		}
	}
}

func newNormalizer() *normalizer {
	return &normalizer{forward: map[string]string{}, backward: map[string]string{}, counts: map[string]int{}}
}

var volatile = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"time", regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`)},
	{"countdown", regexp.MustCompile(`"expiresInSeconds": \d+`)}, // the checkout's, read a moment after it began
	// A key's spend: the organization's current day and month.
	{"spendday", regexp.MustCompile(`"day": "\d{4}-\d\d-\d\d"`)},
	{"spendmonth", regexp.MustCompile(`"month": "\d{4}-\d\d"`)},
	// Files and disputes: signed urls (host, expiry, signature) and ids.
	{"url", regexp.MustCompile(`http://[0-9.:]+/v1/files/file_[a-z0-9]{20}/content\?expires=\d+&signature=[0-9a-f]{64}`)},
	{"file", regexp.MustCompile(`file_[a-z0-9]{20}`)},
	{"dsp", regexp.MustCompile(`dsp_[a-z0-9]{20}`)},
	{"dsm", regexp.MustCompile(`dsm_[a-z0-9]{20}`)},
	{"secret", regexp.MustCompile(`sk_(test|live)_[A-Za-z0-9]{40}`)},
	{"hint", regexp.MustCompile(`sk_(test|live)_…[A-Za-z0-9]{4}`)},
	{"req", regexp.MustCompile(`\breq_[a-z0-9]{20,}`)},
	{"duration", regexp.MustCompile(`"durationMicros": \d+`)},
	{"durationms", regexp.MustCompile(`"durationMs": \d+`)}, // a webhook attempt's
	// Entry and event ids are enciphered with the deployment's id key
	// (publicids.IDs), drawn afresh by every stack.
	{"le", regexp.MustCompile(`\ble_(?:[a-z]+_)*[0-9a-v]{26}\b`)},
	{"wev", regexp.MustCompile(`\bwev_[0-9a-v]{26}\b`)},
	{"pay", regexp.MustCompile(`pay_[a-z]+_[a-z0-9]{20}`)},
	{"col", regexp.MustCompile(`col_[a-z0-9]{20}`)},
	{"org", regexp.MustCompile(`org_[a-z0-9]{20}`)},
	{"key", regexp.MustCompile(`key_[a-z0-9]{20}`)},
	{"rcp", regexp.MustCompile(`rcp_[a-z0-9]{20}`)},
	{"ord", regexp.MustCompile(`ord_[a-z0-9]{20}`)},
	{"account", regexp.MustCompile(`\b[A-Z]{3,4}\d{8}\b`)},
	{"pl", regexp.MustCompile(`pl_[a-z0-9]{20}`)},
	{"pp", regexp.MustCompile(`pp_[a-z0-9]{20}`)},
	{"cs", regexp.MustCompile(`cs_[a-z0-9]{20}`)},
	{"vad", regexp.MustCompile(`vad_[a-z0-9]{20}`)},
	{"address", regexp.MustCompile(`\b0x[0-9a-fA-F]{40}\b`)}, // EVM addresses, any case
	// Virtual accounts, crypto addresses and deposits (vad_ above).
	{"va", regexp.MustCompile(`\bva_[a-z0-9]{20}`)},
	{"cdp", regexp.MustCompile(`\bcdp_[a-z0-9]{20}`)},
	{"addr", regexp.MustCompile(`\baddr_[a-z0-9]{20}`)},
	{"cursor", regexp.MustCompile(`"nextCursor": "[A-Za-z0-9_-]+"`)},
	// Webhooks (delivery ids whd_ follow the log, so they are stable).
	{"whe", regexp.MustCompile(`whe_[a-z0-9]{20}`)},
	{"whsec", regexp.MustCompile(`whsec_[A-Za-z0-9+/]{43}=`)},
}

func (n *normalizer) normalize(s string) string {
	for _, v := range append(volatile[:len(volatile):len(volatile)], n.extra...) {
		s = v.re.ReplaceAllStringFunc(s, func(m string) string {
			if v.kind == "time" {
				return "<time>"
			}
			if v.kind == "countdown" {
				return `"expiresInSeconds": <seconds>`
			}
			if v.kind == "spendday" {
				return `"day": "<today>"`
			}
			if v.kind == "spendmonth" {
				return `"month": "<this month>"`
			}
			if v.kind == "req" && !n.numberRequests {
				return "<request-id>"
			}
			if v.kind == "duration" {
				return `"durationMicros": <micros>`
			}
			if v.kind == "durationms" {
				return `"durationMs": <ms>`
			}
			if v.kind == "url" { // its expiry moves with the clock
				return "<url>"
			}
			value := m
			if v.kind == "cursor" {
				value = strings.TrimSuffix(strings.TrimPrefix(m, `"nextCursor": "`), `"`)
			}
			p, ok := n.forward[value]
			if !ok {
				n.counts[v.kind]++
				p = "<" + v.kind + ":" + strconv.Itoa(n.counts[v.kind]) + ">"
				n.forward[value] = p
				n.backward[p] = value
			}
			if v.kind == "cursor" {
				return `"nextCursor": "` + p + `"`
			}
			return p
		})
	}
	return s
}

var placeholder = regexp.MustCompile(`<[a-z]+:\d+>`)

// expand replaces placeholders in a request with the values they stand for.
func (n *normalizer) expand(s string) string {
	return placeholder.ReplaceAllStringFunc(s, func(p string) string {
		if v, ok := n.backward[p]; ok {
			return v
		}
		return p
	})
}
