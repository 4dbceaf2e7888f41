package requestrecord

import (
	"encoding/binary"
	"errors"
	"strings"
	"time"

	"github.com/goccy/go-json/jsontext"

	json "github.com/goccy/go-json/v2"
)

// A record as the recorder stores it: a compact binary form, rendered as
// JSON (recordJSON) only when someone reads it. Its organization and its
// node are the store's, not repeated here.
//
//	format  1 byte    Format
//	start   8 bytes   unix nanoseconds, big-endian
//	status, durationMicros, bodyBytes   uvarint each
//	actor   1 byte    ActorAPIKey, ActorFailedKey, ActorAnonymous or ActorMember
//	then, each a uvarint length and its bytes: id, method, path (redacted),
//	query (redacted), error code, client IP, key id, key hint, content
//	type, body (redacted JSON; empty for none)
const Format = 1

// Who made a request (Record.Actor).
const (
	ActorAPIKey    = 1 // an authenticated key
	ActorFailedKey = 2 // a failed authentication with one of our keys, revoked
	ActorAnonymous = 3 // a failed authentication with a key not ours
	ActorMember    = 4 // a dashboard team member (the key id field holds the member's id)
)

// Record is a record's members in the order of the layout. Append reads
// them without keeping them, so its strings may view a buffer; Decode's
// body aliases the bytes it was decoded from.
type Record struct {
	Start                                 time.Time
	Status                                int
	DurationMicros                        int64
	BodyBytes                             int
	Actor                                 byte
	ID, Method, Path, Query, Code         string
	ClientIP, KeyID, KeyHint, ContentType string
	Body                                  []byte // redacted JSON; empty for none
}

var errRecord = errors.New("request log: malformed record")

// Append appends r's stored form to b.
func Append(b []byte, r *Record) []byte {
	b = append(b, Format)
	b = binary.BigEndian.AppendUint64(b, uint64(r.Start.UnixNano()))
	b = binary.AppendUvarint(b, uint64(r.Status))
	b = binary.AppendUvarint(b, uint64(max(r.DurationMicros, 0)))
	b = binary.AppendUvarint(b, uint64(max(r.BodyBytes, 0)))
	b = append(b, r.Actor)
	for _, s := range [...]string{r.ID, r.Method, r.Path, r.Query, r.Code, r.ClientIP, r.KeyID, r.KeyHint, r.ContentType} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(r.Body)))
	return append(b, r.Body...)
}

// Decode reads a record Append wrote.
func Decode(v []byte) (Record, error) {
	var r Record
	if len(v) < 1+8 || v[0] != Format {
		return r, errRecord
	}
	r.Start = time.Unix(0, int64(binary.BigEndian.Uint64(v[1:])))
	v = v[9:]
	var nums [3]uint64
	for i := range nums {
		n, k := binary.Uvarint(v)
		if k <= 0 {
			return r, errRecord
		}
		nums[i], v = n, v[k:]
	}
	r.Status, r.DurationMicros, r.BodyBytes = int(nums[0]), int64(nums[1]), int(nums[2])
	if len(v) == 0 {
		return r, errRecord
	}
	r.Actor, v = v[0], v[1:]
	for _, s := range r.strings() {
		field, rest, ok := uvarintBytes(v)
		if !ok {
			return r, errRecord
		}
		*s, v = string(field), rest
	}
	body, rest, ok := uvarintBytes(v)
	if !ok || len(rest) != 0 {
		return r, errRecord
	}
	r.Body = body
	return r, nil
}

// strings are r's string members in the order of the layout.
func (r *Record) strings() [9]*string {
	return [...]*string{&r.ID, &r.Method, &r.Path, &r.Query, &r.Code, &r.ClientIP, &r.KeyID, &r.KeyHint, &r.ContentType}
}

func uvarintBytes(v []byte) (field, rest []byte, ok bool) {
	n, k := binary.Uvarint(v)
	if k <= 0 || n > uint64(len(v)-k) {
		return nil, nil, false
	}
	return v[k : k+int(n)], v[k+int(n):], true
}

