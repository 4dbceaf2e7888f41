package checkout

import (
	"net/url"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FieldValueLenMax is the most characters a custom field's value may have.
const FieldValueLenMax = 500

// Problem is what is wrong with one value the payer sent.
type Problem struct {
	Field   string // customFields.<name>
	Message string
}

// CheckFieldValues checks the payer's values of a link's custom fields:
// required ones present, each known and of its type.
func CheckFieldValues(fields []CustomField, values map[string]string) []Problem {
	var out []Problem
	known := make(map[string]bool, len(fields))
	for _, f := range fields {
		known[f.Name] = true
		v := strings.TrimSpace(values[f.Name])
		if v == "" {
			if f.Required {
				out = append(out, Problem{"customFields." + f.Name, "is required"})
			}
			continue
		}
		if msg := checkValue(f.Input, v); msg != "" {
			out = append(out, Problem{"customFields." + f.Name, msg})
		}
	}
	var unknown []string
	for name := range values {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		out = append(out, Problem{"customFields." + name, "is not a field of this payment link"})
	}
	return out
}

func checkValue(input, v string) string {
	if !utf8.ValidString(v) || utf8.RuneCountInString(v) > FieldValueLenMax {
		return "must be at most 500 characters of text"
	}
	for _, r := range v {
		if unicode.IsControl(r) {
			return "must not contain control characters"
		}
	}
	switch input {
	case "email":
		local, domain, ok := strings.Cut(v, "@")
		if !ok || local == "" || !strings.Contains(domain, ".") || strings.ContainsAny(v, " \t") {
			return "must be an email address such as ama@example.com"
		}
	case "tel":
		if strings.Trim(v, "+0123456789 -()") != "" {
			return "must be a phone number"
		}
	case "url":
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "must be an http or https address"
		}
	}
	return ""
}
