package dashboard

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/url"
	"sort"
	"strings"
	"time"

	"payments/http/webassets"
)

//go:embed templates
var templateFiles embed.FS

// Base is the prefix every dashboard page and asset is served under.
const Base = "/dashboard"

// Member is the signed-in team member a page is shown to.
type Member struct {
	Email string
	Role  string // "owner", "developer" or "viewer"
}

// Page is one rendering of a dashboard page: the layout's parts and the
// page's own data (View), which is mostly an API answer as JSON decoded
// into maps (see Decode).
type Page struct {
	Name      string // the template: "home", "keys", …
	Title     string
	Section   string // the nav entry shown as current
	Member    Member
	Live      bool   // production stack
	CSRF      string // the hidden "csrf" field of every form
	RequestID string
	Notice    string // a line saying what was just done
	Problem   *Problem
	View      any
}

// Problem is an API error answer as the page shows it.
type Problem struct {
	Status  int
	Code    string
	Message string
	Details []Detail
}

// Detail is one field of a validation error.
type Detail struct{ Field, Message string }

// Stack names the stack plainly.
func (p *Page) Stack() string {
	if p.Live {
		return "Production"
	}
	return "Sandbox"
}

// Can reports whether the member's role may take a kind of action:
// "write" (owner, developer) or "admin" (owner only).
func (p *Page) Can(what string) bool {
	switch what {
	case "admin":
		return p.Member.Role == "owner"
	case "write":
		return p.Member.Role == "owner" || p.Member.Role == "developer"
	}
	return false
}

// Nav lists the sections of the navigation bar.
func (p *Page) Nav() []NavItem {
	items := []NavItem{{"home", "Home", Base}}
	for _, k := range MoneyKinds {
		items = append(items, NavItem{k.Slug, k.Title, Base + "/" + k.Slug})
	}
	items = append(items,
		NavItem{"ledger", "Ledger", Base + "/ledger"},
		NavItem{"keys", "API keys", Base + "/keys"},
		NavItem{"webhooks", "Webhooks", Base + "/webhooks"},
		NavItem{"requests", "Request log", Base + "/requests"},
		NavItem{"team", "Team", Base + "/team"},
	)
	if !p.Live {
		items = append(items, NavItem{"sandbox", "Sandbox tools", Base + "/sandbox"})
	}
	return items
}

// NavItem is one entry of the navigation bar.
type NavItem struct{ Section, Label, Href string }

// MoneyKind is a list of the API's money movements the dashboard shows.
type MoneyKind struct {
	Slug    string   // path under /dashboard and under /v1
	Title   string   // "Payouts"
	Field   string   // the member of a single resource's answer: "payout"
	Filters []string // the list's query filters the page offers
	Columns []Column // the members shown in the list; the first links to the page of one
}

// Column is a member of a listed resource (a dotted path) and its heading.
type Column struct{ Path, Label string }

var (
	colID        = Column{"id", "Id"}
	colStatus    = Column{"status", "Status"}
	colReference = Column{"externalReference", "Reference"}
	colCreated   = Column{"createdAt", "Created"}
)

// MoneyKinds are the money lists, in the navigation's order.
var MoneyKinds = []MoneyKind{
	{"payouts", "Payouts", "payout", []string{"status", "recipientId"}, []Column{colID, colStatus,
		{"from.amount", "Debited"}, {"from.currency", "Currency"}, {"to.amount", "Sent"}, {"to.currency", "To currency"},
		{"to.code", "Rail"}, colReference, colCreated}},
	{"collections", "Collections", "collection", []string{"status", "type", "code", "currency", "externalReference", "from", "to"}, []Column{colID, colStatus,
		{"type", "Type"}, {"from.amount", "Amount"}, {"from.currency", "Currency"}, {"from.code", "Method"}, colReference, colCreated}},
	{"orders", "Orders", "order", []string{"status", "currency", "externalReference", "from", "to"}, []Column{colID, colStatus,
		{"from.amount", "Pays in"}, {"from.currency", "Currency"}, {"to.amount", "Pays out"}, {"to.currency", "To currency"}, colReference, colCreated}},
	{"conversions", "Conversions", "conversion", nil, []Column{colID, colStatus,
		{"from.amount", "From"}, {"from.currency", "Currency"}, {"to.amount", "To"}, {"to.currency", "To currency"}, colCreated}},
	{"payment-links", "Payment links", "paymentLink", []string{"status", "email"}, []Column{colID, colStatus,
		{"title", "Title"}, {"amount", "Amount"}, {"currency", "Currency"}, {"totalReceived", "Received"}, colCreated}},
}

