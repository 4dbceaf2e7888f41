package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// HTTPSettings are the settings of an adapter that speaks HTTP to its
// provider: its API root, the service's public root that callbacks go
// below, and the timing. An adapter's Settings embeds them beside its own.
type HTTPSettings struct {
	BaseURL            string `json:"baseUrl"`
	CallbackBaseURL    string `json:"callbackBaseUrl"`
	RequestTimeout     string `json:"requestTimeout"`
	TokenRefreshBefore string `json:"tokenRefreshBefore"`
	CheckAfter         string `json:"checkAfter"`
}

// Timing reads the timing settings: requestTimeout (one exchange),
// tokenRefreshBefore (how long before its expiry a token is replaced) and
// checkAfter (the next status check a pending outcome suggests). Each is
// empty (zero: the adapter's default) or a positive Go duration such as
// "30s".
func (s HTTPSettings) Timing() (request, refresh, check time.Duration, err error) {
	durations := [3]time.Duration{}
	for i, text := range [3]string{s.RequestTimeout, s.TokenRefreshBefore, s.CheckAfter} {
		if text == "" {
			continue
		}
		v, err := time.ParseDuration(text)
		if err != nil || v <= 0 {
			return 0, 0, 0, fmt.Errorf("%q is not a positive duration", text)
		}
		durations[i] = v
	}
	return durations[0], durations[1], durations[2], nil
}

// DecodeSettings reads the instance's "settings" object into v, refusing
// fields v does not have, so that a misspelt key is an error at start; an
// instance with no settings leaves v as it is.
func (ic InstanceConfig) DecodeSettings(v any) error {
	if len(ic.Settings) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(ic.Settings))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// CallbackURL is where the instance's provider sends its callbacks, below
// base, the service's public URL: {base}/v1/providers/{name}/callbacks.
// It is "" when base is: the instance has no callbacks.
func (ic InstanceConfig) CallbackURL(base string) string {
	if base == "" {
		return ""
	}
	return strings.TrimRight(base, "/") + "/v1/providers/" + url.PathEscape(ic.Name) + "/callbacks"
}

// Serves reports whether one of the instance's methods serves d.
func (ic InstanceConfig) Serves(d Direction) bool {
	for _, m := range ic.Methods {
		for _, s := range m.Directions {
			if got, ok := parseDirection(s); ok && got == d {
				return true
			}
		}
	}
	return false
}
