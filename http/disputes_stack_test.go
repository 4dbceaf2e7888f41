package http_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	api "payments/http"
	"payments/ledger"
	"payments/rails"
)

var fastRails = rails.SandboxTiming{SubmitLatency: time.Millisecond, Settlement: 10 * time.Millisecond,
	Timeout: time.Hour, DelayedCompletion: time.Hour, CustomerTimeout: time.Hour}

// stateBytes encodes the applied state, to show that a request changed
// nothing.
func (s *stack) stateBytes() []byte {
	sum := s.sys.Reader().Digest()
	return sum[:]
}

func (s *stack) checkLedger() {
	s.t.Helper()
	{
		st := s.sys.Reader()
		if err := st.Check(); err != nil {
			s.t.Fatal(err)
		}
	}
}

// completedCollection creates a collection and waits for the sandbox rail
// to complete it.
func (s *stack) completedCollection(ref, amount string) string {
	s.t.Helper()
	r := s.do("POST", "/v1/collections", s.key, fmt.Sprintf(`{"from":{"accountNumber":"233559630374","code":"gh_mtn","amount":%q,"currency":"GHS"},"externalReference":%q}`, amount, ref))
	s.mustStatus(r, 201)
	id := r.json(s.t)["collection"].(map[string]any)["id"].(string)
	waitFor(s.t, "the collection completed", 10*time.Second, func() bool {
		return strings.Contains(string(s.do("GET", "/v1/collections/"+id, s.key, nil).body), `"status":"completed"`)
	})
	return id
}

func (s *stack) upload(purpose, name, declared string, content []byte) response {
	s.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	w.WriteField("purpose", purpose)
	h := map[string][]string{"Content-Disposition": {`form-data; name="file"; filename="` + name + `"`}}
	if declared != "" {
		h["Content-Type"] = []string{declared}
	}
	pw, _ := w.CreatePart(h)
	pw.Write(content)
	w.Close()
	return s.do("POST", "/v1/files", s.key, buf.Bytes(), "Content-Type", w.FormDataContentType())
}

func balance(t *testing.T, s *stack, account string) (available, held string) {
	t.Helper()
	a := s.do("GET", "/v1/accounts/"+account, s.key, nil).json(t)["account"].(map[string]any)
	return a["availableBalance"].(string), a["pendingBalance"].(string)
}

