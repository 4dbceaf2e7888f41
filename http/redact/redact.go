// Package redact is the request log's redaction: what the log keeps of a
// request body, its query and its path. A log that copied bodies would be
// a second store of every customer's account numbers, phone numbers,
// names and addresses, readable by anyone holding a key, and of every
// secret sent to us; the rules below mask those before a record is
// written. They err on the side of masking: a masked order reference
// costs a support call, a leaked phone number does not come back.
//
// Masking replaces a value (a string or a number) with the string
// "[redacted]"; the body keeps its shape: every member name, every array's
// length, booleans and nulls.
//
//  1. By member name. Names are compared lower-cased without '_', '-' and
//     spaces, so accountNumber, account_number and Account-Number are one
//     name. A member whose name falls in a category below is masked with
//     everything inside it (an object or array under "kyc" is masked leaf
//     by leaf):
//     - account numbers: containing accountnumber, iban, bban, cardnumber,
//     routingnumber, sortcode, msisdn; or exactly pan or account;
//     - phone numbers: containing phone, or exactly mobile, mobilenumber;
//     - addresses, postal and crypto: containing address, or exactly
//     line1, line2, line3, street, city, postalcode, postcode, zip,
//     zipcode, memo, tag, destinationtag;
//     - names: ending in name (name, firstName, accountName, …) except
//     bankname, or exactly holder, accountholder;
//     - emails: containing email;
//     - KYC: containing kyc, birth, nationalid, idnumber, document,
//     passport, taxid, selfie, identity, nationality; or exactly dob,
//     ssn, bvn, nin, tin, gender;
//     - secrets and signing material: containing secret, password,
//     passphrase, token, apikey, privatekey, mnemonic, signature,
//     signing, authorization, credential; or exactly key, seed, otp, pin,
//     cvv, cvc;
//     - free text, where names hide that no shape reveals ("refund for
//     Ama Mensah"): containing narration, description, note, comment,
//     message, reason, remark.
//  2. By shape, on every other string, whatever its name (metadata, free
//     text such as a narration): a string is masked whole when it holds
//     an email address (text@text.text); a run of 7 or more digits (single
//     spaces, dashes, dots or parentheses between digits continue the
//     run: phone, account and card numbers); an IBAN (two letters, two
//     digits, 11 to 30 letters or digits, spaces ignored); or a word of 24
//     or more letters and digits mixing both (crypto addresses in every
//     chain's alphabet, API keys, tokens). A URL keeps its scheme, host and
//     the path segments that pass these rules; its user information, query
//     and fragment are masked. A number with 7 or more digits is masked
//     too (a phone number sent as a number). An RFC 3339 timestamp is
//     not masked for its digits.
//  3. Exempt from rule 2, so that a log stays useful: members named id or
//     ending in id (payoutId, …), externalReference, currency, country,
//     code, status, type, purpose, chain, network, method, and names
//     holding amount, fee, rate, limit, total, price or balance, and
//     names ending in at, date or time (createdAt, expiresAt). Rule 1
//     still applies to them (nationalId is masked).
//  4. The query string: each parameter is judged as a body member of its
//     name (rules 1 to 3). The path: each segment is judged by rule 2,
//     except this service's own identifiers (pay_…, req_…).
//  5. Only JSON bodies are kept (Content-Type application/json, at most
//     package http's requestBodyLoggedBytesMax bytes, valid UTF-8 JSON); of
//     any other body the log keeps only its size and content type.
//     Headers are not kept: the Authorization header of a failed
//     authentication is kept as the key's prefix and last four characters
//     only (package http's keyHintOf). Rule 5 is the caller's; this
//     package applies rules 1 to 4.
package redact

import (
	"bytes"
	"errors"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/goccy/go-json/jsontext"
)

// Mask is what a masked value becomes.
const Mask = "[redacted]"

