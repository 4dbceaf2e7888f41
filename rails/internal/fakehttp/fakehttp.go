package fakehttp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
)

// RequestLogMax bounds a long-running fake's request log: past it the
// older half is forgotten.
const RequestLogMax = 100_000

// Record appends r to log, first forgetting the older half of a log that
// holds RequestLogMax requests.
func Record[R any](log []*R, r *R) []*R {
	if len(log) >= RequestLogMax {
		log = append(log[:0], log[RequestLogMax/2:]...)
	}
	return append(log, r)
}

// Copies returns the requests log points to, in order, as values: what a
// fake's Requests answers, safe from the fake's later writes.
func Copies[R any](log []*R) []R {
	out := make([]R, len(log))
	for i, r := range log {
		out[i] = *r
	}
	return out
}

// NextFault takes the first fault queued for op off faults; nil when none
// is queued.
func NextFault[F any](faults map[string][]F, op string) *F {
	q := faults[op]
	if len(q) == 0 {
		return nil
	}
	f := q[0]
	faults[op] = q[1:]
	return &f
}

// Drop closes w's connection without an answer: a request whose outcome
// the client cannot know.
func Drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// WriteJSON answers status with v as JSON; a nil v answers the status
// alone, with no body.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	if v == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// RandomHex returns n random bytes in hex: credentials, tokens, ids.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