// The life of disputes over the API, both endings and the merchant's
// concession: the hold, its release or debit, the events of each change,
// the ledger's invariants after every step; and requests that are refused
// change nothing.
func TestDisputesOverHTTP(t *testing.T) {
	s := newStack(t, stackOptions{timing: fastRails})
	colWon := s.completedCollection("d-1", "100.00")   // 98.50 credited
	colLost := s.completedCollection("d-2", "200.00")  // 197.00
	colAccept := s.completedCollection("d-3", "50.00") // 49.25
	col := s.do("GET", "/v1/collections/"+colWon, s.key, nil).json(t)["collection"].(map[string]any)
	account := col["to"].(map[string]any)["accountNumber"].(string)
	if a, h := balance(t, s, account); a != "344.75" || h != "0.00" {
		t.Fatalf("balance %s held %s", a, h)
	}
	s.checkLedger()

	open := func(colID, amount string) string {
		r := s.do("POST", "/v1/simulations/dispute-open", s.key, fmt.Sprintf(`{"collectionId":%q,"amount":%q}`, colID, amount))
		s.mustStatus(r, 201)
		s.checkLedger()
		return r.json(t)["simulation"].(map[string]any)["dispute"].(map[string]any)["id"].(string)
	}
	won, lost, conceded := open(colWon, "100.00"), open(colLost, "150.00"), open(colAccept, "20.00")
	if a, h := balance(t, s, account); a != "74.75" || h != "270.00" {
		t.Fatalf("after holds: available %s held %s", a, h)
	}
	// A payout cannot spend what is held.
	r := s.do("POST", "/v1/payouts", s.key, `{"to":{"code":"gh_mtn","currency":"GHS","accountNumber":"233241234567","amount":"80.00"},"externalReference":"p-1"}`)
	s.mustStatus(r, 422)

	evidence := s.upload("dispute.evidence", "proof.pdf", "", []byte("%PDF-1.4\nproof\n"))
	s.mustStatus(evidence, 201)
	fileID := evidence.json(t)["file"].(map[string]any)["id"].(string)
	s.mustStatus(s.do("POST", "/v1/disputes/"+won+"/respond", s.key, fmt.Sprintf(`{"action":"contest","reason":"Delivered","fileIds":[%q]}`, fileID)), 200)
	s.mustStatus(s.do("POST", "/v1/disputes/"+won+"/messages", s.key, fmt.Sprintf(`{"body":"More","attachments":[{"fileId":%q}]}`, fileID)), 201)
	s.mustStatus(s.do("POST", "/v1/simulations/dispute-resolve", s.key, fmt.Sprintf(`{"disputeId":%q,"outcome":"won"}`, won)), 200)
	s.checkLedger()
	s.mustStatus(s.do("POST", "/v1/simulations/dispute-resolve", s.key, fmt.Sprintf(`{"disputeId":%q,"outcome":"lost"}`, lost)), 200)
	s.checkLedger()
	s.mustStatus(s.do("POST", "/v1/disputes/"+conceded+"/respond", s.key, `{"action":"accept"}`), 200)
	s.checkLedger()
	// 344.75 − 150.00 − 20.00, nothing held.
	if a, h := balance(t, s, account); a != "174.75" || h != "0.00" {
		t.Fatalf("after resolution: available %s held %s", a, h)
	}

	// The thread, oldest first, with a signed url on each attachment.
	d := s.do("GET", "/v1/disputes/"+won, s.key, nil).json(t)["dispute"].(map[string]any)
	msgs := d["messages"].([]any)
	if d["status"] != "declined" || len(msgs) != 2 || msgs[0].(map[string]any)["body"] != "Delivered" {
		t.Fatalf("dispute = %v", d)
	}
	att := msgs[1].(map[string]any)["attachments"].([]any)[0].(map[string]any)
	if !strings.Contains(att["url"].(string), "/v1/files/"+fileID+"/content?expires=") || att["name"] != "proof.pdf" {
		t.Fatalf("attachment = %v", att)
	}

	// Each change's event, in the same Apply: created ×3, updated ×2
	// (contest, message), closed ×3.
	counts := map[string]int{}
	{
		st := s.sys.Reader()
		for seq := uint64(1); seq <= st.EventCount(); seq++ {
			ev, _ := st.EventAt(seq)
			if strings.HasPrefix(ev.Type, "dispute.") {
				counts[ev.Type]++
			}
		}
	}
	if counts[ledger.EventDisputeCreated] != 3 || counts[ledger.EventDisputeUpdated] != 2 || counts[ledger.EventDisputeClosed] != 3 {
		t.Fatalf("dispute events = %v", counts)
	}

	// Refused requests leave the ledger byte for byte as it was.
	before := s.stateBytes()
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{"POST", "/v1/disputes/" + won + "/respond", `{"action":"accept"}`, 400},
		{"POST", "/v1/disputes/" + won + "/messages", `{"body":"late"}`, 400},
		{"POST", "/v1/disputes/" + lost + "/messages", `{"body":"x","attachments":[{"fileId":"file_nope"}]}`, 400},
		{"POST", "/v1/simulations/dispute-resolve", fmt.Sprintf(`{"disputeId":%q,"outcome":"lost"}`, won), 400},
		{"POST", "/v1/simulations/dispute-open", fmt.Sprintf(`{"collectionId":%q,"amount":"1.00"}`, colWon), 409},
		{"POST", "/v1/simulations/dispute-open", `{"collectionId":"col_nope"}`, 404},
		{"POST", "/v1/disputes/dsp_nope/respond", `{"action":"contest"}`, 404},
		{"POST", "/v1/disputes/" + won + "/respond", `{"action":"contest","extra":1}`, 400},
	} {
		s.mustStatus(s.do(c.method, c.path, s.key, c.body), c.status)
	}
	for _, bad := range []struct{ purpose, name, declared, content string }{
		{"dispute.evidence", "a.txt", "", "plain text"},
		{"identity.selfie", "a.pdf", "", "%PDF-1.4"},
		{"dispute.evidence", "a.png", "image/png", "%PDF-1.4"},
		{"nope", "a.pdf", "", "%PDF-1.4"},
	} {
		s.mustStatus(s.upload(bad.purpose, bad.name, bad.declared, []byte(bad.content)), 400)
	}
	if !bytes.Equal(s.stateBytes(), before) {
		t.Fatal("a refused request changed the ledger")
	}
}