// maskedNameContains and maskedNameExact are rule 1's names, normalized.
var (
	maskedNameContains = []string{
		"accountnumber", "iban", "bban", "cardnumber", "routingnumber", "sortcode", "msisdn",
		"phone",
		"address",
		"email",
		"kyc", "birth", "nationalid", "idnumber", "document", "passport", "taxid", "selfie", "identity", "nationality",
		"secret", "password", "passphrase", "token", "apikey", "privatekey", "mnemonic", "signature", "signing", "authorization", "credential",
		"narration", "description", "note", "comment", "message", "reason", "remark",
	}
	maskedNameExact = map[string]bool{
		"pan": true, "account": true,
		"mobile": true, "mobilenumber": true,
		"line1": true, "line2": true, "line3": true, "street": true, "city": true, "postalcode": true,
		"postcode": true, "zip": true, "zipcode": true, "memo": true, "tag": true, "destinationtag": true,
		"holder": true, "accountholder": true,
		"dob": true, "ssn": true, "bvn": true, "nin": true, "tin": true, "gender": true,
		"key": true, "seed": true, "otp": true, "pin": true, "cvv": true, "cvc": true,
	}
	exemptNameExact = map[string]bool{
		"externalreference": true, "currency": true, "country": true, "code": true, "status": true,
		"type": true, "purpose": true, "chain": true, "network": true, "method": true,
	}
	exemptNameContains = []string{"amount", "fee", "rate", "limit", "total", "price", "balance"}
)

// normalizeName lower-cases a member name and drops '_', '-' and spaces.
func normalizeName(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_' || c == '-' || c == ' ':
		case c >= 'A' && c <= 'Z':
			b.WriteByte(c + 'a' - 'A')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// maskedName is rule 1: the member's value is masked whole.
func maskedName(name string) bool {
	n := normalizeName(name)
	return maskedNameExact[n] || (strings.HasSuffix(n, "name") && n != "bankname") || containsAny(n, maskedNameContains)
}

// exemptName is rule 3: the member's value is not judged by its shape.
func exemptName(name string) bool {
	n := normalizeName(name)
	return exemptNameExact[n] || strings.HasSuffix(n, "id") ||
		strings.HasSuffix(n, "at") || strings.HasSuffix(n, "date") || strings.HasSuffix(n, "time") ||
		containsAny(n, exemptNameContains)
}

// containsAny reports whether s contains any of parts.
func containsAny(s string, parts []string) bool {
	for _, part := range parts {
		if strings.Contains(s, part) {
			return true
		}
	}
	return false
}

// sensitiveShape is rule 2 for a string.
func sensitiveShape(s string) bool {
	if len(s) >= 20 && s[10] == 'T' {
		if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return false // a timestamp: digits, but no one's
		}
	}
	return hasEmail(s) || digitRun(s) >= 7 || hasIBAN(s) || hasLongToken(s)
}

func hasEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	for at >= 0 {
		if at > 0 && !isSpace(s[at-1]) {
			rest := s[at+1:]
			end := strings.IndexFunc(rest, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '@' })
			if end < 0 {
				end = len(rest)
			}
			if dot := strings.IndexByte(rest[:end], '.'); dot > 0 && dot < end-1 {
				return true
			}
		}
		next := strings.IndexByte(s[at+1:], '@')
		if next < 0 {
			break
		}
		at += 1 + next
	}
	return false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// digitRun is the longest run of digits in s, where one separator (space,
// dash, dot, parenthesis) between two digits continues the run.
func digitRun(s string) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			run++
			longest = max(longest, run)
		case (c == ' ' || c == '-' || c == '.' || c == '(' || c == ')') && run > 0 && i+1 < len(s) && isDigit(s[i+1]):
		default:
			run = 0
		}
	}
	return longest
}

