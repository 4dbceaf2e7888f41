package ledger

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func recipientState(t *testing.T) *testState {
	t.Helper()
	s := newTestState(t)
	hash := sha256.Sum256([]byte("k"))
	s.Apply(&CreateOrganization{At: 1, ID: "org_a", Name: "A", Key: CreateAPIKey{At: 1, ID: "key_a", OrgID: "org_a", Hash: string(hash[:])}})
	hash = sha256.Sum256([]byte("k2"))
	s.Apply(&CreateOrganization{At: 1, ID: "org_b", Name: "B", Key: CreateAPIKey{At: 1, ID: "key_b", OrgID: "org_b", Hash: string(hash[:])}})
	return s
}

var mobileSpec = RecipientSpec{Method: "gh_mtn", MethodType: MethodMobileMoney, Country: "GH", Currency: "GHS",
	AccountName: "AMA SERWAA", Label: "Supplier", AccountNumber: "233241234567"}

var cryptoSpec = RecipientSpec{Method: "usdc_stellar", MethodType: MethodCrypto, Currency: "USDC", AccountName: "Treasury",
	Address: "GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN", Tag: "1042"}

// Malformed recipients are refused and change nothing.
func TestCreateRecipientRules(t *testing.T) {
	with := func(f func(*RecipientSpec)) RecipientSpec {
		sp := mobileSpec
		f(&sp)
		return sp
	}
	tests := []struct {
		name    string
		cmd     *CreateRecipient
		wantErr Code
	}{
		{"mobile ok", &CreateRecipient{At: 2, ID: "rcp_1", OrgID: "org_a", Spec: mobileSpec}, ""},
		{"crypto ok", &CreateRecipient{At: 2, ID: "rcp_2", OrgID: "org_a", Spec: cryptoSpec}, ""},
		{"bad id", &CreateRecipient{At: 2, ID: "pay_1", OrgID: "org_a", Spec: mobileSpec}, CodeValidation},
		{"unknown org", &CreateRecipient{At: 2, ID: "rcp_3", OrgID: "org_x", Spec: mobileSpec}, CodeNotFound},
		{"no name", &CreateRecipient{At: 2, ID: "rcp_3", OrgID: "org_a", Spec: with(func(s *RecipientSpec) { s.AccountName = "" })}, CodeValidation},
		{"long label", &CreateRecipient{At: 2, ID: "rcp_3", OrgID: "org_a", Spec: with(func(s *RecipientSpec) { s.Label = strings.Repeat("x", 101) })}, CodeValidation},
		{"address on mobile", &CreateRecipient{At: 2, ID: "rcp_3", OrgID: "org_a", Spec: with(func(s *RecipientSpec) { s.Address = "x" })}, CodeValidation},
		{"no account", &CreateRecipient{At: 2, ID: "rcp_3", OrgID: "org_a", Spec: with(func(s *RecipientSpec) { s.AccountNumber = "" })}, CodeValidation},
		{"bad currency", &CreateRecipient{At: 2, ID: "rcp_3", OrgID: "org_a", Spec: with(func(s *RecipientSpec) { s.Currency = "XYZ" })}, CodeValidation},
		{"bad type", &CreateRecipient{At: 2, ID: "rcp_3", OrgID: "org_a", Spec: with(func(s *RecipientSpec) { s.MethodType = MethodTypeNone })}, CodeValidation},
	}
	s := recipientState(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := encodeSnapshot(t, s)
			res := s.Apply(tt.cmd)
			if tt.wantErr == "" {
				if res.Err != nil || res.Recipient == nil || !res.Recipient.Active || res.Recipient.Spec != tt.cmd.Spec {
					t.Fatalf("got %+v", res)
				}
				return
			}
			if res.Err == nil || res.Err.Code != tt.wantErr {
				t.Fatalf("got %+v, want %s", res, tt.wantErr)
			}
			if !bytes.Equal(encodeSnapshot(t, s), before) {
				t.Fatal("a rejected command changed the state")
			}
		})
	}
	// The same id twice is refused.
	if res := s.Apply(&CreateRecipient{At: 3, ID: "rcp_1", OrgID: "org_a", Spec: mobileSpec}); res.Err == nil {
		t.Fatal("a second rcp_1 was created")
	}
}

