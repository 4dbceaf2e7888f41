package ledger

import (
	"testing"

	"payments/ledger/kv"
)

func usdCents(v Minor) *Minor { return &v }

// A key stored before keys had controls (its record ends after RevokedAt)
// reads as a key without caps or allowlist.
func TestKeyRecordWithoutControls(t *testing.T) {
	k := APIKey{ID: "key_a", OrgID: "org_a", Name: "n", Hash: "h", Hint: "x", Scopes: ScopePayoutsRead, CreatedAt: 5,
		Caps: SpendCaps{Daily: usdCents(7)}, Allowlist: "10.0.0.0/8", Spent: SpendUsage{Period: SpendPeriod{1, 2}, Day: 3, Month: 4}}
	var full, old Encoder
	encodeByFields(&full, &k)
	bare := k
	bare.Caps, bare.Allowlist, bare.Spent = SpendCaps{}, "", SpendUsage{}
	encodeByFields(&old, &bare)
	// The old layout: everything before the controls section.
	var section Encoder
	encodeKeyControlsSection(&section, &bare)
	oldRecord := old.Bytes()[:len(old.Bytes())-len(section.Bytes())]
	d := kv.NewDecoder(oldRecord)
	if got := decodeByFields[APIKey](&d); d.Err() != nil || len(d.Rest()) != 0 || got != bare {
		t.Fatalf("old record decoded as %+v (%v)", got, d.Err())
	}
	d = kv.NewDecoder(full.Bytes())
	got := decodeByFields[APIKey](&d)
	if d.Err() != nil || len(d.Rest()) != 0 || got.Allowlist != k.Allowlist || got.Spent != k.Spent || *got.Caps.Daily != 7 || got.Caps.Monthly != nil {
		t.Fatalf("record decoded as %+v (%v)", got, d.Err())
	}
}
