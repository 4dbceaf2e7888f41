package app

import (
	"strings"
	"testing"
)

func TestPasswordHashVerifies(t *testing.T) {
	h := hashPassword("correct pony staple")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q is not argon2id in PHC form", h)
	}
	if strings.Contains(h, "correct pony") {
		t.Fatal("the hash contains the password")
	}
	if h2 := hashPassword("correct pony staple"); h2 == h {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	for pw, want := range map[string]bool{"correct pony staple": true, "correct pony stapl": false, "": false} {
		ok, err := VerifyPassword(h, pw)
		if err != nil || ok != want {
			t.Errorf("VerifyPassword(%q) = %v, %v; want %v", pw, ok, err, want)
		}
	}
	for _, bad := range []string{"", "$2a$10$abc", "$argon2id$v=19$m=0,t=2,p=1$c2FsdA$aGFzaA", "$argon2id$v=19$m=99999999,t=2,p=1$c2FsdA$aGFzaA", "$argon2i$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA"} {
		if _, err := VerifyPassword(bad, "x"); err == nil {
			t.Errorf("VerifyPassword accepted the hash %q", bad)
		}
	}
}

func TestCheckPassword(t *testing.T) {
	for _, c := range []struct {
		password, email string
		ok              bool
	}{
		{"short", "a@b.example", false},
		{"Password123", "a@b.example", false}, // common, case aside
		{"qwertyuiop", "a@b.example", false},
		{"iloveyou123", "a@b.example", false},
		{"aaaaaaaaaaaa", "a@b.example", false},
		{"kwame.mensah-2026", "kwame.mensah@b.example", false},
		{strings.Repeat("x", 200) + "y" + strings.Repeat("z", 100), "a@b.example", false},
		{"violet tractor sings", "a@b.example", true},
		{"çàéèü-mot-de-passe", "a@b.example", true},
	} {
		if got := checkPassword(c.password, c.email) == ""; got != c.ok {
			t.Errorf("checkPassword(%q) accepts = %v, want %v (%s)", c.password, got, c.ok, checkPassword(c.password, c.email))
		}
	}
	if len(common) < 1000 {
		t.Fatalf("the common list has %d entries", len(common))
	}
}

// A stored hash is parsed before use: whatever its bytes, verifying
// against it answers (no panic), and accepts only a password it was made
// from.
func FuzzVerifyPassword(f *testing.F) {
	f.Add(hashPassword("violet tractor sings"), "violet tractor sings")
	f.Add("$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", "x")
	f.Add("$argon2id$v=19$m=8,t=1,p=1$$", "")
	f.Add("$$$$$", "")
	f.Fuzz(func(t *testing.T, hash, password string) {
		if strings.Contains(hash, "m=") && !strings.Contains(hash, "m=8,") && !strings.HasPrefix(hash, "$argon2id$v=19$m=19456,") {
			t.Skip("bounded to cheap parameters, to keep the fuzzer fast")
		}
		ok, err := VerifyPassword(hash, password)
		if err != nil && ok {
			t.Fatal("an error and a match")
		}
	})
}