func TestUpdateAndDeleteRecipient(t *testing.T) {
	s := recipientState(t)
	s.Apply(&CreateRecipient{At: 2, ID: "rcp_1", OrgID: "org_a", Spec: mobileSpec})
	res := s.Apply(&UpdateRecipient{At: 3, ID: "rcp_1", OrgID: "org_a", SetLabel: true, Label: "Landlord", SetActive: true, Active: false})
	if res.Err != nil || res.Recipient.Spec.Label != "Landlord" || res.Recipient.Spec.AccountName != "AMA SERWAA" || res.Recipient.Active || res.Recipient.UpdatedAt != 3 {
		t.Fatalf("update: %+v", res)
	}
	if res := s.Apply(&UpdateRecipient{At: 3, ID: "rcp_1", OrgID: "org_a", SetAccountName: true}); res.Err == nil {
		t.Fatal("accountName emptied")
	}
	if res := s.Apply(&UpdateRecipient{At: 3, ID: "rcp_1", OrgID: "org_b", SetLabel: true}); !errors.Is(res.Err, ErrNotFound) {
		t.Fatalf("another organization updated it: %+v", res)
	}
	inactive := false
	if p := s.Recipients("org_a", RecipientFilter{Active: &inactive}, CursorStart, 10); len(p.Items) != 1 {
		t.Fatalf("inactive filter: %+v", p)
	}
	if res := s.Apply(&DeleteRecipient{At: 4, ID: "rcp_1", OrgID: "org_b"}); !errors.Is(res.Err, ErrNotFound) {
		t.Fatalf("another organization deleted it: %+v", res)
	}
	if res := s.Apply(&DeleteRecipient{At: 4, ID: "rcp_1", OrgID: "org_a"}); res.Err != nil {
		t.Fatal(res.Err)
	}
	if _, ok := s.Recipient("org_a", "rcp_1"); ok {
		t.Fatal("a deleted recipient is found")
	}
	if p := s.Recipients("org_a", RecipientFilter{}, CursorStart, 10); len(p.Items) != 0 {
		t.Fatalf("a deleted recipient is listed: %+v", p)
	}
	if res := s.Apply(&DeleteRecipient{At: 5, ID: "rcp_1", OrgID: "org_a"}); !errors.Is(res.Err, ErrNotFound) {
		t.Fatalf("deleted twice: %+v", res)
	}
}

// A batch saves each good item and reports each bad one.
func TestCreateRecipientsBatch(t *testing.T) {
	s := recipientState(t)
	bad := mobileSpec
	bad.AccountName = ""
	res := s.Apply(&CreateRecipients{At: 2, OrgID: "org_a", Items: []CreateRecipient{
		{ID: "rcp_1", Spec: mobileSpec}, {ID: "rcp_2", Spec: bad}, {ID: "rcp_3", Spec: cryptoSpec}, {ID: "rcp_1", Spec: cryptoSpec},
	}})
	if res.Err != nil || len(res.RecipientBatch) != 4 {
		t.Fatalf("got %+v", res)
	}
	for i, wantOK := range []bool{true, false, true, false} {
		o := res.RecipientBatch[i]
		if (o.Err == nil) != wantOK || (o.Recipient != nil) != wantOK {
			t.Errorf("item %d: %+v", i, o)
		}
	}
	if p := s.Recipients("org_a", RecipientFilter{Method: "usdc_stellar"}, CursorStart, 10); len(p.Items) != 1 || p.Items[0].ID != "rcp_3" {
		t.Fatalf("code filter: %+v", p)
	}
	if res := s.Apply(&CreateRecipients{At: 2, OrgID: "org_a"}); res.Err == nil {
		t.Fatal("an empty batch was accepted")
	}
}

// A payout naming a recipient must be to that recipient's destination, and
// the recipient must be active and the organization's own.
func TestPayoutToRecipient(t *testing.T) {
	s := recipientState(t)
	s.Apply(&FundBalance{At: 2, OrgID: "org_a", Currency: "GHS", Amount: 100_000, ExternalReference: "f"})
	s.Apply(&CreateRecipient{At: 2, ID: "rcp_1", OrgID: "org_a", Spec: mobileSpec})
	s.Apply(&CreateRecipient{At: 2, ID: "rcp_b", OrgID: "org_b", Spec: mobileSpec})
	payout := func(ref, rcp, account string) Result {
		return s.Apply(&CreatePayout{At: 3, ID: "pay_ghs_" + ref, OrgID: "org_a", ExternalReference: ref,
			Spec:       PayoutSpec{Currency: "GHS", Amount: 100, AmountSide: SideTo, Method: "gh_mtn", AccountNumber: account, RecipientID: rcp},
			MethodType: MethodMobileMoney})
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
	s.Apply(&UpdateRecipient{At: 4, ID: "rcp_1", OrgID: "org_a", SetActive: true, Active: false})
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
	cmds := []Command{
		&CreateRecipient{At: 2, ID: "rcp_1", OrgID: "org_a", Spec: mobileSpec},
		&UpdateRecipient{At: 3, ID: "rcp_1", OrgID: "org_a", SetAccountName: true, AccountName: "AMA S", SetActive: true},
		&DeleteRecipient{At: 4, ID: "rcp_1", OrgID: "org_a"},
		&CreateRecipients{At: 5, OrgID: "org_a", Items: []CreateRecipient{
			{At: 5, ID: "rcp_2", OrgID: "org_a", Spec: cryptoSpec}, {At: 5, ID: "rcp_3", OrgID: "org_a", Spec: mobileSpec}}},
	}
	enc := EncodeBatch(nil, cmds)
	dec, err := DecodeBatch(enc)
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
	r := restoreSame(t, s)
	if got, ok := r.Recipient("org_a", "rcp_2"); !ok || got.Spec != cryptoSpec {
		t.Fatalf("restored rcp_2 = %+v %v", got, ok)
	}
	if _, ok := r.Recipient("org_a", "rcp_1"); ok {
		t.Fatal("restored a deleted recipient as live")
	}
}