// LookupMoneyKind returns the money list served under slug.
func LookupMoneyKind(slug string) (MoneyKind, bool) {
	for _, k := range MoneyKinds {
		if k.Slug == slug {
			return k, true
		}
	}
	return MoneyKind{}, false
}

var templates = map[string]*template.Template{}

func init() {
	files, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		templates[name] = webassets.Head(template.Must(template.New("layout.html").Funcs(funcs).
			ParseFS(templateFiles, "templates/layout.html", f)))
	}
}

var funcs = template.FuncMap{
	"asset":    func(file string) string { return assetPath(Base, file) },
	"show":     Show,
	"get":      Get,
	"datetime": datetime,
	"path":     url.PathEscape,
	"pretty":   pretty,
	"has":      func(list []any, v string) bool { return contains(list, v) },
	"fields":   fieldsOf,
	"join":     joinStrings,
	"chart":    func(c Chart) template.HTML { return c.SVG() },
}

// Render renders the page.
func (p *Page) Render() ([]byte, error) {
	t, ok := templates[p.Name]
	if !ok {
		return nil, fmt.Errorf("dashboard: no template %q", p.Name)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// CSP is a page's Content-Security-Policy: its own scripts, styles and
// images only, forms posted only to itself, no framing.
func (p *Page) CSP() string {
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
		"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}

// NewNonce returns a fresh random token.
func NewNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode reads an API answer into maps, keeping numbers as written.
func Decode(body []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Get reads a member of decoded JSON by a dotted path ("from.amount");
// nil when absent.
func Get(v any, path string) any {
	for _, part := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[part]
	}
	return v
}

// Show writes a decoded JSON value for a person: "—" for null.
func Show(v any) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case string:
		if x == "" {
			return "—"
		}
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = Show(e)
		}
		if len(parts) == 0 {
			return "—"
		}
		return strings.Join(parts, ", ")
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// Field is one member of a resource, for a detail page's table.
type Field struct {
	Name  string
	Value any
}

// fieldsOf lists a resource's members in name order, leaving out the
// timeline (shown apart).
func fieldsOf(v any) []Field {
	m, _ := v.(map[string]any)
	out := make([]Field, 0, len(m))
	for k, x := range m {
		if k == "timeline" {
			continue
		}
		out = append(out, Field{k, x})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func contains(list []any, v string) bool {
	for _, e := range list {
		if s, ok := e.(string); ok && s == v {
			return true
		}
	}
	return false
}

// pretty indents a decoded JSON value (a request's redacted body).
func pretty(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return Show(v)
	}
	return string(b)
}

const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// datetime shows an API timestamp for a person, in UTC.
func datetime(v any) string {
	s, ok := v.(string)
	if !ok {
		return Show(v)
	}
	for _, layout := range []string{timeLayout, time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format("2 Jan 2006, 15:04:05 UTC")
		}
	}
	return s
}

// MoneyList is one page of a money list: the kind and the API's answer.
type MoneyList struct {
	Kind MoneyKind
	List map[string]any
}

// NextHref is the address of a list's next page: path with the filters
// q and the answer's nextCursor; "" on its last page.
func NextHref(path string, q url.Values, list map[string]any) template.URL {
	c, ok := Get(list, "nextCursor").(string)
	if !ok || c == "" {
		return ""
	}
	next := url.Values{}
	for k, v := range q {
		if k != "cursor" {
			next[k] = v
		}
	}
	next.Set("cursor", c)
	return template.URL(path + "?" + next.Encode())
}

// joinStrings writes a decoded list of strings comma-separated, for a
// form field.
func joinStrings(v any) string {
	list, _ := v.([]any)
	parts := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ",")
}
