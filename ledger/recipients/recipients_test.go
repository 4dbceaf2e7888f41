package recipients

import (
	"bytes"
	"errors"
	"fmt"
	"payments/ledger"
	"payments/ledger/fxpayouts"
	"payments/ledger/ledgertest"
	"strings"
	"testing"
)

var recipientState = ledgertest.TwoOrgs

var mobileSpec = Spec{Method: "gh_mtn", MethodType: ledger.MethodMobileMoney, Country: "GH", Currency: "GHS",
	AccountName: "AMA SERWAA", Label: "Supplier", AccountNumber: "233241234567"}

var cryptoSpec = Spec{Method: "usdc_stellar", MethodType: ledger.MethodCrypto, Currency: "USDC", AccountName: "Treasury",
	Address: "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN", Tag: "1042"}

// Malformed recipients are refused and change nothing.
func TestCreateRecipientRules(t *testing.T) {
	with := func(f func(*Spec)) Spec {
		sp := mobileSpec
		f(&sp)
		return sp
	}
	tests := []struct {
		name    string
		cmd     *Create
		wantErr ledger.Code
	}{
		{"mobile ok", &Create{At: 2, ID: "rcp_1", OrgID: "org_a", Spec: mobileSpec}, ""},
		{"crypto ok", &Create{At: 2, ID: "rcp_2", OrgID: "org_a", Spec: cryptoSpec}, ""},
		{"bad id", &Create{At: 2, ID: "pay_1", OrgID: "org_a", Spec: mobileSpec}, ledger.CodeValidation},
		{"unknown org", &Create{At: 2, ID: "rcp_3", OrgID: "org_x", Spec: mobileSpec}, ledger.CodeNotFound},
		{"no name", &Create{At: 2, ID: "rcp_3", OrgID: "org_a", Spec: with(func(s *Spec) { s.AccountName = "" })}, ledger.CodeValidation},
		{"long label", &Create{At: 2, ID: "rcp_3", OrgID: "org_a", Spec: with(func(s *Spec) { s.Label = strings.Repeat("x", 101) })}, ledger.CodeValidation},
		{"address on mobile", &Create{At: 2, ID: "rcp_3", OrgID: "org_a", Spec: with(func(s *Spec) { s.Address = "x" })}, ledger.CodeValidation},
		{"no account", &Create{At: 2, ID: "rcp_3", OrgID: "org_a", Spec: with(func(s *Spec) { s.AccountNumber = "" })}, ledger.CodeValidation},
		{"bad currency", &Create{At: 2, ID: "rcp_3", OrgID: "org_a", Spec: with(func(s *Spec) { s.Currency = "XYZ" })}, ledger.CodeValidation},
		{"bad type", &Create{At: 2, ID: "rcp_3", OrgID: "org_a", Spec: with(func(s *Spec) { s.MethodType = ledger.MethodTypeNone })}, ledger.CodeValidation},
	}
	s := recipientState(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.Dump()
			res := s.Apply(tt.cmd)
			if tt.wantErr == "" {
				if res.Err != nil || Of(res) == nil || !Of(res).Active || Of(res).Spec != tt.cmd.Spec {
					t.Fatalf("got %+v", res)
				}
				return
			}
			if res.Err == nil || res.Err.Code != tt.wantErr {
				t.Fatalf("got %+v, want %s", res, tt.wantErr)
			}
			if !bytes.Equal(s.Dump(), before) {
				t.Fatal("a rejected command changed the state")
			}
		})
	}
	// The same id twice is refused.
	if res := s.Apply(&Create{At: 3, ID: "rcp_1", OrgID: "org_a", Spec: mobileSpec}); res.Err == nil {
		t.Fatal("a second rcp_1 was created")
	}
}