// hasIBAN finds two letters, two digits and 11 to 30 letters or digits,
// spaces ignored.
func hasIBAN(s string) bool {
	var compact []byte
	for i := 0; i < len(s); i++ {
		if s[i] != ' ' {
			compact = append(compact, s[i])
		}
	}
	for i := 0; i+15 <= len(compact); i++ {
		if i > 0 && isAlnum(compact[i-1]) {
			continue
		}
		c := compact[i:]
		if !isLetter(c[0]) || !isLetter(c[1]) || !isDigit(c[2]) || !isDigit(c[3]) {
			continue
		}
		n := 4
		for n < len(c) && isAlnum(c[n]) {
			n++
		}
		if n >= 15 && n <= 34 {
			return true
		}
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// hasLongToken finds a word of 24 or more letters and digits mixing both.
func hasLongToken(s string) bool {
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isAlnum(s[i]) {
			continue
		}
		if w := s[start:i]; len(w) >= 24 && mixed(w) {
			return true
		}
		start = i + 1
	}
	return false
}

func mixed(w string) bool {
	digits, letters := false, false
	for i := 0; i < len(w); i++ {
		if isDigit(w[i]) {
			digits = true
		} else {
			letters = true
		}
	}
	return digits && letters
}

// redactString applies rule 2 to a string that no name rule masked.
func redactString(s string) string {
	if u, ok := strings.CutPrefix(s, "https://"); ok {
		return "https://" + redactURL(u)
	}
	if u, ok := strings.CutPrefix(s, "http://"); ok {
		return "http://" + redactURL(u)
	}
	if sensitiveShape(s) {
		return Mask
	}
	return s
}

// redactURL masks a URL's user information, query and fragment, and the
// path segments rule 2 flags. u is the URL after its scheme.
func redactURL(u string) string {
	var tail string
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u, tail = u[:i], Mask
	}
	host, path, _ := strings.Cut(u, "/")
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = Mask + "@" + host[i+1:]
	}
	var b strings.Builder
	b.WriteString(host)
	if path != "" || strings.Contains(u, "/") {
		b.WriteByte('/')
		b.WriteString(Path(path))
	}
	if tail != "" {
		b.WriteByte('?')
		b.WriteString(tail)
	}
	return b.String()
}

// Path applies rule 2 to each segment of a path (rule 4).
func Path(path string) string {
	if !pathNeedsMask(path) {
		return path // the usual case, without splitting
	}
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if segmentNeedsMask(seg) {
			segs[i] = Mask
		}
	}
	return strings.Join(segs, "/")
}

func pathNeedsMask(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if segmentNeedsMask(seg) {
			return true
		}
	}
	return false
}

func segmentNeedsMask(seg string) bool {
	if seg == "" || isServiceID(seg) {
		return false
	}
	plain := seg
	if strings.IndexByte(seg, '%') >= 0 {
		if p, err := url.PathUnescape(seg); err == nil {
			plain = p
		}
	}
	return sensitiveShape(plain)
}

// isServiceID reports whether s is one of this service's identifiers: a
// lower-case prefix (two at most, as pay_bank_…), an underscore, then 20 or
// more lower-case letters and digits.
func isServiceID(s string) bool {
	parts, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '_' {
			continue
		}
		p := s[start:i]
		last := i == len(s)
		parts++
		if p == "" || parts > 3 || last && (parts < 2 || len(p) < 20) {
			return false
		}
		for j := 0; j < len(p); j++ {
			if c := p[j]; !(c >= 'a' && c <= 'z' || last && isDigit(c)) {
				return false
			}
		}
		start = i + 1
	}
	return true
}

// Query applies rules 1 to 3 to each parameter of a raw query string
// and returns it re-encoded, masked values as the bare mask.
func Query(raw string) string {
	if raw == "" {
		return ""
	}
	var b strings.Builder
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, hasValue := strings.Cut(part, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			value = v
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(name))
		if !hasValue {
			continue
		}
		b.WriteByte('=')
		switch {
		case maskedName(name):
			b.WriteString(Mask)
		case exemptName(name):
			b.WriteString(url.QueryEscape(value))
		default:
			if r := redactString(value); r == Mask {
				b.WriteString(Mask)
			} else {
				b.WriteString(url.QueryEscape(r))
			}
		}
	}
	return b.String()
}

