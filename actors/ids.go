package actors

import (
	"crypto/rand"
	"crypto/sha256"
	mrand "math/rand/v2"
	"time"
)

// Identifiers are a prefix and 20 characters of [0-9a-z], drawn by the
// leader and carried in the command, so replay needs no randomness: 7
// characters of the second they were drawn in, in base 36 (so that ids
// drawn close in time sort close together, which keeps the state store's
// writes near its end instead of all over it), then 13 random ones (about
// 67 bits; ids drawn in the same second collide with a probability of
// about n²/2^68).

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// idTimeAlphabet sorts as its digits do.
const idTimeAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

const (
	idTimeLen   = 7 // base-36 seconds since 1970: good until the year 4439
	idRandomLen = 13
)

// idSource draws identifiers. It is owned by one goroutine (an actor).
type idSource struct {
	rng *mrand.ChaCha8
}

func newIDSource() *idSource {
	var seed [32]byte
	rand.Read(seed[:])
	return &idSource{rng: mrand.NewChaCha8(seed)}
}

// next returns a fresh identifier with the given prefix.
func (s *idSource) next(prefix string) string {
	return randomString(timePrefix(prefix, time.Now()), idAlphabet, idRandomLen, func(b []byte) { s.rng.Read(b) })
}

// NewID returns a fresh identifier with the given prefix from the system's
// secure random source. For occasional use; actors keep their own source.
func NewID(prefix string) string {
	return randomString(timePrefix(prefix, time.Now()), idAlphabet, idRandomLen, func(b []byte) { rand.Read(b) })
}

// timePrefix appends the second of t, in idTimeLen base-36 digits.
func timePrefix(prefix string, t time.Time) string {
	var digits [idTimeLen]byte
	v := uint64(max(t.Unix(), 0))
	for i := idTimeLen - 1; i >= 0; i-- {
		digits[i] = idTimeAlphabet[v%36]
		v /= 36
	}
	return prefix + string(digits[:])
}

// randomString appends n characters drawn uniformly from alphabet to prefix.
// Bytes that would bias the draw (those at or above the largest multiple of
// the alphabet's size) are rejected.
func randomString(prefix, alphabet string, n int, read func([]byte)) string {
	limit := 256 - 256%len(alphabet)
	var stack [64]byte
	out := stack[:0]
	if len(prefix)+n > len(stack) {
		out = make([]byte, 0, len(prefix)+n)
	}
	out = append(out, prefix...)
	var buf [64]byte
	for len(out) < len(prefix)+n {
		read(buf[:])
		for _, r := range buf {
			if int(r) < limit && len(out) < len(prefix)+n {
				out = append(out, alphabet[int(r)%len(alphabet)])
			}
		}
	}
	return string(out)
}

// API key secrets: "sk_test_" or "sk_live_" and 40 base62 characters
// (about 238 bits). Only their SHA-256 is stored.

const keyAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

const keySecretLen = 40

// KeyPrefix returns the key prefix of a stack.
func KeyPrefix(live bool) string {
	if live {
		return "sk_live_"
	}
	return "sk_test_"
}

// NewKeySecret draws a new API key secret for a stack.
func NewKeySecret(live bool) string {
	return randomString(KeyPrefix(live), keyAlphabet, keySecretLen, func(b []byte) { rand.Read(b) })
}

// HashKey returns the stored form of a key secret: its raw SHA-256.
func HashKey(secret string) string {
	sum := KeyDigest([]byte(secret))
	return string(sum[:])
}

// KeyDigest is the SHA-256 of a key secret, for looking the key up.
func KeyDigest(secret []byte) [32]byte { return sha256.Sum256(secret) }

// KeyHint is the displayable part of a secret: its prefix and last four
// characters.
func KeyHint(secret string) string {
	if len(secret) < 12 {
		return ""
	}
	return secret[:8] + "…" + secret[len(secret)-4:]
}
