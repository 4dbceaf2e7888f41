package http_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	nethttp "net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// referencePath is the reference OpenAPI document of the API, beside the
// repository (CI checks out ../shared next to the clone). It is read, never
// copied into the project.
const referencePath = "../../shared/spec/reference-openapi.json"

// licensedDifference is one way our responses may differ from the reference
// document, with the decision in ../shared/spec/NOTES.md that allows it.
// A mismatch is identified by the operation (the reference's path template,
// or ours where the reference has none), the status, and the schema location
// ("/payout/to/tag type": the JSON pointer with array indexes as *, then the
// schema keyword that failed). An empty status or field matches any.
type licensedDifference struct {
	operation string
	status    string
	field     string
	reason    string
}

// licensedDifferences lists every difference NOTES.md licenses; any other
// mismatch fails the test, and so does a row that no response needs (the
// table only shrinks to what is still true).
var licensedDifferences = []licensedDifference{
	// Operations the reference lacks. The contract's Versioning rule 5 makes
	// new endpoints additive; NOTES.md names these ours to define. Their
	// error bodies are still checked against the reference's Error.
	{"POST /v1/simulations/advance-clock", "", operationMissing, "NOTES: sandbox clock, a simulation endpoint of ours"},
	{"POST /v1/simulations/order-deposit", "", operationMissing, "NOTES: sandbox triggers; contract: simulations drive deterministic outcomes (orders)"},
	{"POST /v1/simulations/crypto-deposit", "", operationMissing, "NOTES: sandbox triggers; contract: simulations drive deterministic outcomes (crypto deposits)"},
	{"POST /v1/simulations/dispute-open", "", operationMissing, "NOTES: sandbox triggers; contract: simulations drive deterministic outcomes (disputes)"},
	{"POST /v1/simulations/dispute-resolve", "", operationMissing, "NOTES: sandbox triggers; contract: simulations drive deterministic outcomes (disputes)"},
	{"POST /v1/keys", "", operationMissing, "NOTES: organizations and keys are ours to define"},
	{"GET /v1/keys", "", operationMissing, "NOTES: organizations and keys are ours to define"},
	{"DELETE /v1/keys/{}", "", operationMissing, "NOTES: organizations and keys are ours to define"},
	{"GET /v1/keys/{}", "", operationMissing, "NOTES: organizations and keys are ours to define (key controls: caps, usage, allowlist)"},
	{"PATCH /v1/keys/{}", "", operationMissing, "NOTES: organizations and keys are ours to define (key controls: caps, usage, allowlist)"},
	{"POST /v1/organizations", "", operationMissing, "NOTES: organizations and keys are ours to define"},
	{"POST /v1/checkout/{}/sessions", "", operationMissing, "NOTES: hosted checkout, its public endpoints scoped to one link"},
	{"GET /v1/checkout/{}/sessions/{}", "", operationMissing, "NOTES: hosted checkout, its public endpoints scoped to one link"},
	{"POST /v1/checkout/{}/sessions/{}/simulate", "", operationMissing, "NOTES: hosted checkout, its public endpoints scoped to one link"},
	{"GET /v1/checkout/{}", "", operationMissing, "NOTES: hosted checkout, its public endpoints scoped to one link"},
	{"POST /v1/payment-links/{}/sessions", "", operationMissing, "NOTES: hosted checkout; contract: a payment link's sessions"},
	{"POST /v1/payment-pages/{}/payment-links", "", operationMissing, "contract Versioning 5: additive endpoint (a link from a payment page)"},
	{"GET /v1/webhooks/deliveries/{}", "", operationMissing, "contract Versioning 5: additive endpoint (a delivery with its attempt history; contract: replay from the dashboard)"},
	{"GET /v1/files/{}/content", "", operationMissing, "contract: files have signed, expiring download links; the link is ours"},
	{"GET /internal/blobs/{}", "", operationMissing, "ours: node-to-node file transfer, never a client's; error bodies checked"},
	{"GET /v1/requests", "", operationMissing, "NOTES: the request log, GET /v1/requests (ours)"},
	{"GET /v1/requests/{}", "", operationMissing, "NOTES: the request log, GET /v1/requests/{requestId} (ours)"},
	{"GET /v1/nowhere", "404", operationMissing, "an unknown path: the error body is checked against the reference's Error"},
	{"DELETE /v1/payouts", "405", operationMissing, "an unsupported method: the error body is checked against the reference's Error"},
	// Status codes NOTES.md settles that the reference does not list for
	// every operation; error bodies are still checked against its Error.
	{"", "200", statusMissing, "NOTES: idempotent replays are 200 with the original body (checked against the 201 schema)"},
	{"", "422", statusMissing, "NOTES: insufficient_funds is 422"},
	{"", "409", statusMissing, "NOTES: conflict and duplicate are 409"},
	{"", "403", statusMissing, "NOTES: forbidden is 403 (scopes)"},
	{"", "503", statusMissing, "NOTES: production has no provider or rate source yet: 503"},
	{"", "400", statusMissing, "NOTES: validation_error is 400"},
	// NOTES: optional strings the reference types as non-nullable are
	// omitted when they have no value, a crypto recipient's country among
	// them, though the reference lists country as required.
	{"", "", "/recipient/country required", "NOTES: a crypto recipient's country is omitted, never null"},
	{"", "", "/data/*/country required", "NOTES: a crypto recipient's country is omitted, never null"},
	{"", "", "/created/*/country required", "NOTES: a crypto recipient's country is omitted, never null"},
}

