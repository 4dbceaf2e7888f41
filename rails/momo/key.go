package momo

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// referenceID derives the X-Reference-Id of our instruction id in a
// product: an HMAC of the id under the product's API user, shaped as a
// version 4 UUID (MoMo refuses any other shape). The same instruction
// always gets the same key, so even a caller that prepared twice, or lost
// what it prepared, cannot make MoMo take one instruction twice; keys of
// different API users (environments, deployments) never meet.
func referenceID(p *product, id string) string {
	m := hmac.New(sha256.New, []byte(p.creds.APIUser.Reveal()))
	m.Write([]byte("momo/" + p.name + "/" + id))
	b := m.Sum(nil)[:16]
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// validReferenceID reports whether s has the shape of a version 4 UUID.
func validReferenceID(s string) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' || s[14] != '4' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			continue
		}
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	switch s[19] {
	case '8', '9', 'a', 'b', 'A', 'B':
		return true
	}
	return false
}
