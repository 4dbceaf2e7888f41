package dashauth

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"html/template"

	"payments/actors/app"
)

// The sign-in, first-owner setup, invitation and team pages: plain forms,
// no script, under a strict Content-Security-Policy (CSP).

//go:embed templates/*.html
var templateFiles embed.FS

var pages = template.Must(template.ParseFS(templateFiles, "templates/*.html"))

// PageMember is the signed-in member a page shows in its header.
type PageMember struct {
	Email, Role string
}

// TeamMember is one row of the team page.
type TeamMember struct {
	ID, Email, Role string
	You             bool
}

// TeamInvitation is one pending invitation on the team page.
type TeamInvitation struct {
	ID, Email, Role, Expires string
}

// Page is what every one of these pages shows; each uses its part.
type Page struct {
	Title, Nonce, CSRF string
	Member             *PageMember // signed in: the header with sign-out
	Error, Notice      string
	RequestID          string

	// The sign-in and acceptance forms.
	Email, Action, OrgName, Role string
	Setup                        bool
	Reset                        bool // a password reset link
	PasswordLenMin               int

	// A message page.
	Message string

	// The team page.
	Owner                                 bool
	Roles                                 []string
	Members                               []TeamMember
	Invitations                           []TeamInvitation
	NewLink, NewLinkEmail, NewLinkExpires string
}

// NewNonce draws a CSP nonce.
func NewNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Render renders the template named name ("signin", "accept", "message")
// with p. The Team page's fields are shown by the dashboard's shared
// layout (package dashboard's team template), with p as its view.
func (p *Page) Render(name string) ([]byte, error) {
	if p.Nonce == "" {
		p.Nonce = NewNonce()
	}
	p.PasswordLenMin = app.PasswordLenMin
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, p); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// CSP is the pages' Content-Security-Policy: no script at all, styles by
// nonce, forms posted only to this origin, never framed.
func (p *Page) CSP() string {
	return "default-src 'none'; script-src 'none'; style-src 'nonce-" + p.Nonce + "'; img-src 'self'; " +
		"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}