const (
	operationMissing = "(operation not in the reference)"
	statusMissing    = "(status not in the reference)"
)

func (d licensedDifference) covers(m referenceMismatch) bool {
	return (d.operation == "" || d.operation == m.operation) &&
		(d.status == "" || d.status == m.status) &&
		(d.field == m.field || d.field == "" && !strings.HasPrefix(m.field, "("))
}

// referenceMismatch is one difference found, and where.
type referenceMismatch struct {
	operation, status, field string
}

// TestGoldenMatchesReference validates every response recorded in the golden
// files against the reference OpenAPI document: the request's method and
// path find the operation, the status must be one it documents, and the body
// must satisfy that status's schema (what a client generated from the
// reference checks).
func TestGoldenMatchesReference(t *testing.T) {
	doc, router := loadReference(t)
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	found := map[referenceMismatch]string{} // → the first place it was seen, with the validator's message
	record := func(m referenceMismatch, where string) {
		if _, ok := found[m]; !ok {
			found[m] = where
		}
	}
	responses := 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range parseGolden(t, string(raw)) {
			method, path, _, _ := parseRequest(t, b.request)
			path, _, _ = strings.Cut(path, "?")
			status, body := parseGoldenResponse(t, b.response)
			where := filepath.Base(file) + " block " + strconv.Itoa(i+1)
			responses++
			for _, m := range validateAgainstReference(t, doc, router, method, path, status, body) {
				record(m.referenceMismatch, where+": "+m.message)
			}
		}
	}
	used := make([]bool, len(licensedDifferences))
	var keys []referenceMismatch
	for m := range found {
		keys = append(keys, m)
	}
	slices.SortFunc(keys, func(a, b referenceMismatch) int {
		return strings.Compare(a.operation+" "+a.status+" "+a.field, b.operation+" "+b.status+" "+b.field)
	})
	for _, m := range keys {
		licensed := false
		for i, d := range licensedDifferences {
			if d.covers(m) {
				used[i], licensed = true, true
			}
		}
		if !licensed {
			t.Errorf("%s %s %s: not licensed by NOTES.md (%s)", m.operation, m.status, m.field, found[m])
		}
	}
	for i, d := range licensedDifferences {
		if !used[i] {
			t.Errorf("licensed difference no longer needed, remove it: %+v", d)
		}
	}
	t.Logf("%d responses validated, %d distinct differences", responses, len(found))
}

var referenceCache struct {
	doc    *openapi3.T
	router routers.Router
}

