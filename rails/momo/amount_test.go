package momo

import "testing"

func TestAmountRoundTrip(t *testing.T) {
	cases := []struct {
		name  string
		minor int64
		exp   int
		text  string
	}{
		{"whole", 1200, 2, "12"},
		{"one decimal", 1250, 2, "12.5"},
		{"two decimals", 1234, 2, "12.34"},
		{"under one", 5, 2, "0.05"},
		{"no decimals", 5000, 0, "5000"},
		{"three decimals", 1001, 3, "1.001"},
		{"large", 922337203685477580, 2, "9223372036854775.8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := formatAmount(c.minor, c.exp)
			if err != nil || got != c.text {
				t.Fatalf("formatAmount(%d, %d) = %q, %v; want %q", c.minor, c.exp, got, err, c.text)
			}
			back, err := parseAmount(got, c.exp)
			if err != nil || back != c.minor {
				t.Fatalf("parseAmount(%q) = %d, %v; want %d", got, back, err, c.minor)
			}
		})
	}
}

func TestParseAmount(t *testing.T) {
	cases := []struct {
		text    string
		exp     int
		want    int64
		wantErr bool
	}{
		{"12.50", 2, 1250, false},
		{"12.500", 2, 1250, false}, // trailing zeros are not precision
		{"12.345", 2, 0, true},     // never rounded
		{"0", 2, 0, false},
		{"-1", 2, 0, true},
		{"1e3", 2, 0, true},
		{"", 2, 0, true},
		{"99999999999999999999", 0, 0, true},
	}
	for _, c := range cases {
		got, err := parseAmount(c.text, c.exp)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("parseAmount(%q, %d) = %d, %v; want %d, error %v", c.text, c.exp, got, err, c.want, c.wantErr)
		}
	}
	if _, err := formatAmount(0, 2); err == nil {
		t.Error("a zero amount was formatted")
	}
}

func TestReferenceID(t *testing.T) {
	a := &product{name: disbursement, creds: Credentials{}}
	a.creds.APIUser = secret("user-a")
	b := &product{name: disbursement, creds: Credentials{}}
	b.creds.APIUser = secret("user-b")
	k := referenceID(a, "pay_1")
	if !validReferenceID(k) {
		t.Fatalf("%q is not a version 4 UUID", k)
	}
	if referenceID(a, "pay_1") != k {
		t.Fatal("not deterministic")
	}
	if referenceID(a, "pay_2") == k || referenceID(b, "pay_1") == k {
		t.Fatal("keys collide")
	}
	for _, bad := range []string{"", "not-a-uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-42d3-c456-426614174000"} {
		if validReferenceID(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}
