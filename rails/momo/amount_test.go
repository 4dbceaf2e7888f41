package momo

import "testing"

// amountForm is how parseAmount and formatAmount take an amount's text.
type amountForm int

const (
	canonical amountForm = iota // formatAmount writes it for the amount, parseAmount reads it back
	accepted                    // parseAmount reads it, though it is not what formatAmount writes
	refused                     // parseAmount refuses it
)

// amountTexts are MoMo amount texts at an exponent, each with the minor
// units it stands for (0 for a refused one).
var amountTexts = []struct {
	name  string
	text  string
	exp   int
	minor int64
	form  amountForm
}{
	{"whole", "12", 2, 1200, canonical},
	{"one decimal", "12.5", 2, 1250, canonical},
	{"two decimals", "12.34", 2, 1234, canonical},
	{"under one", "0.05", 2, 5, canonical},
	{"no decimals", "5000", 0, 5000, canonical},
	{"three decimals", "1.001", 3, 1001, canonical},
	{"large", "9223372036854775.8", 2, 922337203685477580, canonical},
	{"a trailing zero", "12.50", 2, 1250, accepted},
	{"trailing zeros are not precision", "12.500", 2, 1250, accepted},
	{"more decimals are never rounded", "12.345", 2, 0, refused},
	{"zero", "0", 2, 0, accepted},
	{"negative", "-1", 2, 0, refused},
	{"an exponent", "1e3", 2, 0, refused},
	{"empty", "", 2, 0, refused},
	{"out of range", "99999999999999999999", 0, 0, refused},
}

func TestAmountRoundTrip(t *testing.T) {
	for _, c := range amountTexts {
		if c.form != canonical {
			continue
		}
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
	for _, c := range amountTexts {
		got, err := parseAmount(c.text, c.exp)
		if wantErr := c.form == refused; (err != nil) != wantErr || got != c.minor {
			t.Errorf("parseAmount(%q, %d) = %d, %v; want %d, error %v", c.text, c.exp, got, err, c.minor, wantErr)
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
