package dashboard

import (
	"encoding/xml"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestShowAndGet(t *testing.T) {
	v, err := Decode([]byte(`{"a":{"b":"GHS","n":12.50,"nil":null,"list":["x","y"],"yes":true,"empty":""}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"a.b", "GHS"}, {"a.n", "12.50"}, {"a.nil", "—"}, {"a.missing", "—"}, {"a.b.deeper", "—"},
		{"a.list", "x, y"}, {"a.yes", "yes"}, {"a.empty", "—"},
	} {
		if got := Show(Get(v, c.path)); got != c.want {
			t.Errorf("Show(Get(%q)) = %q, want %q", c.path, got, c.want)
		}
	}
}

func TestNextHref(t *testing.T) {
	list, _ := Decode([]byte(`{"data":[],"hasMore":true,"nextCursor":"c/2+x"}`))
	got := string(NextHref("/dashboard/payouts", url.Values{"status": {"failed"}, "cursor": {"old"}}, list))
	u, err := url.Parse(got)
	if err != nil || u.Path != "/dashboard/payouts" || u.Query().Get("status") != "failed" || u.Query().Get("cursor") != "c/2+x" {
		t.Fatalf("NextHref = %q", got)
	}
	last, _ := Decode([]byte(`{"data":[],"hasMore":false,"nextCursor":null}`))
	if got := NextHref("/dashboard/payouts", nil, last); got != "" {
		t.Fatalf("NextHref on the last page = %q, want none", got)
	}
}

func TestVolumePerDay(t *testing.T) {
	today := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	items := []map[string]any{
		{"createdAt": "2026-11-23T09:00:00.000Z"},
		{"createdAt": "2026-11-23T23:59:59.999Z"},
		{"createdAt": "2026-11-22T00:00:00.000Z"},
		{"createdAt": "2026-10-24T23:59:59.999Z"}, // the day before the first
		{"createdAt": "not a time"},
	}
	c := VolumePerDay("v", "Volume", items, today, 30)
	if len(c.Bars) != 30 {
		t.Fatalf("%d bars, want 30", len(c.Bars))
	}
	if first, last := c.Bars[0], c.Bars[29]; first.Label != "25 Oct" || first.Value != 0 || last.Label != "23 Nov" || last.Value != 2 {
		t.Fatalf("first bar %+v, last bar %+v", first, last)
	}
	if c.Bars[28].Value != 1 {
		t.Fatalf("22 Nov: %+v, want 1", c.Bars[28])
	}
}

func TestSuccessRates(t *testing.T) {
	c := SuccessRates("s", "Success", []Outcome{
		{"gh_mtn", true}, {"gh_mtn", true}, {"gh_mtn", false}, {"bank", false},
	})
	if len(c.Bars) != 2 || c.Bars[0].Label != "bank" || c.Bars[0].Value != 0 || c.Bars[1].Label != "gh_mtn" || c.Bars[1].Text != "67%" {
		t.Fatalf("bars %+v", c.Bars)
	}
	if !strings.Contains(c.describe(), "gh_mtn: 2 of 3 succeeded") || !strings.Contains(c.describe(), "bank: 0 of 1") {
		t.Fatalf("description %q", c.describe())
	}
}

// A chart is well-formed SVG whatever its labels hold, and says itself in
// words.
func TestChartSVG(t *testing.T) {
	c := Chart{ID: "x", Title: `Rates <b>&</b> "more"`, Bars: []Bar{{Label: `<script>`, Value: 3, Text: "3", Title: `a & b`}, {Label: "z", Value: 0}}}
	svg := string(c.SVG())
	if strings.Contains(svg, "<script>") || strings.Contains(svg, "<b>") {
		t.Fatalf("the chart carries markup from its labels: %s", svg)
	}
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		if _, err := d.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("not well-formed: %v\n%s", err, svg)
			}
			break
		}
	}
	if !strings.Contains(svg, "<desc id=\"x-desc\">a &amp; b.</desc>") {
		t.Fatalf("the description of the chart: %s", svg)
	}
}

// Every page renders with an empty view and with the layout's parts, and
// escapes what it shows.
func TestEveryPageRenders(t *testing.T) {
	if len(templates) < 10 {
		t.Fatalf("%d templates", len(templates))
	}
	for name := range templates {
		p := &Page{Name: name, Title: "<Title>", Member: Member{Email: "a@example.com", Role: "owner"}, CSRF: "tok", RequestID: "req_1",
			Problem: &Problem{Code: "validation_error", Message: "<bad>", Details: []Detail{{"f", "is <wrong>"}}}}
		switch name {
		case "money":
			p.View = struct {
				MoneyList
				Filters map[string]string
				Next    string
			}{MoneyList{Kind: MoneyKinds[0]}, map[string]string{}, ""}
		default:
			p.View = map[string]any{}
		}
		body, err := p.Render()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		s := string(body)
		if strings.Contains(s, "<bad>") || strings.Contains(s, "<Title>") || strings.Contains(s, "<no value>") {
			t.Errorf("%s shows unescaped or missing text:\n%s", name, s)
		}
	}
}

func TestAssetsHaveDigestNames(t *testing.T) {
	for _, file := range []string{"dashboard.css", "dashboard.js", "favicon.svg"} {
		p := assetPath(Base, file)
		if !strings.HasPrefix(p, "/dashboard/assets/") || p == "/dashboard/assets/"+file {
			t.Fatalf("%s is served as %s", file, p)
		}
		if _, ok := Assets.Lookup(strings.TrimPrefix(p, "/dashboard/assets/")); !ok {
			t.Fatalf("%s is not found under its name", p)
		}
	}
}

func TestCSP(t *testing.T) {
	csp := (&Page{}).CSP()
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Fatalf("the policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Fatalf("the policy %q allows unsafe sources", csp)
	}
}