// The upload route reads bodies past the JSON limit, up to the largest
// purpose; a purpose's own limit is then applied to the bytes. A signed
// URL downloads the bytes as an attachment that browsers will not sniff.
func TestUploadLimitsAndDownload(t *testing.T) {
	s := newStack(t, stackOptions{})
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 6<<20)...) // past the 4 MiB JSON limit
	r := s.upload("dispute.evidence", "big.png", "image/png", png)
	s.mustStatus(r, 201)
	f := r.json(t)["file"].(map[string]any)
	if f["size"] != float64(len(png)) {
		t.Fatalf("size %v", f["size"])
	}
	// 6 MiB is past a selfie's 5 MiB.
	r = s.upload("identity.selfie", "big.png", "image/png", png)
	s.mustStatus(r, 400)
	if !strings.Contains(string(r.body), `"bad_request"`) || !strings.Contains(string(r.body), "allows at most 5242880") {
		t.Fatalf("selfie: %s", r.body)
	}

	logo := []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
	r = s.upload("business.logo", "lögo.svg", "", logo)
	s.mustStatus(r, 201)
	u := r.json(t)["file"].(map[string]any)["url"].(string)
	path := u[strings.Index(u, "/v1/"):]
	resp, err := s.client.Get("http://" + s.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got bytes.Buffer
	got.ReadFrom(resp.Body)
	if resp.StatusCode != 200 || !bytes.Equal(got.Bytes(), logo) {
		t.Fatalf("download: %d %q", resp.StatusCode, got.Bytes())
	}
	for h, want := range map[string]string{
		"Content-Type":           "image/svg+xml",
		"Content-Disposition":    `attachment; filename="l_go.svg"; filename*=UTF-8''l%C3%B6go.svg`,
		"X-Content-Type-Options": "nosniff",
	} {
		if resp.Header.Get(h) != want {
			t.Errorf("%s: %q, want %q", h, resp.Header.Get(h), want)
		}
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Errorf("Content-Security-Policy: %q", resp.Header.Get("Content-Security-Policy"))
	}

	// Advancing the organization's sandbox clock past the link's lifetime
	// (a day for a logo) expires it; a fresh get signs a new one.
	s.mustStatus(s.do("POST", "/v1/simulations/advance-clock", s.key, `{"seconds":90000}`), 200)
	expired := s.do("GET", path, "", nil)
	s.mustStatus(expired, 403)
	if !strings.Contains(string(expired.body), "expired") {
		t.Fatalf("after the clock moved: %s", expired.body)
	}
	id := r.json(t)["file"].(map[string]any)["id"].(string)
	fresh := s.do("GET", "/v1/files/"+id, s.key, nil).json(t)["file"].(map[string]any)["url"].(string)
	resp2, err := s.client.Get("http://" + s.addr + fresh[strings.Index(fresh, "/v1/"):])
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != 200 {
		t.Fatalf("fresh url: %d", resp2.StatusCode)
	}
}

// Signed downloads carry no key, so they are limited per client address at
// the per-key rate, and the limit answers in the envelope with Retry-After.
func TestDownloadsAreRateLimitedPerClient(t *testing.T) {
	s := newStack(t, stackOptions{timing: frozenTiming, rateLimit: 3})
	r := s.upload("dispute.evidence", "e.pdf", "application/pdf", []byte("%PDF-1.4\n%%EOF\n"))
	s.mustStatus(r, 201)
	u := r.json(t)["file"].(map[string]any)["url"].(string)
	path := u[strings.Index(u, "/v1/"):]
	var statuses []int
	for i := 0; i < 4; i++ {
		statuses = append(statuses, s.do("GET", path, "", nil).status)
	}
	if statuses[0] != 200 || statuses[3] != 429 {
		t.Fatalf("statuses %v: want 200 first and 429 past 3 a second", statuses)
	}
	limited := s.do("GET", path, "", nil)
	if limited.status != 429 || limited.header["retry-after"] == "" || limited.json(t)["error"] != "rate_limited" {
		t.Fatalf("limited download: %d %v %s", limited.status, limited.header, limited.body)
	}
	// No key is sent, so the message names what is counted: the address.
	if msg := limited.json(t)["message"]; msg != "Too many requests: this client address is limited to 3 requests per second" {
		t.Fatalf("limited download: message %q", msg)
	}
}

// SweepBlobs removes bytes no file record names once they are older than
// BlobOrphanAge (an upload whose record never committed), and keeps every
// file's bytes and any recent upload's.
func TestSweepBlobsKeepsEveryFile(t *testing.T) {
	s := newStack(t, stackOptions{timing: frozenTiming})
	r := s.upload("dispute.evidence", "e.pdf", "application/pdf", []byte("%PDF-1.4\n%%EOF\n"))
	s.mustStatus(r, 201)
	fileID := r.json(t)["file"].(map[string]any)["id"].(string)
	write := func(data string, age time.Duration) string {
		sum := sha256.Sum256([]byte(data))
		d := hex.EncodeToString(sum[:])
		p := filepath.Join(s.files, d[:2], d)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-age)
		os.Chtimes(p, old, old)
		return p
	}
	orphan := write("never committed", 2*api.BlobOrphanAge)
	recent := write("upload in progress", time.Minute)
	// The committed file's bytes, aged too: a record keeps them.
	filepath.WalkDir(s.files, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != orphan && p != recent {
			old := time.Now().Add(-48 * time.Hour)
			os.Chtimes(p, old, old)
		}
		return nil
	})
	n, err := s.srv.SweepBlobs()
	if err != nil || n != 1 {
		t.Fatalf("swept %d, %v; want 1", n, err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatal("the orphan is still there")
	}
	if _, err := os.Stat(recent); err != nil {
		t.Fatal("a recent upload's bytes were removed")
	}
	u := s.do("GET", "/v1/files/"+fileID, s.key, nil).json(t)["file"].(map[string]any)["url"].(string)
	s.mustStatus(s.do("GET", u[strings.Index(u, "/v1/"):], "", nil), 200)
}
