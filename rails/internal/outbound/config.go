package outbound

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// BaseURL reads a provider's API root as a providers file gives it: an
// http(s) URL with a host, its trailing slashes dropped.
func BaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("baseUrl %q is not an http(s) URL", raw)
	}
	return u, nil
}

// CheckCallbackURL checks the callback route an adapter gives its
// provider: absolute, and without a query, which is the adapter's to add.
func CheckCallbackURL(raw string) error {
	if u, err := url.Parse(raw); err != nil || u.Host == "" || u.RawQuery != "" {
		return fmt.Errorf("callback URL %q must be absolute and without a query", raw)
	}
	return nil
}

// OrDefault returns d, or def when d is not positive: a timing setting
// left out.
func OrDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Client returns client, or when it is nil a client whose exchanges time
// out after timeout.
func Client(client *http.Client, timeout time.Duration) *http.Client {
	if client == nil {
		return &http.Client{Timeout: timeout}
	}
	return client
}
