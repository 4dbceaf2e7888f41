// Package dashauth holds what the dashboard's pages need of its
// credentials: the CSRF tokens derived from a session's token (or from the
// token of the forms shown before a session), and the sign-in, setup,
// invitation and team pages. Passwords, sessions and one-time links are
// the application's (package actors/app): it hashes and checks passwords
// and draws the tokens.
package dashauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
)

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
