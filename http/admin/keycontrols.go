package admin

import (
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/goccy/go-json/jsontext"

	"payments/actors"
	"payments/actors/app"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/keycontrols"
)

// Key controls (package ledger/keycontrols): spend caps and the caller IP
// allowlist, set when a key is created (POST /v1/keys) and
// changed with PATCH /v1/keys/{id}; GET /v1/keys/{id} shows them with the
// key's spend in the organization's current day and month. The routes are
// registered with the other keys' (admin.go).

// capField is one spend cap in a request: absent (unchanged), null (no
// cap), or a non-negative amount of USD as a string or a number.
type capField struct {
	set  bool
	null bool
	text string
}

func (f *capField) UnmarshalJSON(b []byte) error {
	*f = capField{set: true}
	switch {
	case len(b) > 0 && b[0] == 'n':
		f.null = true
	case len(b) > 0 && b[0] == '"':
		s, err := jsontext.AppendUnquote(nil, b)
		if err != nil {
			return core.FieldMessage(capMessage)
		}
		f.text = string(s)
	case len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9'):
		f.text = string(b)
	default:
		return core.FieldMessage(capMessage)
	}
	return nil
}

const capMessage = "must be a non-negative amount of USD such as \"500.00\", or null for no cap"

type spendCapsBody struct {
	PerTransaction capField `json:"perTransaction"`
	Daily          capField `json:"daily"`
	Monthly        capField `json:"monthly"`
}

// keyControlsBody is the controls part of a key's create or change.
type keyControlsBody struct {
	SpendCaps   *spendCapsBody `json:"spendCaps"`
	IPAllowlist *[]string      `json:"ipAllowlist"`
}

// spendCap reads one cap in USD cents; nil is no cap.
func spendCap(p *core.Problems, field string, f capField) *ledger.Minor {
	if !f.set || f.null {
		return nil
	}
	usd, _ := ledger.LookupCurrency("USD")
	var d apd.Decimal
	if _, _, err := d.SetString(f.text); err == nil && d.Form == apd.Finite && d.IsZero() && !strings.HasPrefix(f.text, "-") {
		zero := ledger.Minor(0)
		return &zero
	}
	if strings.HasPrefix(f.text, "-") {
		p.Add(field, capMessage)
		return nil
	}
	m, err := ledger.ParseAmount(f.text, usd)
	if err != nil {
		msg := ledger.AsError(err).Message
		if !strings.Contains(msg, "decimal places") && !strings.Contains(msg, "at most") {
			msg = capMessage
		}
		p.Add(field, msg)
		return nil
	}
	return &m
}

// keyControls validates the controls of a request into the command's form
// and which of them it sets: perTransaction, daily, monthly, ipAllowlist.
func keyControls(p *core.Problems, b *keyControlsBody) (c keycontrols.Controls, set [4]bool) {
	if b.SpendCaps != nil {
		caps := b.SpendCaps
		c.Caps.PerTransaction = spendCap(p, "spendCaps.perTransaction", caps.PerTransaction)
		c.Caps.Daily = spendCap(p, "spendCaps.daily", caps.Daily)
		c.Caps.Monthly = spendCap(p, "spendCaps.monthly", caps.Monthly)
		set[0], set[1], set[2] = caps.PerTransaction.set, caps.Daily.set, caps.Monthly.set
	}
	if b.IPAllowlist != nil {
		list, err := keycontrols.ParseAllowlist("ipAllowlist", *b.IPAllowlist)
		if err != nil {
			*p = append(*p, err.Fields...)
			if len(err.Fields) == 0 {
				p.Add("ipAllowlist", err.Message)
			}
		}
		c.Allowlist, set[3] = list, true
	}
	return c, set
}

type UpdateKeyBody struct {
	keyControlsBody
}

// getKey: GET /v1/keys/{id}.
func getKey(c *core.Call) {
	core.Get(c, "id", "API key", (*ledger.Reader).APIKey, func(k *ledger.APIKey) *keyBody { return &keyBody{RenderKeyNow(c.Server, k, "")} })
}

