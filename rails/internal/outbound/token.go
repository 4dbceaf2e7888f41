package outbound

import (
	"net/http"
	"sync"
	"time"
)

// TokenCache holds a provider's access token. Its zero value is empty; it
// is safe for concurrent use, and one fetch serves every waiter.
type TokenCache struct {
	mu      sync.Mutex // held while a token is fetched
	token   string
	expires time.Time
}

// Get returns the cached token while it is valid for at least
// refreshBefore on now's clock; otherwise it forgets it and caches the
// token fetch returns with its expiry. now is read under the lock and
// passed to fetch.
func (c *TokenCache) Get(now func() time.Time, refreshBefore time.Duration, fetch func(now time.Time) (token string, expires time.Time, err error)) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := now()
	if c.token != "" && t.Before(c.expires.Add(-refreshBefore)) {
		return c.token, nil
	}
	c.token = ""
	tok, expires, err := fetch(t)
	if err != nil {
		return "", err
	}
	c.token, c.expires = tok, expires
	return tok, nil
}

// Invalidate forgets tok if it is still the cached token (the provider
// refused it).
func (c *TokenCache) Invalidate(tok string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == tok {
		c.token = ""
	}
}

// SendWithToken sends the request build makes with a bearer token from
// bearer. When refused says the gateway refused the token (it expired or
// was revoked early), the token is invalidated in cache and the request
// built and sent once more with a new one: the refused attempt did
// nothing, so it does not count as written. wrote reports whether any
// attempt that counts reached the wire.
func SendWithToken(client *http.Client, cache *TokenCache, bearer func() (string, error), build func(token string) (*http.Request, error), refused func(*Response) bool) (resp *Response, wrote bool, err error) {
	for attempt := 0; ; attempt++ {
		tok, err := bearer()
		if err != nil {
			return nil, wrote, err
		}
		req, err := build(tok)
		if err != nil {
			return nil, wrote, err
		}
		r, w, err := Send(client, req)
		wrote = wrote || w
		if err != nil {
			return nil, wrote, err
		}
		if refused(r) && attempt == 0 {
			cache.Invalidate(tok)
			wrote = false
			continue
		}
		return r, wrote, nil
	}
}
