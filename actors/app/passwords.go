package app

import (
	"bufio"
	"crypto/rand"
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

// Team members' passwords: hashed with argon2id, and the rules a new
// password meets (a minimum length, and not one of the common passwords).
// The ledger keeps only the hashes.

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

// checkPassword says what is wrong with a new password, "" when nothing:
// too short, too long, or one of the common passwords (case aside, and
// with the email address's name part treated as common too).
func checkPassword(password, email string) string {
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

// hashPassword returns the argon2id hash of password in the PHC string
// form: $argon2id$v=19$m=…,t=…,p=…$salt$hash (unpadded base64).
func hashPassword(password string) string {
	salt := make([]byte, argonSaltLen)
	rand.Read(salt)
	key := argonKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

var errBadHash = errors.New("app: not an argon2id hash of this form")

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
var decoyHash = sync.OnceValue(func() string { return hashPassword("not a password anyone has: decoy") })

// verifyDecoy spends the time of a password check, for a sign-in that
// names no member.
func verifyDecoy(password string) { VerifyPassword(decoyHash(), password) }
