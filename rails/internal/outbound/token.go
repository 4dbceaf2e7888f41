package outbound

import (
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