// updateKey: PATCH /v1/keys/{id}. Only the members sent change: a cap sent
// as null is removed, an empty ipAllowlist permits every address.
func updateKey(c *core.Call) {
	core.Update(c, "id", KeyControlsInput, c.Server.Config.App.SetKeyControls, func(res *ledger.Result) any {
		return &keyBody{RenderKeyNow(c.Server, res.APIKey, "")}
	})
}

// keyControlsInput checks a change of key id's controls (the API's, or
// the dashboard's form in its shape).
func KeyControlsInput(id string, req *UpdateKeyBody) (app.KeyControlsChange, *ledger.Error) {
	var p core.Problems
	controls, set := keyControls(&p, &req.keyControlsBody)
	if e := p.Err(); e != nil {
		return app.KeyControlsChange{}, e
	}
	if set == [4]bool{} {
		return app.KeyControlsChange{}, &ledger.Error{Code: ledger.CodeValidation, Message: "Nothing to change: send spendCaps or ipAllowlist",
			Fields: []ledger.FieldError{{Field: "body", Message: "must carry spendCaps or ipAllowlist"}}}
	}
	return app.KeyControlsChange{KeyID: id, Controls: controls,
		SetPerTransaction: set[0], SetDaily: set[1], SetMonthly: set[2], SetAllowlist: set[3]}, nil
}

type spendCapsJSON struct {
	PerTransaction *string `json:"perTransaction"`
	Daily          *string `json:"daily"`
	Monthly        *string `json:"monthly"`
}

type spendUsageJSON struct {
	Currency string `json:"currency"`
	Day      string `json:"day"`     // the organization's current day, YYYY-MM-DD
	Daily    string `json:"daily"`   // spent in it
	Month    string `json:"month"`   // the organization's current month, YYYY-MM
	Monthly  string `json:"monthly"` // spent in it
}

func usdText(m *ledger.Minor) *string {
	if m == nil {
		return nil
	}
	usd, _ := ledger.LookupCurrency("USD")
	s := ledger.FormatMinor(*m, usd)
	return &s
}

// renderKeyNow is a key as the API shows it, with its spend in the
// organization's current day and month.
func RenderKeyNow(s *core.Server, k *ledger.APIKey, secret string) keyJSON {
	r := s.Config.Actors.Reader()
	return renderKeyAt(k, secret, actors.SpendPeriodAt(r, k.OrgID, s.Config.Actors.Now().UnixMilli()))
}

func renderKeyAt(k *ledger.APIKey, secret string, now ledger.SpendPeriod) keyJSON {
	out := renderKey(k, secret)
	out.SpendCaps = spendCapsJSON{usdText(k.Caps.PerTransaction), usdText(k.Caps.Daily), usdText(k.Caps.Monthly)}
	out.IPAllowlist = keycontrols.AllowlistEntries(k.Allowlist)
	u := keycontrols.UsageAt(k.Spent, now)
	if now.Day < u.Period.Day {
		u = ledger.SpendUsage{Period: now} // a reader behind the leader's clock
	}
	day := time.Unix(int64(now.Day)*86400, 0).UTC()
	usd, _ := ledger.LookupCurrency("USD")
	out.SpendUsage = spendUsageJSON{
		Currency: "USD",
		Day:      day.Format(time.DateOnly),
		Daily:    ledger.FormatMinor(u.Day, usd),
		Month:    time.Date(int(now.Month/12), time.Month(now.Month%12+1), 1, 0, 0, 0, 0, time.UTC).Format("2006-01"),
		Monthly:  ledger.FormatMinor(u.Month, usd),
	}
	return out
}

// knownTimezone reports whether name is an IANA timezone this build knows
// (the actors embed the table).
func knownTimezone(name string) bool {
	if name == "Local" {
		return false
	}
	_, err := time.LoadLocation(name)
	return err == nil
}