// recordJSON is a record as GET /v1/requests shows it.
type recordJSON struct {
	ID             string         `json:"id"`
	Method         string         `json:"method"`
	Path           string         `json:"path"`
	Query          *string        `json:"query"`
	Status         int            `json:"status"`
	Error          *string        `json:"error"`
	DurationMicros int64          `json:"durationMicros"`
	ClientIP       *string        `json:"clientIp"`
	Actor          actorJSON      `json:"actor"`
	KeyID          *string        `json:"keyId"`
	OrganizationID *string        `json:"organizationId"`
	CreatedAt      string         `json:"createdAt"`
	ContentType    *string        `json:"contentType"`
	BodyBytes      int            `json:"bodyBytes"`
	Body           jsontext.Value `json:"body"`
}

// actorJSON is who made a request: an API key ("api_key", its id; for a
// failed authentication with a revoked key, that key and its hint), a
// dashboard team member ("member", its id), or, for a failed
// authentication with a key not ours, nobody known ("anonymous", with the
// presented key's hint when it had our keys' shape).
type actorJSON struct {
	Type    string  `json:"type"`
	ID      *string `json:"id"`
	KeyHint *string `json:"keyHint,omitempty"`
}

// timeLayout is the API's timestamp layout (core.TimeLayout).
const timeLayout = "2006-01-02T15:04:05.000Z"

// Render returns a stored record of org as GET /v1/requests shows it.
func Render(v []byte, org string) ([]byte, error) {
	r, err := Decode(v)
	if err != nil {
		return nil, err
	}
	// A path or a header may hold bytes that are not UTF-8 (a path
	// escape decodes to any byte); JSON strings may not.
	for _, f := range r.strings() {
		*f = strings.ToValidUTF8(*f, "\uFFFD")
	}
	rec := recordJSON{
		ID:             r.ID,
		Method:         r.Method,
		Path:           r.Path,
		Query:          optional(r.Query),
		Status:         r.Status,
		Error:          optional(r.Code),
		DurationMicros: r.DurationMicros,
		ClientIP:       optional(r.ClientIP),
		KeyID:          optional(r.KeyID),
		OrganizationID: optional(org),
		CreatedAt:      r.Start.UTC().Format(timeLayout),
		ContentType:    optional(r.ContentType),
		BodyBytes:      r.BodyBytes,
		Body:           jsontext.Value("null"),
	}
	if len(r.Body) > 0 && jsontext.Value(r.Body).IsValid() {
		rec.Body = r.Body // the redactor's output: valid JSON, unless damaged
	}
	switch r.Actor {
	case ActorMember:
		rec.Actor, rec.KeyID = actorJSON{Type: "member", ID: optional(r.KeyID)}, nil
	case ActorAPIKey:
		rec.Actor = actorJSON{Type: "api_key", ID: optional(r.KeyID)}
	case ActorFailedKey:
		rec.Actor = actorJSON{Type: "api_key", ID: optional(r.KeyID), KeyHint: optional(r.KeyHint)}
	default:
		rec.Actor = actorJSON{Type: "anonymous", KeyHint: optional(r.KeyHint)}
	}
	return json.Marshal(&rec)
}

// optional is nil for "", as the record's JSON shows an absent member.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Fields are the members of a record the list's filters read.
type Fields struct {
	Status int
	Method string
	Path   string
	KeyID  *string
}

// FieldsOf reads the filtered members of a stored record.
func FieldsOf(v []byte) (Fields, bool) {
	var f Fields
	r, err := Decode(v)
	if err != nil {
		return f, false
	}
	f.Status, f.Method, f.Path, f.KeyID = r.Status, r.Method, r.Path, optional(r.KeyID)
	if r.Actor == ActorMember {
		f.KeyID = nil // a member's id, which the record shows as its actor, not as a key
	}
	return f, true
}