func TestUpdateAndDeleteRecipient(t *testing.T) {
	s := recipientState(t)
	s.Apply(&Create{At: 2, ID: "rcp_1", OrgID: "org_a", Spec: mobileSpec})
	res := s.Apply(&Update{At: 3, ID: "rcp_1", OrgID: "org_a", Change: Change{SetLabel: true, Label: "Landlord", SetActive: true, Active: false}})
	if res.Err != nil || Of(res).Spec.Label != "Landlord" || Of(res).Spec.AccountName != "AMA SERWAA" || Of(res).Active || Of(res).UpdatedAt != 3 {
		t.Fatalf("update: %+v", res)
	}
	if res := s.Apply(&Update{At: 3, ID: "rcp_1", OrgID: "org_a", Change: Change{SetAccountName: true}}); res.Err == nil {
		t.Fatal("accountName emptied")
	}
	if res := s.Apply(&Update{At: 3, ID: "rcp_1", OrgID: "org_b", Change: Change{SetLabel: true}}); !errors.Is(res.Err, ledger.ErrNotFound) {
		t.Fatalf("another organization updated it: %+v", res)
	}
	inactive := false
	if p := List(s.Reader, "org_a", Filter{Active: &inactive}, ledger.CursorStart, 10); len(p.Items) != 1 {
		t.Fatalf("inactive filter: %+v", p)
	}
	if res := s.Apply(&Delete{At: 4, ID: "rcp_1", OrgID: "org_b"}); !errors.Is(res.Err, ledger.ErrNotFound) {
		t.Fatalf("another organization deleted it: %+v", res)
	}
	if res := s.Apply(&Delete{At: 4, ID: "rcp_1", OrgID: "org_a"}); res.Err != nil {
		t.Fatal(res.Err)
	}
	if _, ok := Get(s.Reader, "org_a", "rcp_1"); ok {
		t.Fatal("a deleted recipient is found")
	}
	if p := List(s.Reader, "org_a", Filter{}, ledger.CursorStart, 10); len(p.Items) != 0 {
		t.Fatalf("a deleted recipient is listed: %+v", p)
	}
	if res := s.Apply(&Delete{At: 5, ID: "rcp_1", OrgID: "org_a"}); !errors.Is(res.Err, ledger.ErrNotFound) {
		t.Fatalf("deleted twice: %+v", res)
	}
}

// A batch saves each good item and reports each bad one.
func TestCreateRecipientsBatch(t *testing.T) {
	s := recipientState(t)
	bad := mobileSpec
	bad.AccountName = ""
	res := s.Apply(&CreateBatch{At: 2, OrgID: "org_a", Items: []Create{
		{ID: "rcp_1", Spec: mobileSpec}, {ID: "rcp_2", Spec: bad}, {ID: "rcp_3", Spec: cryptoSpec}, {ID: "rcp_1", Spec: cryptoSpec},
	}})
	if res.Err != nil || len(Batch(res)) != 4 {
		t.Fatalf("got %+v", res)
	}
	for i, wantOK := range []bool{true, false, true, false} {
		o := Batch(res)[i]
		if (o.Err == nil) != wantOK || (o.Recipient != nil) != wantOK {
			t.Errorf("item %d: %+v", i, o)
		}
	}
	if p := List(s.Reader, "org_a", Filter{Method: "usdc_stellar"}, ledger.CursorStart, 10); len(p.Items) != 1 || p.Items[0].ID != "rcp_3" {
		t.Fatalf("code filter: %+v", p)
	}
	if res := s.Apply(&CreateBatch{At: 2, OrgID: "org_a"}); res.Err == nil {
		t.Fatal("an empty batch was accepted")
	}
}

