package fakehttp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
)

// BodyMax bounds the request body a fake reads; the rest is not read.
const BodyMax = 1 << 16

// ReadBody reads r's body, up to BodyMax.
func ReadBody(r *http.Request) []byte {
	body, _ := io.ReadAll(io.LimitReader(r.Body, BodyMax))
	return body
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

// Exchange is one request a fake is serving: its answer's status, or 0
// when it drops the connection, is written into the request's entry in
// the fake's log. It is used under the fake's lock.
type Exchange struct {
	W      http.ResponseWriter
	status *int
}

// NewExchange returns the exchange that answers on w and writes the
// outcome to status, the logged request's.
func NewExchange(w http.ResponseWriter, status *int) Exchange {
	return Exchange{W: w, status: status}
}

// Answer answers status with v as JSON; nil v: no body.
func (ex Exchange) Answer(status int, v any) {
	*ex.status = status
	WriteJSON(ex.W, status, v)
}

// Drop closes the connection without an answer.
func (ex Exchange) Drop() {
	*ex.status = 0
	Drop(ex.W)
}
