package checkout

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// Branding is a link's branding as the page may use it. Each field is
// checked here, whatever the API accepted: the business name is text (the
// templates escape it), the logo an http or https URL of a plain host, and
// the accent a #rrggbb colour, so nothing a merchant typed reaches the page
// as markup, a style or a script.
type Branding struct {
	BusinessName *string `json:"businessName"`
	LogoURL      *string `json:"logoUrl"`
	AccentColor  string  `json:"accentColor"` // #rrggbb; DefaultAccent when the link has none or not a colour

	// OnAccent is the text colour on the accent, AccentText the accent
	// darkened where needed to be read as text on white: each has a
	// contrast of at least 4.5:1 (WCAG AA).
	OnAccent   string `json:"-"`
	AccentText string `json:"-"`
	// LogoOrigin is the logo's scheme and host, for the page's
	// Content-Security-Policy; "" without a logo.
	LogoOrigin string `json:"-"`
}

// DefaultAccent is the accent of a link without one.
const DefaultAccent = "#1e56b3"

// contrastMin is WCAG AA's minimum contrast for normal text.
const contrastMin = 4.5

// ParseBranding checks a link's branding, the canonical JSON object the
// ledger keeps ("" for none).
func ParseBranding(raw string) Branding {
	var in struct {
		LogoURL      string `json:"logoUrl"`
		AccentColor  string `json:"accentColor"`
		BusinessName string `json:"businessName"`
	}
	if raw != "" {
		_ = json.Unmarshal([]byte(raw), &in) // the ledger keeps what the API checked; a bad value shows as none
	}
	b := Branding{AccentColor: DefaultAccent}
	if name := strings.TrimSpace(in.BusinessName); name != "" {
		b.BusinessName = &name
	}
	if u, origin, ok := logoURL(in.LogoURL); ok {
		b.LogoURL, b.LogoOrigin = &u, origin
	}
	if c, ok := parseColor(in.AccentColor); ok {
		b.AccentColor = c.hex()
	}
	accent, _ := parseColor(b.AccentColor)
	b.OnAccent = onColor(accent).hex()
	b.AccentText = readableOnWhite(accent).hex()
	return b
}

// Style is the CSS that applies the branding's colours: custom properties
// of values this file made, never the merchant's text.
func (b Branding) Style() template.CSS {
	return template.CSS(":root{--accent:" + b.AccentColor + ";--on-accent:" + b.OnAccent + ";--accent-text:" + b.AccentText + "}")
}

// logoURL returns a logo URL that is safe in an img element and a
// Content-Security-Policy: http or https, a host of letters, digits, dots,
// dashes and a port, no user information.
func logoURL(s string) (u string, origin string, ok bool) {
	p, err := url.Parse(s)
	if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" || p.User != nil || p.Opaque != "" {
		return "", "", false
	}
	for _, r := range p.Host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == ':') {
			return "", "", false
		}
	}
	return p.String(), p.Scheme + "://" + strings.ToLower(p.Host), true
}

type rgb struct{ r, g, b uint8 }

func (c rgb) hex() string { return fmt.Sprintf("#%02x%02x%02x", c.r, c.g, c.b) }

// parseColor reads #rgb or #rrggbb.
func parseColor(s string) (rgb, bool) {
	s, ok := strings.CutPrefix(strings.TrimSpace(s), "#")
	if !ok || (len(s) != 3 && len(s) != 6) {
		return rgb{}, false
	}
	if len(s) == 3 {
		s = string([]byte{s[0], s[0], s[1], s[1], s[2], s[2]})
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return rgb{}, false
	}
	return rgb{uint8(v >> 16), uint8(v >> 8), uint8(v)}, true
}

// luminance is the WCAG relative luminance.
func (c rgb) luminance() float64 {
	lin := func(v uint8) float64 {
		s := float64(v) / 255
		if s <= 0.03928 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(c.r) + 0.7152*lin(c.g) + 0.0722*lin(c.b)
}

func contrast(a, b rgb) float64 {
	la, lb := a.luminance(), b.luminance()
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

var (
	white = rgb{255, 255, 255}
	black = rgb{0, 0, 0}
)

// onColor is white or black, whichever reads better on c; one of the two
// always reaches 4.58:1 (the square root of 21, the widest contrast).
func onColor(c rgb) rgb {
	if contrast(c, white) >= contrast(c, black) {
		return white
	}
	return black
}

// readableOnWhite darkens c until it reads as text on white.
func readableOnWhite(c rgb) rgb {
	for i := 0; i < 20 && contrast(c, white) < contrastMin; i++ {
		c = rgb{uint8(float64(c.r) * 0.9), uint8(float64(c.g) * 0.9), uint8(float64(c.b) * 0.9)}
	}
	return c
}
