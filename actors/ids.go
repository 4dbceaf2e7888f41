package actors

import (
	"crypto/rand"
	"crypto/sha256"
	mrand "math/rand/v2"
)

// Identifiers are a prefix and 20 characters of [a-z0-9]: about 103 bits,
// drawn by the leader and carried in the command, so replay needs no
// randomness.

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

const idRandomLen = 20

// idSource draws identifiers. It is owned by one goroutine (an actor).
type idSource struct {
	rng *mrand.ChaCha8
}

func newIDSource() *idSource {
	var seed [32]byte
	rand.Read(seed[:])
	return &idSource{rng: mrand.NewChaCha8(seed)}
}

// next returns prefix followed by idRandomLen random characters.
func (s *idSource) next(prefix string) string {
	return randomString(prefix, idAlphabet, idRandomLen, func(b []byte) { s.rng.Read(b) })
}

// NewID returns a fresh identifier with the given prefix from the system's
// secure random source. For occasional use; actors keep their own source.
func NewID(prefix string) string {
	return randomString(prefix, idAlphabet, idRandomLen, func(b []byte) { rand.Read(b) })
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
