package admin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"payments/http/core"
	"payments/ledger"
	"payments/ledger/disputes"
)

// Uploads: POST /v1/files takes multipart/form-data with a "purpose" text
// field and a "file" part. The server reads at most uploadBodyBytesMax of
// body (raised for this route only, see bodyLimitFor); parseUpload reads the
// parts with mime/multipart within its own limits, and checkUpload holds the
// bytes to the purpose: size, and a content type detected from the bytes'
// magic numbers (the declared type must agree, but is never trusted alone).

// upload is a parsed upload request.
type upload struct {
	purpose      string
	filename     string
	declaredType string // the file part's Content-Type, "" if absent
	content      []byte
}

// parseUpload reads a multipart/form-data body. Every error is a 400 in the
// envelope; nothing is stored until the whole body has been read and
// checked.
func parseUpload(contentType string, body []byte) (upload, *ledger.Error) {
	var u upload
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return u, &ledger.Error{Code: ledger.CodeValidation,
			Message: "Content-Type must be multipart/form-data with a boundary, holding a file part and a purpose field",
			Fields:  []ledger.FieldError{{Field: "Content-Type", Message: "must be multipart/form-data"}}}
	}
	if len(body) > core.UploadBodyBytesMax {
		return u, core.BodyTooLarge(core.UploadBodyBytesMax)
	}
	r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var p core.Problems
	seenPurpose, seenFile := false, false
	for parts := 0; ; parts++ {
		part, err := r.NextRawPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return u, malformedMultipart(err)
		}
		if parts == core.UploadPartsMax {
			return u, &ledger.Error{Code: ledger.CodeValidation,
				Message: fmt.Sprintf("The body has more than %d parts; send one file part and one purpose field", core.UploadPartsMax)}
		}
		name := part.FormName()
		switch name {
		case "purpose":
			if seenPurpose {
				p.Add("purpose", "appears more than once")
				continue
			}
			seenPurpose = true
			v, err := io.ReadAll(io.LimitReader(part, core.UploadFieldBytesMax+1))
			if err != nil {
				return u, malformedMultipart(err)
			}
			if len(v) > core.UploadFieldBytesMax {
				p.Add("purpose", "is too long")
				continue
			}
			u.purpose = string(v)
		case "file":
			if seenFile {
				p.Add("file", "appears more than once")
				continue
			}
			seenFile = true
			u.filename = part.FileName()
			u.declaredType = part.Header.Get("Content-Type")
			v, err := io.ReadAll(io.LimitReader(part, disputes.FileSizeMaxBytes+1))
			if err != nil {
				return u, malformedMultipart(err)
			}
			if len(v) > disputes.FileSizeMaxBytes {
				return u, &ledger.Error{Code: ledger.CodeBadRequest,
					Message: fmt.Sprintf("File is larger than %d bytes, the largest any purpose allows", disputes.FileSizeMaxBytes)}
			}
			u.content = v
		default:
			p.Add(fieldName(name), "is not a known field; send file and purpose")
		}
	}
	if !seenPurpose || u.purpose == "" {
		p.Add("purpose", "is required")
	} else if _, ok := disputes.LookupFilePurpose(u.purpose); !ok {
		p.Add("purpose", "must be one of "+purposeNames())
	}
	if !seenFile {
		p.Add("file", "is required")
	} else {
		u.filename = cleanFileName(&p, u.filename)
	}
	if e := p.Err(); e != nil {
		return u, e
	}
	return u, nil
}

func malformedMultipart(err error) *ledger.Error {
	return &ledger.Error{Code: ledger.CodeValidation, Message: "The multipart body is malformed: " + err.Error()}
}

// fieldName names an unknown part in an error, safely.
func fieldName(name string) string {
	if name == "" {
		return "(unnamed part)"
	}
	if len(name) > 64 || !utf8.ValidString(name) {
		return "(part)"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, name)
}

