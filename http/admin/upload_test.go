package admin

import (
	"bytes"
	"mime/multipart"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"payments/http/core"
	"payments/ledger"
	"payments/ledger/disputes"
)

var (
	pngBytes  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	jpegBytes = []byte("\xFF\xD8\xFF\xE0\x00\x10JFIF\x00")
	webpBytes = []byte("RIFF\x24\x00\x00\x00WEBPVP8 ")
	pdfBytes  = []byte("%PDF-1.7\n%\xE2\xE3\xCF\xD3\n")
	svgBytes  = []byte("\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<!-- logo -->\n<!DOCTYPE svg>\n<svg viewBox=\"0 0 1 1\"></svg>")
)

// multipartBody builds an upload body with mime/multipart's writer.
func multipartBody(t testing.TB, purpose *string, filename, declared string, content []byte) (string, []byte) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if purpose != nil {
		w.WriteField("purpose", *purpose)
	}
	if content != nil {
		h := map[string][]string{"Content-Disposition": {`form-data; name="file"; filename="` + filename + `"`}}
		if declared != "" {
			h["Content-Type"] = []string{declared}
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		pw.Write(content)
	}
	w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

func ptr(s string) *string { return &s }

func TestSniffContentType(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"png", pngBytes, "image/png"},
		{"jpeg", jpegBytes, "image/jpeg"},
		{"webp", webpBytes, "image/webp"},
		{"pdf", pdfBytes, "application/pdf"},
		{"svg with prolog", svgBytes, "image/svg+xml"},
		{"bare svg", []byte("  <svg>x</svg>"), "image/svg+xml"},
		{"riff that is not webp", []byte("RIFF\x24\x00\x00\x00WAVEfmt "), ""},
		{"truncated png", pngBytes[:5], ""},
		{"html", []byte("<html><svg></svg></html>"), ""},
		{"svg-like tag", []byte("<svgx>"), ""},
		{"unclosed prolog", []byte("<?xml <svg>"), ""},
		{"text", []byte("hello"), ""},
		{"svg that is not UTF-8", []byte("<svg>\xff</svg>"), ""},
		{"empty", nil, ""},
	}
	for _, c := range cases {
		if got := sniffContentType(c.b); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// Uploads judged by purpose: the size and the type the bytes have, with the
// declared type only allowed to agree.
func TestCheckUpload(t *testing.T) {
	big := append(append([]byte{}, pngBytes...), make([]byte, 2<<20)...)
	cases := []struct {
		name     string
		purpose  string
		declared string
		content  []byte
		wantType string
		wantCode ledger.Code
		wantMsg  string
	}{
		{"png selfie", "identity.selfie", "image/png", pngBytes, "image/png", "", ""},
		{"jpeg without a declared type", "identity.document", "", jpegBytes, "image/jpeg", "", ""},
		{"octet-stream declared", "dispute.evidence", "application/octet-stream", webpBytes, "image/webp", "", ""},
		{"declared with parameters", "business.document", "application/pdf; name=x.pdf", pdfBytes, "application/pdf", "", ""},
		{"svg logo", "business.logo", "image/svg+xml", svgBytes, "image/svg+xml", "", ""},
		{"svg as evidence", "dispute.evidence", "image/svg+xml", svgBytes, "", ledger.CodeBadRequest, "Content type image/svg+xml not allowed for purpose dispute.evidence"},
		{"webp selfie", "identity.selfie", "", webpBytes, "", ledger.CodeBadRequest, "not allowed for purpose identity.selfie"},
		{"logo over 2 MiB", "business.logo", "image/png", big, "", ledger.CodeBadRequest, "allows at most 2097152"},
		{"same size as evidence", "dispute.evidence", "image/png", big, "image/png", "", ""},
		{"lying declared type", "dispute.evidence", "application/pdf", pngBytes, "", ledger.CodeBadRequest, "declares application/pdf but its bytes are image/png"},
		{"executable called a pdf", "dispute.evidence", "application/pdf", []byte("MZ\x90\x00"), "", ledger.CodeBadRequest, "Content type application/pdf not allowed"},
		{"unrecognized bytes", "dispute.evidence", "", []byte("hello"), "", ledger.CodeBadRequest, "unrecognized content"},
		{"empty", "dispute.evidence", "", []byte{}, "", ledger.CodeBadRequest, "empty"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, got, e := checkUpload(upload{purpose: c.purpose, filename: "f", declaredType: c.declared, content: c.content})
			if c.wantCode == "" {
				if e != nil || got != c.wantType {
					t.Fatalf("got %q, %v; want %q", got, e, c.wantType)
				}
				return
			}
			if e == nil || e.Code != c.wantCode || !strings.Contains(e.Message, c.wantMsg) {
				t.Fatalf("got %v; want %s containing %q", e, c.wantCode, c.wantMsg)
			}
		})
	}
}