// Redactor rewrites JSON bodies by the rules above. It is owned by one
// goroutine (the recorder), which reuses its buffers.
type Redactor struct {
	names map[string]nameClass // the fast path's judged names (fast.go)
	fast  []byte               // the fast path's output
	in    bytes.Reader
	out   bytes.Buffer
	dec   *jsontext.Decoder
	enc   *jsontext.Encoder
	stack []redactFrame
	whole bool // one whole value was written
}

// redactFrame is one open object or array.
type redactFrame struct {
	object   bool
	haveName bool   // an object's member name was read; its value comes next
	name     string // the member name its values are judged by (an array: its own)
	masked   bool   // rule 1 applies to everything inside
}

// New returns a Redactor.
func New() *Redactor {
	r := &Redactor{}
	opts := []jsontext.Options{jsontext.AllowDuplicateNames(true)}
	r.dec = jsontext.NewDecoder(&r.in, opts...)
	r.enc = jsontext.NewEncoder(&r.out, opts...)
	return r
}

// Body returns the redacted form of a JSON document, valid until the next
// call, or false if body is not one JSON value of valid UTF-8.
func (r *Redactor) Body(body []byte) ([]byte, bool) {
	if out, ok := r.redactFast(body, r.fast[:0]); ok {
		r.fast = out
		return out, true
	}
	return r.bodyByTokens(body)
}

// bodyByTokens is body token by token: the definition of the rules, for
// every body, and the path of those the fast one leaves.
func (r *Redactor) bodyByTokens(body []byte) ([]byte, bool) {
	r.in.Reset(body)
	r.out.Reset()
	r.dec.Reset(&r.in, jsontext.AllowDuplicateNames(true))
	r.enc.Reset(&r.out, jsontext.AllowDuplicateNames(true))
	r.stack, r.whole = r.stack[:0], false
	for {
		tok, err := r.dec.ReadToken()
		if err != nil {
			// The end of the input after one whole value is io.EOF.
			return r.finish(err)
		}
		if err := r.token(tok); err != nil {
			return nil, false
		}
	}
}

func (r *Redactor) finish(err error) ([]byte, bool) {
	if len(r.stack) != 0 || r.out.Len() == 0 || !errors.Is(err, io.EOF) {
		return nil, false
	}
	return bytes.TrimRight(r.out.Bytes(), "\n"), true
}

func (r *Redactor) token(tok jsontext.Token) error {
	if r.whole {
		return errors.New("more than one value")
	}
	defer func() { r.whole = len(r.stack) == 0 }()
	kind := tok.Kind()
	var top *redactFrame
	if n := len(r.stack); n > 0 {
		top = &r.stack[n-1]
	}
	// A member name, or the end of an object.
	if top != nil && top.object && !top.haveName {
		if kind == '"' {
			top.haveName, top.name = true, tok.String()
		} else if kind == '}' {
			r.stack = r.stack[:len(r.stack)-1]
		}
		return r.enc.WriteToken(tok)
	}
	if kind == ']' {
		r.stack = r.stack[:len(r.stack)-1]
		return r.enc.WriteToken(tok)
	}
	// A value: judged by the name it sits under.
	name, masked := "", false
	if top != nil {
		name, masked = top.name, top.masked
		if top.object {
			top.haveName = false
		}
	}
	if name != "" && !masked {
		masked = maskedName(name)
	}
	switch kind {
	case '{', '[':
		r.stack = append(r.stack, redactFrame{object: kind == '{', name: name, masked: masked})
		return r.enc.WriteToken(tok)
	case '"':
		switch {
		case masked:
			return r.enc.WriteToken(jsontext.String(Mask))
		case name != "" && exemptName(name):
			return r.enc.WriteToken(tok)
		default:
			s := tok.String()
			if red := redactString(s); red != s {
				return r.enc.WriteToken(jsontext.String(red))
			}
			return r.enc.WriteToken(tok)
		}
	case '0':
		if masked || !(name != "" && exemptName(name)) && digitRun(tok.String()) >= 7 {
			return r.enc.WriteToken(jsontext.String(Mask))
		}
		return r.enc.WriteToken(tok)
	default: // true, false, null
		return r.enc.WriteToken(tok)
	}
}
