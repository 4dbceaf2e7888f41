package rails

import (
	"bytes"
	"strings"
	"testing"

	"payments/ledger"
)

// Every method has a fee schedule for every direction it serves, none is 0
// by omission, and each is what the service has charged: a change here is
// a change of price.
func TestCatalogueFeeSchedules(t *testing.T) {
	want := map[ledger.MethodType]map[Direction]int64{
		ledger.MethodMobileMoney:  {Payout: 100, Collection: 150},
		ledger.MethodBankTransfer: {Payout: 50, Deposit: 0},
		ledger.MethodCrypto:       {Payout: 20, Deposit: 0},
	}
	c := DefaultCatalogue()
	methods := c.Networks()
	for _, country := range c.Countries() {
		methods = append(methods, country.Methods...)
	}
	served := map[Direction]int{}
	for _, m := range methods {
		for dir := Payout; dir < directions; dir++ {
			s, ok := m.Fees(dir)
			if ok != m.Serves(dir) {
				t.Fatalf("%s %s: schedule %v, serves %v", m.Code, dir, ok, m.Serves(dir))
			}
			if !ok {
				continue
			}
			served[dir]++
			bps, priced := want[m.Type][dir]
			if !priced || s.BasisPoints != bps {
				t.Errorf("%s (%s) %s fee: %d basis points, want %d", m.Code, m.Type, dir, s.BasisPoints, bps)
			}
		}
	}
	for dir := Payout; dir < directions; dir++ {
		if served[dir] == 0 {
			t.Errorf("no method serves %s: the test checks nothing there", dir)
		}
	}
}

// A catalogue that leaves a served direction without a schedule, or gives
// one out of range, does not parse.
func TestCatalogueRefusesMissingFees(t *testing.T) {
	tests := []struct {
		name, from, to, want string
	}{
		{"no deposit schedule for banks", `"bank": {"payout": {"basisPoints": 50}, "deposit": {"basisPoints": 0}}`,
			`"bank": {"payout": {"basisPoints": 50}}`, "has no deposit fee schedule"},
		{"no basis points", `"collection": {"basisPoints": 150}`, `"collection": {}`, "has no collection fee schedule"},
		{"more than the whole", `"payout": {"basisPoints": 20}`, `"payout": {"basisPoints": 10001}`, "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Contains(catalogueJSON, []byte(tt.from)) {
				t.Fatalf("the catalogue no longer has %s", tt.from)
			}
			_, err := ParseCatalogue(bytes.Replace(catalogueJSON, []byte(tt.from), []byte(tt.to), 1))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("parsed with %v, want an error saying %q", err, tt.want)
			}
		})
	}
	// A method's own schedule overrides its type's.
	own := bytes.Replace(catalogueJSON, []byte(`"fields": "bank_gh"}`), []byte(`"fields": "bank_gh", "fees": {"payout": {"basisPoints": 75}}}`), 1)
	c, err := ParseCatalogue(own)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := c.Method("gh_ghipss")
	if s, _ := m.Fees(Payout); s.BasisPoints != 75 {
		t.Fatalf("gh_ghipss payout fee %d basis points, want its own 75", s.BasisPoints)
	}
	if s, _ := m.Fees(Deposit); s.BasisPoints != 0 {
		t.Fatalf("gh_ghipss deposit fee %d basis points, want its type's 0", s.BasisPoints)
	}
}
