package redact

import "unsafe"

// The Redactor's fast path. Almost every body a client sends is ASCII JSON
// with no escapes; for those, redactFast rewrites the body in one pass over
// its bytes, with each member name judged once and remembered, and
// produces exactly what the token-by-token path (Redactor.token) would.
// Anything else (an escape, a byte outside ASCII, a control character,
// malformed JSON, deep nesting) is left to that path, which stays the
// definition; FuzzRedactFastAgrees holds the two to the same output.

// nameClass is what rules 1 and 3 say of a member name.
type nameClass uint8

const (
	nameMasked nameClass = 1 << iota
	nameExempt
)

const (
	// redactNamesMax bounds the remembered names: clients choose them.
	redactNamesMax = 1024
	// redactFastDepthMax is the deepest nesting the fast path takes.
	redactFastDepthMax = 32
)

// classOf judges a member name, remembering the verdict.
func (r *Redactor) classOf(name []byte) nameClass {
	if c, ok := r.names[string(name)]; ok {
		return c
	}
	s := string(name)
	var c nameClass
	if maskedName(s) {
		c |= nameMasked
	}
	if exemptName(s) {
		c |= nameExempt
	}
	if r.names == nil {
		r.names = make(map[string]nameClass)
	}
	if len(r.names) < redactNamesMax {
		r.names[s] = c
	}
	return c
}

// fastFrame is one open object or array of the fast path.
type fastFrame struct {
	object bool
	// class is the name the frame's values are judged by: an object's
	// current member name, an array's own; hasName is false at the top
	// and for the empty name.
	class   nameClass
	hasName bool
	masked  bool // rule 1 applies to everything inside
}

// redactFast appends the redacted body to out; false when the body is not
// for the fast path.
func (r *Redactor) redactFast(body, out []byte) ([]byte, bool) {
	var stack [redactFastDepthMax]fastFrame
	depth := 0
	i := 0
	done := false // one whole value was written
	for {
		i = skipSpace(body, i)
		if i == len(body) {
			return out, done && depth == 0
		}
		if done {
			return out, false
		}
		var top *fastFrame
		if depth > 0 {
			top = &stack[depth-1]
		}
		c := body[i]
		// The end of an object or an array.
		if top != nil && (top.object && c == '}' || !top.object && c == ']') {
			if out[len(out)-1] == ',' {
				return out, false // a trailing comma
			}
			out = append(out, c)
			i++
			depth--
			out, i, done = r.afterValue(body, out, i, depth, &stack)
			if out == nil {
				return nil, false
			}
			continue
		}
		// A member name.
		if top != nil && top.object {
			if c != '"' {
				return out, false
			}
			end, ok := stringEnd(body, i)
			if !ok {
				return out, false
			}
			name := body[i+1 : end]
			out = append(out, body[i:end+1]...)
			i = skipSpace(body, end+1)
			if i == len(body) || body[i] != ':' {
				return out, false
			}
			out = append(out, ':')
			i = skipSpace(body, i+1)
			if i == len(body) {
				return out, false
			}
			top.hasName = len(name) > 0
			top.class = 0
			if top.hasName {
				top.class = r.classOf(name)
			}
			c = body[i]
		}
		// A value, judged by the name it sits under.
		var class nameClass
		hasName, masked := false, false
		if top != nil {
			class, hasName, masked = top.class, top.hasName, top.masked
		}
		if hasName && !masked {
			masked = class&nameMasked != 0
		}
		exempt := hasName && class&nameExempt != 0
		switch {
		case c == '{' || c == '[':
			if depth == redactFastDepthMax {
				return out, false
			}
			stack[depth] = fastFrame{object: c == '{', class: class, hasName: hasName, masked: masked}
			depth++
			out = append(out, c)
			i++
			continue
		case c == '"':
			end, ok := stringEnd(body, i)
			if !ok {
				return out, false
			}
			switch {
			case masked:
				out = append(out, `"`+Mask+`"`...)
			case exempt:
				out = append(out, body[i:end+1]...)
			default:
				s := unsafe.String(unsafe.SliceData(body[i+1:end]), end-i-1)
				if red := redactString(s); red != s {
					out = append(out, '"')
					out = append(out, red...)
					out = append(out, '"')
				} else {
					out = append(out, body[i:end+1]...)
				}
			}
			i = end + 1
		case c == '-' || c >= '0' && c <= '9':
			end, ok := numberEnd(body, i)
			if !ok {
				return out, false
			}
			num := unsafe.String(unsafe.SliceData(body[i:end]), end-i)
			if masked || !exempt && digitRun(num) >= 7 {
				out = append(out, `"`+Mask+`"`...)
			} else {
				out = append(out, num...)
			}
			i = end
		default:
			end := literalEnd(body, i)
			if end < 0 {
				return out, false
			}
			out = append(out, body[i:end]...)
			i = end
		}
		out, i, done = r.afterValue(body, out, i, depth, &stack)
		if out == nil {
			return nil, false
		}
	}
}

// afterValue reads what follows a value: a comma inside an object or
// array (written), or nothing. done reports the top-level value complete.
// A nil out means malformed input.
func (r *Redactor) afterValue(body, out []byte, i, depth int, stack *[redactFastDepthMax]fastFrame) ([]byte, int, bool) {
	if depth == 0 {
		return out, i, true
	}
	i = skipSpace(body, i)
	if i == len(body) {
		return nil, i, false
	}
	switch body[i] {
	case ',':
		return append(out, ','), i + 1, false
	case '}':
		if !stack[depth-1].object {
			return nil, i, false
		}
	case ']':
		if stack[depth-1].object {
			return nil, i, false
		}
	default:
		return nil, i, false
	}
	return out, i, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index of the closing quote of the string starting
// at b[i]; false for an escape, a control character or a byte outside
// ASCII, which the fast path leaves alone.
func stringEnd(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return 0, false
		}
	}
	return 0, false
}

// numberEnd returns the end of the JSON number starting at b[i].
func numberEnd(b []byte, i int) (int, bool) {
	j := i
	if b[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j - k
	}
	if j < len(b) && b[j] == '0' {
		j++
	} else if digits() == 0 {
		return 0, false
	}
	if j < len(b) && b[j] == '.' {
		j++
		if digits() == 0 {
			return 0, false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	if j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || isLetter(b[j])) {
		return 0, false
	}
	return j, true
}

// literalEnd returns the end of true, false or null at b[i]; -1 if none.
func literalEnd(b []byte, i int) int {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
			end := i + len(lit)
			if end < len(b) && isAlnum(b[end]) {
				return -1
			}
			return end
		}
	}
	return -1
}
