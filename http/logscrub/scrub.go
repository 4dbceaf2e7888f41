package logscrub

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
)

// Masked replaces what a pattern hides.
const Masked = "[redacted]"

// secretPatterns are the shapes of secrets, each with the part kept (the
// first group: a prefix that says what was hidden).
var secretPatterns = []*regexp.Regexp{
	// API keys: the stack prefix stays, so the line still says which kind.
	regexp.MustCompile(`(sk_(?:test|live)_)[A-Za-z0-9]+`),
	// Webhook signing secrets (base64).
	regexp.MustCompile(`(whsec_)[A-Za-z0-9+/=_-]+`),
	// An Authorization header's value, raw or as Go quotes it (\r\n as
	// two escapes), up to the end of its line or of the quoted text.
	regexp.MustCompile(`(?i)(authorization["']?\s*[:=]\s*)(?:[^\r\n"\\]|\\[^rn"])*`),
	// A bearer token of any shape.
	regexp.MustCompile(`(?i)(bearer\s+)[^\s"\\,;]+`),
}

// String returns s with every secret masked.
func String(s string) string {
	for _, p := range secretPatterns {
		s = p.ReplaceAllString(s, "${1}"+Masked)
	}
	return s
}

// Handler masks secrets in records before passing them on.
type Handler struct{ next slog.Handler }

// New wraps next.
func New(next slog.Handler) *Handler { return &Handler{next: next} }

var _ slog.Handler = (*Handler)(nil)

func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(scrubAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = scrubAttr(a)
	}
	return &Handler{next: h.next.WithAttrs(clean)}
}

func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name)}
}

// scrubAttr masks an attribute's value. Values other than numbers, times
// and durations are rendered to text first (an error, a panic value, a
// struct), since their text is what the handler would write.
func scrubAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, ga := range g {
			clean[i] = scrubAttr(ga)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, String(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, String(x.String()))
		default:
			return slog.String(a.Key, String(fmt.Sprint(x)))
		}
	default:
		return slog.Attr{Key: a.Key, Value: v}
	}
}
