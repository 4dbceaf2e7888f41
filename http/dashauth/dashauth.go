// Package dashauth holds the dashboard's credentials: passwords hashed with
// argon2id and the rules a new password meets (a minimum length and a
// list of common passwords it must not be), the random tokens of sessions
// and one-time links with the SHA-256 that the ledger keeps of them, and
// the CSRF tokens derived from a session's token.
package dashauth

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: OWASP's first recommended set (19 MiB, two
// passes, one lane). A hash carries its own, so that they can grow
// without invalidating the hashes already stored.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

// Password rules.
const (
	PasswordLenMin = 10 // characters
	// PasswordBytesMax bounds what is hashed, and what a sign-in form may
	// make the server hash.
	PasswordBytesMax = 256
)

//go:embed common-passwords.txt
var commonList string

var common = func() map[string]struct{} {
	m := make(map[string]struct{}, 3000)
	sc := bufio.NewScanner(strings.NewReader(commonList))
	for sc.Scan() {
		if w := strings.TrimSpace(sc.Text()); w != "" && !strings.HasPrefix(w, "#") {
			m[w] = struct{}{}
		}
	}
	return m
}()

// CheckPassword says what is wrong with a new password, "" when nothing:
// too short, too long, or one of the common passwords (case aside, and
// with the email address's name part treated as common too).
func CheckPassword(password, email string) string {
	switch {
	case utf8.RuneCountInString(password) < PasswordLenMin:
		return fmt.Sprintf("must be at least %d characters", PasswordLenMin)
	case len(password) > PasswordBytesMax:
		return fmt.Sprintf("must be at most %d bytes", PasswordBytesMax)
	}
	lower := strings.ToLower(password)
	if _, ok := common[lower]; ok {
		return "is one of the most common passwords, which are tried first: choose another"
	}
	if name, _, ok := strings.Cut(strings.ToLower(email), "@"); ok && len(name) >= 4 && strings.Contains(lower, name) {
		return "must not contain your email address"
	}
	if strings.Count(lower, lower[:1]) == len(lower) {
		return "must not be one character repeated"
	}
	return ""
}

// hashSlots bounds the argon2id computations under way, each of which
// takes argonMemoryKiB: a burst of sign-ins waits its turn rather than
// taking memory without limit.
var hashSlots = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))

func argonKey(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
	hashSlots <- struct{}{}
	defer func() { <-hashSlots }()
	return argon2.IDKey(password, salt, time, memory, threads, keyLen)
}

// HashPassword returns the argon2id hash of password in the PHC string
// form: $argon2id$v=19$m=…,t=…,p=…$salt$hash (unpadded base64).
func HashPassword(password string) string {
	salt := make([]byte, argonSaltLen)
	rand.Read(salt)
	key := argonKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

var errBadHash = errors.New("dashauth: not an argon2id hash of this form")

// Bounds on the parameters a stored hash may ask for, so that a corrupt
// record cannot make a sign-in allocate without limit.
const (
	argonMemoryKiBMax = 1 << 18 // 256 MiB
	argonTimeMax      = 16
)

// VerifyPassword reports whether password is the one hash was made from,
// in time that does not depend on where they differ.
func VerifyPassword(hash, password string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var memory, time uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &time, &threads); err != nil ||
		memory == 0 || memory > argonMemoryKiBMax || time == 0 || time > argonTimeMax || threads == 0 {
		return false, errBadHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) < 16 || len(want) > 64 || len(salt) < 8 || len(salt) > 64 {
		return false, errBadHash
	}
	if len(password) > PasswordBytesMax {
		return false, nil
	}
	got := argonKey([]byte(password), salt, time, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// decoyHash is verified against when a sign-in names no member, so that
// an unknown address takes as long to refuse as a wrong password.
var decoyHash = sync.OnceValue(func() string { return HashPassword("not a password anyone has: decoy") })

// VerifyDecoy spends the time of a password check, for a sign-in that
// names no member.
func VerifyDecoy(password string) { VerifyPassword(decoyHash(), password) }

// NewToken draws a secret token: 32 random bytes, base64url without
// padding (43 characters), for a session cookie or a one-time link.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// TokenLen is the length of a token NewToken draws.
const TokenLen = 43

// Digest is the SHA-256 of a token: what the ledger keeps and finds it by.
func Digest(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// CSRF derives a session's CSRF token from its session token: only the
// holder of the cookie can compute it, and it needs no storage.
func CSRF(sessionToken string) string {
	m := hmac.New(sha256.New, []byte(sessionToken))
	m.Write([]byte("dashboard csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports whether got is the CSRF token of the session whose
// token is sessionToken.
func CheckCSRF(sessionToken, got string) bool {
	return sessionToken != "" && got != "" && hmac.Equal([]byte(CSRF(sessionToken)), []byte(got))
}