func purposeNames() string {
	names := make([]string, len(disputes.FilePurposes))
	for i, p := range disputes.FilePurposes {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

// cleanFileName keeps the last path element of the client's file name: at
// most fileNameLenMax characters of printable UTF-8. An absent name becomes
// "file".
func cleanFileName(p *core.Problems, name string) string {
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "." || name == "/" || name == "" {
		return "file"
	}
	if !utf8.ValidString(name) {
		p.Add("file", "has a file name that is not valid UTF-8")
		return ""
	}
	if utf8.RuneCountInString(name) > core.FileNameLenMax {
		p.Add("file", fmt.Sprintf("has a file name longer than %d characters", core.FileNameLenMax))
		return ""
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == '"' {
			p.Add("file", "has a file name with control characters or quotes")
			return ""
		}
	}
	return name
}

// checkUpload holds a parsed upload to its purpose and returns the content
// type detected from the bytes.
func checkUpload(u upload) (disputes.FilePurpose, string, *ledger.Error) {
	purpose, _ := disputes.LookupFilePurpose(u.purpose)
	if len(u.content) == 0 {
		return purpose, "", &ledger.Error{Code: ledger.CodeBadRequest, Message: "The file is empty"}
	}
	if int64(len(u.content)) > purpose.MaxSizeBytes {
		return purpose, "", &ledger.Error{Code: ledger.CodeBadRequest,
			Message: fmt.Sprintf("File is %d bytes; purpose %s allows at most %d", len(u.content), purpose.Name, purpose.MaxSizeBytes)}
	}
	detected := sniffContentType(u.content)
	declared := ""
	if u.declaredType != "" {
		if mt, _, err := mime.ParseMediaType(u.declaredType); err == nil {
			declared = mt
		} else {
			declared = "invalid"
		}
	}
	if detected == "" {
		name := declared
		if name == "" || name == "application/octet-stream" || name == "invalid" {
			name = "unrecognized content"
		}
		return purpose, "", &ledger.Error{Code: ledger.CodeBadRequest,
			Message: fmt.Sprintf("Content type %s not allowed for purpose %s: the file's bytes are none of %s",
				name, purpose.Name, strings.Join(purpose.AllowedTypes, ", "))}
	}
	if declared != "" && declared != "application/octet-stream" && declared != detected {
		return purpose, "", &ledger.Error{Code: ledger.CodeBadRequest,
			Message: fmt.Sprintf("The file part declares %s but its bytes are %s", declared, detected)}
	}
	if !purpose.Allows(detected) {
		return purpose, "", &ledger.Error{Code: ledger.CodeBadRequest,
			Message: fmt.Sprintf("Content type %s not allowed for purpose %s", detected, purpose.Name)}
	}
	return purpose, detected, nil
}

// sniffContentType names the file's type from its magic numbers, among the
// types some purpose allows; "" for anything else.
func sniffContentType(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg"
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case len(b) >= 12 && bytes.Equal(b[:4], []byte("RIFF")) && bytes.Equal(b[8:12], []byte("WEBP")):
		return "image/webp"
	case bytes.HasPrefix(b, []byte("%PDF-")):
		return "application/pdf"
	case isSVG(b):
		return "image/svg+xml"
	}
	return ""
}

// isSVG accepts UTF-8 text that, past an optional byte order mark, XML
// declaration, comments and doctype, opens an <svg> element.
func isSVG(b []byte) bool {
	head := b[:min(len(b), 1024)]
	head = bytes.TrimPrefix(head, []byte("\xEF\xBB\xBF"))
	if !utf8.Valid(b) {
		return false
	}
	for {
		head = bytes.TrimLeft(head, " \t\r\n")
		switch {
		case bytes.HasPrefix(head, []byte("<svg")):
			return len(head) > 4 && (head[4] == ' ' || head[4] == '>' || head[4] == '\n' || head[4] == '\t' || head[4] == '\r')
		case bytes.HasPrefix(head, []byte("<?xml")):
			i := bytes.Index(head, []byte("?>"))
			if i < 0 {
				return false
			}
			head = head[i+2:]
		case bytes.HasPrefix(head, []byte("<!--")):
			i := bytes.Index(head, []byte("-->"))
			if i < 0 {
				return false
			}
			head = head[i+3:]
		case bytes.HasPrefix(head, []byte("<!DOCTYPE")):
			i := bytes.IndexByte(head, '>')
			if i < 0 {
				return false
			}
			head = head[i+1:]
		default:
			return false
		}
	}
}
