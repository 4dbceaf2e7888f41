package core

import (
	"encoding/binary"
	"errors"
	"strings"
	"time"

	"github.com/goccy/go-json/jsontext"

	json "github.com/goccy/go-json/v2"
)

// A request record as the recorder stores it: a compact binary form,
// written by requestRecorder.encode without reflection on the recorder's
// goroutine and rendered as
// JSON (requestRecordJSON) only when someone reads it. Its organization
// and its node are the store's, not repeated here.
//
//	format  1 byte    requestRecordFormat
//	start   8 bytes   unix nanoseconds, big-endian
//	status, durationMicros, bodyBytes   uvarint each
//	actor   1 byte    actorAPIKey, actorFailedKey, actorAnonymous or actorMember
//	then, each a uvarint length and its bytes: id, method, path (redacted),
//	query (redacted), error code, client IP, key id, key hint, content
//	type, body (redacted JSON; empty for none)
const requestRecordFormat = 1

// Who made a request (requestActor).
const (
	actorAPIKey    = 1 // an authenticated key
	actorFailedKey = 2 // a failed authentication with one of our keys, revoked
	actorAnonymous = 3 // a failed authentication with a key not ours
	actorMember    = 4 // a dashboard team member (the key id field holds the member's id)
)

// requestRecord is a decoded record; its strings and body alias the bytes
// it was decoded from.
type requestRecord struct {
	start                          time.Time
	status                         int
	durationMicros                 int64
	bodyBytes                      int
	actor                          byte
	id, method, path, query, code  string
	clientIP, keyID, keyHint, ctyp string
	body                           []byte
}

var errRequestRecord = errors.New("request log: malformed record")

// decodeRequestRecord reads a record the recorder wrote (requestRecorder.encode).
func decodeRequestRecord(v []byte) (requestRecord, error) {
	var r requestRecord
	if len(v) < 1+8 || v[0] != requestRecordFormat {
		return r, errRequestRecord
	}
	r.start = time.Unix(0, int64(binary.BigEndian.Uint64(v[1:])))
	v = v[9:]
	var nums [3]uint64
	for i := range nums {
		n, k := binary.Uvarint(v)
		if k <= 0 {
			return r, errRequestRecord
		}
		nums[i], v = n, v[k:]
	}
	r.status, r.durationMicros, r.bodyBytes = int(nums[0]), int64(nums[1]), int(nums[2])
	if len(v) == 0 {
		return r, errRequestRecord
	}
	r.actor, v = v[0], v[1:]
	for _, s := range [...]*string{&r.id, &r.method, &r.path, &r.query, &r.code, &r.clientIP, &r.keyID, &r.keyHint, &r.ctyp} {
		field, rest, ok := uvarintBytes(v)
		if !ok {
			return r, errRequestRecord
		}
		*s, v = string(field), rest
	}
	body, rest, ok := uvarintBytes(v)
	if !ok || len(rest) != 0 {
		return r, errRequestRecord
	}
	r.body = body
	return r, nil
}

func uvarintBytes(v []byte) (field, rest []byte, ok bool) {
	n, k := binary.Uvarint(v)
	if k <= 0 || n > uint64(len(v)-k) {
		return nil, nil, false
	}
	return v[k : k+int(n)], v[k+int(n):], true
}

// RenderRequestRecord returns a stored record of org as GET
// /v1/requests shows it.
func RenderRequestRecord(v []byte, org string) ([]byte, error) {
	r, err := decodeRequestRecord(v)
	if err != nil {
		return nil, err
	}
	// A path or a header may hold bytes that are not UTF-8 (a path
	// escape decodes to any byte); JSON strings may not.
	for _, f := range []*string{&r.id, &r.method, &r.path, &r.query, &r.code, &r.clientIP, &r.keyID, &r.keyHint, &r.ctyp} {
		*f = strings.ToValidUTF8(*f, "\uFFFD")
	}
	rec := requestRecordJSON{
		ID:             r.id,
		Method:         r.method,
		Path:           r.path,
		Query:          Optional(r.query),
		Status:         r.status,
		Error:          Optional(r.code),
		DurationMicros: r.durationMicros,
		ClientIP:       Optional(r.clientIP),
		KeyID:          Optional(r.keyID),
		OrganizationID: Optional(org),
		CreatedAt:      r.start.UTC().Format(TimeLayout),
		ContentType:    Optional(r.ctyp),
		BodyBytes:      r.bodyBytes,
		Body:           nullJSON,
	}
	if len(r.body) > 0 && jsontext.Value(r.body).IsValid() {
		rec.Body = r.body // the redactor's output: valid JSON, unless damaged
	}
	switch r.actor {
	case actorMember:
		rec.Actor, rec.KeyID = requestActor{Type: "member", ID: Optional(r.keyID)}, nil
	case actorAPIKey:
		rec.Actor = requestActor{Type: "api_key", ID: Optional(r.keyID)}
	case actorFailedKey:
		rec.Actor = requestActor{Type: "api_key", ID: Optional(r.keyID), KeyHint: Optional(r.keyHint)}
	default:
		rec.Actor = requestActor{Type: "anonymous", KeyHint: Optional(r.keyHint)}
	}
	return json.Marshal(&rec)
}

// requestFields are the members of a record the list's filters read.
type requestFields struct {
	Status int
	Method string
	Path   string
	KeyID  *string
}

// requestFieldsOf reads the filtered members of a stored record.
func RequestFieldsOf(v []byte) (requestFields, bool) {
	var f requestFields
	r, err := decodeRequestRecord(v)
	if err != nil {
		return f, false
	}
	f.Status, f.Method, f.Path, f.KeyID = r.status, r.method, r.path, Optional(r.keyID)
	if r.actor == actorMember {
		f.KeyID = nil // a member's id, which the record shows as its actor, not as a key
	}
	return f, true
}