func TestParseUpload(t *testing.T) {
	ct, body := multipartBody(t, ptr("dispute.evidence"), `..\..\etc\receipt.pdf`, "application/pdf", pdfBytes)
	u, e := parseUpload(ct, body)
	if e != nil || u.purpose != "dispute.evidence" || u.filename != "receipt.pdf" || !bytes.Equal(u.content, pdfBytes) || u.declaredType != "application/pdf" {
		t.Fatalf("parse = %+v, %v", u, e)
	}
	cases := []struct {
		name string
		ct   string
		body []byte
		want string
	}{
		{"json", "application/json", []byte(`{}`), "Content-Type must be multipart/form-data"},
		{"no boundary", "multipart/form-data", body, "Content-Type must be multipart/form-data"},
		{"other boundary", "multipart/form-data; boundary=zzz", body, "purpose is required"},
		{"truncated", ct, body[:len(body)-10], "malformed"},
		{"body over the limit", ct, make([]byte, core.UploadBodyBytesMax+1), "larger than the limit"},
	}
	for _, c := range cases {
		if _, e := parseUpload(c.ct, c.body); e == nil || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: %v, want %q", c.name, e, c.want)
		}
	}
	// A file past the largest purpose's limit is refused while reading.
	ct, body = multipartBody(t, ptr("dispute.evidence"), "big.pdf", "", append(append([]byte{}, pdfBytes...), make([]byte, disputes.FileSizeMaxBytes)...))
	if _, e := parseUpload(ct, body); e == nil || e.Code != ledger.CodeBadRequest {
		t.Fatalf("oversized file: %v", e)
	}
	// Names are reduced to a last path element without controls.
	for name, want := range map[string]string{"": "file", "a/b/c.png": "c.png", `C:\x\y.png`: "y.png", "/": "file"} {
		var p core.Problems
		if got := cleanFileName(&p, name); got != want || len(p) != 0 {
			t.Errorf("cleanFileName(%q) = %q %v, want %q", name, got, p, want)
		}
	}
	for _, bad := range []string{"a\x01b.png", "a\"b.png", "\xff.png", strings.Repeat("x", 256)} {
		var p core.Problems
		if cleanFileName(&p, bad); len(p) == 0 {
			t.Errorf("cleanFileName(%q) accepted", bad)
		}
	}
}

// FuzzParseUpload holds the upload entry point to its promises on any
// input: no panic; an accepted upload names a known purpose, has a clean
// file name and a body within the largest limit; and one that also passes
// checkUpload has a detected type its purpose allows, within its size.
func FuzzParseUpload(f *testing.F) {
	for _, seed := range []struct {
		purpose, name, declared string
		content                 []byte
	}{
		{"dispute.evidence", "r.pdf", "application/pdf", pdfBytes},
		{"identity.selfie", "me.png", "", pngBytes},
		{"business.logo", "l.svg", "image/svg+xml", svgBytes},
		{"business.logo", "l.webp", "image/png", webpBytes},
		{"nope", "x", "text/plain", []byte("hello")},
	} {
		ct, body := multipartBody(f, ptr(seed.purpose), seed.name, seed.declared, seed.content)
		f.Add(ct, body)
	}
	f.Add("multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nx\r\n--b--\r\n"))
	f.Add("multipart/form-data; boundary=b", []byte("--b\nContent-Disposition: form-data; name=file; filename=\"a\"\n\n%PDF-\n--b\nContent-Disposition: form-data; name=purpose\n\ndispute.evidence\n--b--"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		u, e := parseUpload(contentType, body)
		if e != nil {
			if e.Code != ledger.CodeValidation && e.Code != ledger.CodeBadRequest {
				t.Fatalf("error code %s", e.Code)
			}
			return
		}
		if _, ok := disputes.LookupFilePurpose(u.purpose); !ok {
			t.Fatalf("accepted purpose %q", u.purpose)
		}
		if len(u.content) > disputes.FileSizeMaxBytes {
			t.Fatalf("accepted %d bytes", len(u.content))
		}
		if u.filename == "" || !utf8.ValidString(u.filename) || strings.ContainsAny(u.filename, "/\\\"\x00") || utf8.RuneCountInString(u.filename) > core.FileNameLenMax {
			t.Fatalf("accepted file name %q", u.filename)
		}
		purpose, typ, e := checkUpload(u)
		if e != nil {
			if e.Code != ledger.CodeBadRequest {
				t.Fatalf("check error code %s", e.Code)
			}
			return
		}
		if !purpose.Allows(typ) || sniffContentType(u.content) != typ || len(u.content) == 0 || int64(len(u.content)) > purpose.MaxSizeBytes {
			t.Fatalf("accepted %d bytes of %s for %s", len(u.content), typ, purpose.Name)
		}
	})
}

// Only the upload and the peers' push read more body than a JSON call.
func TestBodyLimitFor(t *testing.T) {
	cases := []struct {
		method, uri string
		want        int
	}{
		{"POST", "/v1/files", core.UploadBodyBytesMax},
		{"POST", "/v1/files?x=1", core.UploadBodyBytesMax},
		{"PUT", "/internal/blobs/abc", disputes.FileSizeMaxBytes},
		{"GET", "/v1/files", core.ServerBodyBytesMax},
		{"POST", "/v1/files/x", core.ServerBodyBytesMax},
		{"POST", "/v1/payouts", core.ServerBodyBytesMax},
		{"POST", "/internal/blobs/abc", core.ServerBodyBytesMax},
	}
	for _, c := range cases {
		var h fasthttp.RequestHeader
		h.SetMethod(c.method)
		h.SetRequestURI(c.uri)
		if got := core.BodyLimitFor(&h); got != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.uri, got, c.want)
		}
	}
}