// loadReference reads the reference document and normalises in memory what
// the validator does not take as written: the servers (templated base URLs)
// are dropped so that requests match by method and path alone.
func loadReference(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	if referenceCache.doc != nil {
		return referenceCache.doc, referenceCache.router
	}
	raw, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatalf("the reference OpenAPI document is expected beside the repository: %v", err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("load %s: %v", referencePath, err)
	}
	doc.Servers = nil
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("reference document does not validate: %v", err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	referenceCache.doc, referenceCache.router = doc, router
	return doc, router
}

// parseGoldenResponse reads a golden response: the status line, shown
// headers, a blank line and the JSON body (empty for 204).
func parseGoldenResponse(t *testing.T, text string) (status string, body string) {
	status, rest, _ := strings.Cut(text, "\n")
	_, body, _ = strings.Cut(rest, "\n\n")
	if strings.HasPrefix(rest, "\n") {
		body = rest[1:]
	}
	return strings.TrimSpace(status), strings.TrimSpace(body)
}

// goldenSamples turn a golden file's placeholders back into values of the
// right shape, so that formats (date-time, uri) and types are checked.
var goldenSamples = []struct {
	re    *regexp.Regexp
	value string
}{
	{regexp.MustCompile(`<time>`), "2026-01-02T03:04:05.678Z"},
	{regexp.MustCompile(`<url>`), "https://files.example/v1/files/file_0/content"},
	{regexp.MustCompile(`<seconds>`), "600"},
	{regexp.MustCompile(`<micros>`), "412"},
	{regexp.MustCompile(`<ms>`), "3"},
	{regexp.MustCompile(`<request-id>`), "req_00000000000000000000"},
}

type located struct {
	referenceMismatch
	message string
}

var idSegment = regexp.MustCompile(`^(<[a-z]+:\d+>|[a-z]{2,5}_[A-Za-z0-9_]+)$`)

// templateOf names an operation the reference lacks: the path with ids as {}.
func templateOf(method, path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if idSegment.MatchString(s) || i == 3 && segs[1] == "internal" {
			segs[i] = "{}"
		}
	}
	return method + " " + strings.Join(segs, "/")
}

func validateAgainstReference(t *testing.T, doc *openapi3.T, router routers.Router, method, path, status, body string) []located {
	t.Helper()
	for _, s := range goldenSamples {
		body = s.re.ReplaceAllString(body, s.value)
	}
	var value any
	if body != "" {
		if err := json.Unmarshal([]byte(body), &value); err != nil {
			t.Fatalf("%s %s: golden body is not JSON after placeholders: %v\n%s", method, path, err, body)
		}
	}
	var out []located
	// A percent-encoded path parameter (an externalReference with a slash)
	// routes as one segment.
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if strings.Contains(s, "%") {
			segs[i] = "x"
		}
	}
	req, err := nethttp.NewRequest(method, "http://reference.example"+strings.Join(segs, "/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var operation string
	var responses *openapi3.Responses
	if route, _, err := router.FindRoute(req); err == nil {
		operation = method + " " + route.Path
		responses = route.Operation.Responses
	} else {
		operation = templateOf(method, path)
		out = append(out, located{referenceMismatch{operation, status, operationMissing}, err.Error()})
	}
	var schema *openapi3.Schema
	if responses != nil {
		code, _ := strconv.Atoi(status)
		r := responses.Status(code)
		if r == nil && code == 200 {
			// An idempotent replay: the original body, under 200.
			out = append(out, located{referenceMismatch{operation, status, statusMissing}, "documented: " + strings.Join(slices.Sorted(maps.Keys(responses.Map())), ", ")})
			r = responses.Status(201)
		}
		if r != nil && r.Value != nil {
			if mt := r.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
				schema = mt.Schema.Value
			} else if body != "" && len(r.Value.Content) > 0 {
				out = append(out, located{referenceMismatch{operation, status, "(no JSON body in the reference)"}, body})
			}
		} else if code != 200 {
			out = append(out, located{referenceMismatch{operation, status, statusMissing}, "documented: " + strings.Join(slices.Sorted(maps.Keys(responses.Map())), ", ")})
		}
	}
	// Statuses the reference does not document are errors: their bodies
	// must still be the reference's Error.
	if schema == nil && status >= "400" {
		schema = doc.Components.Schemas["Error"].Value
	}
	if schema == nil || body == "" {
		return out
	}
	err = schema.VisitJSON(value, openapi3.MultiErrors(), openapi3.VisitAsResponse())
	for _, e := range flattenSchemaErrors(err) {
		var se *openapi3.SchemaError
		if !errors.As(e, &se) {
			out = append(out, located{referenceMismatch{operation, status, "(" + e.Error() + ")"}, e.Error()})
			continue
		}
		segs := se.JSONPointer()
		for i, s := range segs {
			if _, err := strconv.Atoi(s); err == nil {
				segs[i] = "*"
			}
		}
		pointer := "/" + strings.Join(segs, "/")
		value, _ := json.Marshal(se.Value)
		if len(value) > 80 {
			value = append(value[:80], "…"...)
		}
		out = append(out, located{referenceMismatch{operation, status, pointer + " " + se.SchemaField}, se.Reason + ": " + string(value)})
	}
	return out
}

func flattenSchemaErrors(err error) []error {
	if err == nil {
		return nil
	}
	var multi openapi3.MultiError
	if errors.As(err, &multi) {
		var out []error
		for _, e := range multi {
			out = append(out, flattenSchemaErrors(e)...)
		}
		return out
	}
	return []error{err}
}
