package dashauth

import (
	"strings"
	"testing"

	"payments/actors/app"
)

func TestCSRF(t *testing.T) {
	a, b := app.NewToken(), app.NewToken()
	ca := CSRF(a)
	if !CheckCSRF(a, ca) || CheckCSRF(b, ca) || CheckCSRF(a, "") || CheckCSRF("", CSRF("")) || CheckCSRF(a, ca[:len(ca)-1]) {
		t.Fatal("CSRF check accepts what it must refuse, or refuses its own token")
	}
	if strings.Contains(ca, a) {
		t.Fatal("the CSRF token reveals the session token")
	}
}