// A payout naming a recipient must be to that recipient's destination, and
// the recipient must be active and the organization's own.
func TestPayoutToRecipient(t *testing.T) {
	s := recipientState(t)
	s.Apply(&ledger.FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 100_000, ExternalReference: "f"})
	s.Apply(&Create{At: 2, ID: "rcp_1", OrgID: "org_a", Spec: mobileSpec})
	s.Apply(&Create{At: 2, ID: "rcp_b", OrgID: "org_b", Spec: mobileSpec})
	payout := func(ref, rcp, account string) ledger.Result {
		return s.Apply(&ledger.CreatePayout{At: 3, ID: "pay_ghs_" + ref, OrgID: "org_a", ExternalReference: ref,
			Spec:       ledger.PayoutSpec{Currency: "GHS", Amount: 100, AmountSide: ledger.SideTo, Method: "gh_mtn", AccountNumber: account, RecipientID: rcp},
			MethodType: ledger.MethodMobileMoney})
	}
	if res := payout("p1", "rcp_1", "233241234567"); res.Err != nil {
		t.Fatal(res.Err)
	}
	for _, tt := range []struct{ ref, rcp, account, want string }{
		{"p2", "rcp_b", "233241234567", "not a recipient"},
		{"p3", "rcp_none", "233241234567", "not a recipient"},
		{"p4", "rcp_1", "233240000000", "different destination"},
	} {
		if res := payout(tt.ref, tt.rcp, tt.account); res.Err == nil || !strings.Contains(res.Err.Fields[0].Message, tt.want) {
			t.Errorf("%s: %+v, want %q", tt.ref, res.Err, tt.want)
		}
	}
	// A cross-currency payout is held to its recipient the same way.
	s.Apply(&ledger.FundBalance{At: 2, OrgID: "org_a", Currency: "USD", Amount: 100_000, ExternalReference: "fu"})
	fx := &fxpayouts.Create{At: 3, ID: "pay_fx_1", OrgID: "org_a", ExternalReference: "fx1",
		Spec:       ledger.PayoutSpec{Currency: "GHS", Amount: 15_000, AmountSide: ledger.SideTo, Method: "gh_mtn", AccountNumber: "233241234567", RecipientID: "rcp_x"},
		MethodType: ledger.MethodMobileMoney, Fee: 10, FromCurrency: "USD", FromAmount: 972, ToAmount: 15_000, Rate: "15.444"}
	if res := s.Apply(fx); !errors.Is(res.Err, ledger.ErrValidation) || !strings.Contains(res.Err.Fields[0].Message, "not a recipient") {
		t.Errorf("fx payout to an unknown recipient: %+v", res.Err)
	}
	fx.Spec.RecipientID = "rcp_1"
	if res := s.Apply(fx); res.Err != nil {
		t.Errorf("fx payout to its recipient: %v", res.Err)
	}
	s.Apply(&Update{At: 4, ID: "rcp_1", OrgID: "org_a", Change: Change{SetActive: true, Active: false}})
	if res := payout("p5", "rcp_1", "233241234567"); res.Err == nil || !strings.Contains(res.Err.Fields[0].Message, "inactive") {
		t.Errorf("inactive: %+v", res.Err)
	}
	// The earlier payout replays even though its recipient is now inactive.
	if res := payout("p1", "rcp_1", "233241234567"); res.Err != nil || !res.Replayed {
		t.Errorf("replay: %+v", res)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

// Recipient commands survive the log codec, and recipients a snapshot.
func TestRecipientCodec(t *testing.T) {
	cmds := []ledger.Command{
		&Create{At: 2, ID: "rcp_1", OrgID: "org_a", Spec: mobileSpec},
		&Update{At: 3, ID: "rcp_1", OrgID: "org_a", Change: Change{SetAccountName: true, AccountName: "AMA S", SetActive: true}},
		&Delete{At: 4, ID: "rcp_1", OrgID: "org_a"},
		&CreateBatch{At: 5, OrgID: "org_a", Items: []Create{
			{At: 5, ID: "rcp_2", OrgID: "org_a", Spec: cryptoSpec}, {At: 5, ID: "rcp_3", OrgID: "org_a", Spec: mobileSpec}}},
	}
	enc := ledger.EncodeBatch(nil, cmds)
	dec, err := ledger.DecodeBatch(enc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cmds {
		if fmt.Sprintf("%+v", cmds[i]) != fmt.Sprintf("%+v", dec[i]) {
			t.Fatalf("command %d: %+v decoded as %+v", i, cmds[i], dec[i])
		}
	}
	s := recipientState(t)
	for _, c := range dec {
		s.Apply(c)
	}
	r := s.Restored()
	if got, ok := Get(r.Reader, "org_a", "rcp_2"); !ok || got.Spec != cryptoSpec {
		t.Fatalf("restored rcp_2 = %+v %v", got, ok)
	}
	if _, ok := Get(r.Reader, "org_a", "rcp_1"); ok {
		t.Fatal("restored a deleted recipient as live")
	}
}

// A recipient's times are on its organization's clock, which a sandbox
// organization may have advanced (ledger.AdvanceClock).
func TestRecipientTimesFollowTheOrganizationsClock(t *testing.T) {
	s := recipientState(t)
	const offset, at = 86_400_000, 1_000
	if res := s.Apply(&ledger.AdvanceClock{At: 2, OrgID: "org_a", Millis: offset}); res.Err != nil {
		t.Fatal(res.Err)
	}
	s.Apply(&Create{At: at, ID: "rcp_1", OrgID: "org_a", Spec: mobileSpec})
	s.Apply(&Update{At: at + 1, ID: "rcp_1", OrgID: "org_a", Change: Change{SetLabel: true, Label: "Rent"}})
	r, ok := Get(s.Reader, "org_a", "rcp_1")
	if !ok || r.CreatedAt != at+offset || r.UpdatedAt != at+1+offset {
		t.Fatalf("got %+v, want created at %d and updated at %d", r, at+offset, at+1+offset)
	}
	s.Apply(&Create{At: at, ID: "rcp_2", OrgID: "org_b", Spec: mobileSpec})
	if r, _ := Get(s.Reader, "org_b", "rcp_2"); r.CreatedAt != at {
		t.Fatalf("an organization without a clock: created at %d, want %d", r.CreatedAt, at)
	}
}
