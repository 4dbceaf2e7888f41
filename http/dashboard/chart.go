package dashboard

import (
	"fmt"
	"html/template"
	"sort"
	"strings"
	"time"
)

// Charts are drawn here as SVG, in the page itself: no script, no chart
// library, nothing fetched from elsewhere. Their numbers are counted from
// the API's list answers (payouts and collections), as a person would
// count the rows.

// Bar is one bar of a chart.
type Bar struct {
	Label string  // under the bar
	Value float64 // its height, in the chart's unit
	Text  string  // the value as shown (a count, "75%")
	Title string  // the tooltip: what the bar counts
}

// Chart is a bar chart.
type Chart struct {
	ID    string
	Title string
	Max   float64 // the top of the scale; 0: the largest value
	Bars  []Bar
	Note  string // what the numbers cover ("the latest 1,000 payouts")
}

const (
	chartWidth  = 720
	chartHeight = 220
	chartTop    = 16
	chartBottom = 40 // room for the labels
	chartLeft   = 8
)

// SVG draws the chart, with a title and a description for screen readers.
func (c Chart) SVG() template.HTML {
	var b strings.Builder
	esc := template.HTMLEscapeString
	fmt.Fprintf(&b, `<svg id="%s" class="chart" viewBox="0 0 %d %d" role="img" aria-labelledby="%s-title %s-desc" xmlns="http://www.w3.org/2000/svg">`,
		esc(c.ID), chartWidth, chartHeight, esc(c.ID), esc(c.ID))
	fmt.Fprintf(&b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, esc(c.ID), esc(c.Title), esc(c.ID), esc(c.describe()))
	top := c.Max
	for _, bar := range c.Bars {
		top = max(top, bar.Value)
	}
	plot := float64(chartHeight - chartTop - chartBottom)
	base := chartHeight - chartBottom
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#9ca3af"/>`, chartLeft, base, chartWidth-chartLeft, base)
	if n := len(c.Bars); n > 0 {
		slot := float64(chartWidth-2*chartLeft) / float64(n)
		width := min(max(slot*0.7, 1), 96) // a lone bar stays a bar
		every := max(1, n/10)              // at most about ten labels
		for i, bar := range c.Bars {
			h := 0.0
			if top > 0 {
				h = bar.Value / top * plot
			}
			x := float64(chartLeft) + float64(i)*slot + (slot-width)/2
			fmt.Fprintf(&b, `<rect class="bar" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#1e56b3"><title>%s</title></rect>`,
				x, float64(base)-h, width, h, esc(bar.Title))
			if n <= 12 && bar.Text != "" {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="12" fill="#111827">%s</text>`,
					x+width/2, float64(base)-h-4, esc(bar.Text))
			}
			if i%every == 0 || n <= 12 {
				fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" font-size="11" fill="#4b5563">%s</text>`,
					x+width/2, base+16, esc(bar.Label))
			}
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// Empty reports whether the chart has nothing to show.
func (c Chart) Empty() bool {
	for _, bar := range c.Bars {
		if bar.Value != 0 || c.Max != 0 {
			return false
		}
	}
	return true
}

// describe says the chart in words.
func (c Chart) describe() string {
	parts := make([]string, 0, len(c.Bars))
	for _, bar := range c.Bars {
		if bar.Value != 0 || c.Max != 0 { // a day without any is left out; a rate of 0% is not
			parts = append(parts, bar.Title)
		}
	}
	if len(parts) == 0 {
		return "Nothing yet."
	}
	return strings.Join(parts, "; ") + "."
}

// VolumePerDay counts items (decoded API resources with createdAt) per UTC
// day over the days days ending on today.
func VolumePerDay(id, title string, items []map[string]any, today time.Time, days int) Chart {
	day0 := today.UTC().Truncate(24*time.Hour).AddDate(0, 0, -(days - 1))
	counts := make([]int, days)
	for _, it := range items {
		s, _ := it["createdAt"].(string)
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			continue
		}
		if i := int(t.UTC().Sub(day0) / (24 * time.Hour)); i >= 0 && i < days && !t.Before(day0) {
			counts[i]++
		}
	}
	c := Chart{ID: id, Title: title}
	for i, n := range counts {
		d := day0.AddDate(0, 0, i)
		c.Bars = append(c.Bars, Bar{Label: d.Format("2 Jan"), Value: float64(n), Text: fmt.Sprint(n),
			Title: fmt.Sprintf("%s: %d", d.Format("2 Jan"), n)})
	}
	return c
}

// Outcome is a finished money movement, by the method that carried it.
type Outcome struct {
	Method    string
	Succeeded bool
}

// SuccessRates draws, per method, the share of finished movements that
// succeeded.
func SuccessRates(id, title string, outcomes []Outcome) Chart {
	type tally struct{ ok, all int }
	by := map[string]*tally{}
	for _, o := range outcomes {
		t := by[o.Method]
		if t == nil {
			t = &tally{}
			by[o.Method] = t
		}
		t.all++
		if o.Succeeded {
			t.ok++
		}
	}
	methods := make([]string, 0, len(by))
	for m := range by {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	c := Chart{ID: id, Title: title, Max: 100}
	for _, m := range methods {
		t := by[m]
		pct := float64(t.ok) * 100 / float64(t.all)
		c.Bars = append(c.Bars, Bar{Label: m, Value: pct, Text: fmt.Sprintf("%.0f%%", pct),
			Title: fmt.Sprintf("%s: %d of %d succeeded (%.0f%%)", m, t.ok, t.all, pct)})
	}
	return c
}
