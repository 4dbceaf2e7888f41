package ledger

import (
	"slices"
	"strings"
)

// Organization is a merchant: every resource belongs to exactly one, and an
// API key sees only its own organization's resources.
type Organization struct {
	ID              string
	Name            string
	Country         string // ISO 3166-1 alpha-2
	Timezone        string // IANA name
	DefaultCurrency string
	Status          string // "active"
	CreatedAt       int64  // unix milliseconds, chosen by the leader
	UpdatedAt       int64
}

// APIKey is a bearer credential of one organization. Only the SHA-256 hash of
// the secret is kept; the secret is shown once, when the key is created.
type APIKey struct {
	ID        string
	OrgID     string
	Name      string
	Hash      string // raw SHA-256 of the full secret, 32 bytes
	Hint      string // prefix and last four characters, for display: "sk_test_…9f3a"
	Scopes    Scopes
	Revoked   bool
	CreatedAt int64
	RevokedAt int64

	// Controls (package keycontrols; export_keycontrols.go): the spend
	// caps, the caller IP allowlist (canonical; "" permits any address),
	// and what the key has spent in its current day and month.
	Caps      SpendCaps
	Allowlist string
	Spent     SpendUsage
}

// Scopes is a set of permissions. Bit positions are frozen: they are stored
// in the log and in snapshots.
type Scopes uint32

// The scopes. A key carries a subset; each endpoint needs one (reference data
// such as the organization itself needs only a valid key).
const (
	ScopePayoutsWrite Scopes = 1 << iota
	ScopePayoutsRead
	ScopeCollectionsWrite
	ScopeCollectionsRead
	ScopeOrdersWrite
	ScopeOrdersRead
	ScopeConversionsWrite
	ScopeBalancesRead
	ScopeRecipientsWrite
	ScopeRecipientsRead
	ScopePaymentLinksWrite
	ScopePaymentLinksRead
	ScopeWebhooksWrite
	ScopeWebhooksRead
	ScopeFilesWrite
	ScopeFilesRead
	ScopeDisputesWrite
	ScopeDisputesRead
	ScopeSimulationsWrite
	ScopeKeysAdmin
	ScopeOrganizationsAdmin // create organizations: the operator's own keys only
	ScopeRequestsRead       // the organization's request log

	scopeEnd
)

// ScopesAll is every scope: the bootstrap key's set.
const ScopesAll = scopeEnd - 1

// ScopesMerchant is every scope but creating organizations: the set of an
// organization's first key.
const ScopesMerchant = ScopesAll &^ ScopeOrganizationsAdmin

var scopeNames = [...]string{
	"payouts:write", "payouts:read", "collections:write", "collections:read",
	"orders:write", "orders:read", "conversions:write", "balances:read",
	"recipients:write", "recipients:read", "payment_links:write", "payment_links:read",
	"webhooks:write", "webhooks:read", "files:write", "files:read",
	"disputes:write", "disputes:read", "simulations:write", "keys:admin",
	"organizations:admin", "requests:read",
}

// Has reports whether s holds every scope in want.
func (s Scopes) Has(want Scopes) bool { return s&want == want }

// Names lists the scopes in s in their canonical order.
func (s Scopes) Names() []string {
	names := make([]string, 0, len(scopeNames))
	for i, name := range scopeNames {
		if s&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return names
}

// ParseScope returns the scope with the given name.
func ParseScope(name string) (Scopes, bool) {
	for i, n := range scopeNames {
		if n == name {
			return 1 << i, true
		}
	}
	return 0, false
}

// ScopeName returns the name of a single scope.
func ScopeName(s Scopes) string {
	for i, n := range scopeNames {
		if s == 1<<i {
			return n
		}
	}
	return ""
}

// CreateOrganization creates an organization together with its first API key,
// in one command so that no organization exists without a way in.
type CreateOrganization struct {
	At              int64
	ID              string
	Name            string
	Country         string
	Timezone        string
	DefaultCurrency string
	Key             CreateAPIKey // Key.OrgID must equal ID
}

// CreateAPIKey adds a key to an organization.
type CreateAPIKey struct {
	At     int64
	ID     string
	OrgID  string
	Name   string
	Hash   string
	Hint   string
	Scopes Scopes
}

// RevokeAPIKey disables a key; a revoked key authenticates nothing.
type RevokeAPIKey struct {
	At    int64
	ID    string
	OrgID string
}

// organizationKind and apiKeyKind: organizations and their keys stay open
// for good (they grow with merchants, not with payments).
var organizationKind = newKind(tagOrganization, "organization", func(o *Organization) (string, string) { return o.ID, o.ID })

var apiKeyKind = newKind(tagAPIKey, "API key", func(k *APIKey) (string, string) { return k.ID, k.OrgID })

func (s *State) createOrganization(c *CreateOrganization) Result {
	if err := CheckID(c.ID, "org_"); err != nil {
		return Result{Err: err}
	}
	if _, ok := s.orgs.get(c.ID); ok {
		return Result{Err: Errorf(CodeConflict, "organization %s already exists", c.ID)}
	}
	if strings.TrimSpace(c.Name) == "" {
		return Result{Err: FieldInvalid("name", "is required")}
	}
	if c.DefaultCurrency != "" {
		if _, ok := LookupCurrency(c.DefaultCurrency); !ok {
			return Result{Err: FieldInvalid("defaultCurrency", "is not a supported currency")}
		}
	}
	if c.Key.OrgID != c.ID {
		return Result{Err: Errorf(CodeValidation, "first key belongs to another organization")}
	}
	if err := s.checkNewKey(&c.Key); err != nil {
		return Result{Err: err}
	}
	org := Organization{
		ID:              c.ID,
		Name:            c.Name,
		Country:         c.Country,
		Timezone:        c.Timezone,
		DefaultCurrency: c.DefaultCurrency,
		Status:          "active",
		CreatedAt:       c.At, // a new organization's clock has no offset yet
		UpdatedAt:       c.At,
	}
	s.orgs.insert(org)
	key := s.insertKey(&c.Key)
	return Result{Organization: &org, APIKey: &key}
}

func (s *State) createAPIKey(c *CreateAPIKey) Result {
	if err := s.CheckOrg(c.OrgID); err != nil {
		return Result{Err: err}
	}
	if err := s.checkNewKey(c); err != nil {
		return Result{Err: err}
	}
	key := s.insertKey(c)
	return Result{APIKey: &key}
}

func (s *State) checkNewKey(c *CreateAPIKey) *Error {
	if err := CheckID(c.ID, "key_"); err != nil {
		return err
	}
	if _, ok := s.keys.get(c.ID); ok {
		return Errorf(CodeConflict, "API key %s already exists", c.ID)
	}
	if len(c.Hash) != 32 {
		return Errorf(CodeValidation, "API key hash must be 32 bytes")
	}
	if _, ok := s.keyByHash[digest(c.Hash)]; ok {
		return Errorf(CodeConflict, "an API key with this secret already exists")
	}
	if c.Scopes&^ScopesAll != 0 {
		return Errorf(CodeValidation, "unknown scope bits")
	}
	if s.activeKeys(c.OrgID) >= KeysPerOrganizationMax {
		return Errorf(CodeValidation, "an organization has at most %d active API keys: revoke one first", KeysPerOrganizationMax)
	}
	if s.keys.count(c.OrgID) >= KeysStoredPerOrganizationMax {
		return Errorf(CodeValidation, "an organization has at most %d API keys, revoked ones included", KeysStoredPerOrganizationMax)
	}
	return nil
}

// KeysPerOrganizationMax bounds an organization's active API keys: a
// revoked key no longer counts.
const KeysPerOrganizationMax = 1000

// KeysStoredPerOrganizationMax bounds every key an organization ever had,
// revoked ones included, since keys stay in memory for good.
const KeysStoredPerOrganizationMax = 10 * KeysPerOrganizationMax

// activeKeys counts an organization's keys that are not revoked.
func (s *State) activeKeys(org string) int {
	n := 0
	s.keys.each(org, func(k APIKey) {
		if !k.Revoked {
			n++
		}
	})
	return n
}

func (s *State) insertKey(c *CreateAPIKey) APIKey {
	key := APIKey{
		ID:        c.ID,
		OrgID:     c.OrgID,
		Name:      c.Name,
		Hash:      c.Hash,
		Hint:      c.Hint,
		Scopes:    c.Scopes,
		CreatedAt: s.OrgNow(c.OrgID, c.At),
	}
	s.keys.insert(key)
	s.indexKey(&key)
	return key
}

func (s *State) indexKey(k *APIKey) { s.keyByHash[digest(k.Hash)] = k.ID }

func (s *State) revokeAPIKey(c *RevokeAPIKey) Result {
	key, ok := s.keys.owned(c.OrgID, c.ID)
	if !ok {
		return Result{Err: Errorf(CodeNotFound, "API key not found")}
	}
	if !key.Revoked {
		key.Revoked = true
		key.RevokedAt = s.OrgNow(c.OrgID, c.At)
		s.keys.put(key)
	}
	return Result{APIKey: &key}
}

// digest is a key hash as a fixed-size map key.
func digest(hash string) [32]byte {
	var d [32]byte
	copy(d[:], hash)
	return d
}

// APIKeys lists an organization's keys, oldest first.
func (r *Reader) APIKeys(orgID string) []APIKey {
	p := readPage(r, apiKeyKind, apiKeyKind.listPrefix(orgID), CursorStart, KeysStoredPerOrganizationMax, nil)
	slices.Reverse(p.Items)
	return p.Items
}

// APIKey returns an organization's key by id: another organization's id is
// as unknown as a made-up one.
func (r *Reader) APIKey(orgID, id string) (APIKey, bool) {
	k, ok := readRecord(r, apiKeyKind, id)
	if !ok || k.OrgID != orgID {
		return APIKey{}, false
	}
	return k, true
}

// CheckOrg is the check every command acting in an organization makes
// first: the organization exists. Its error is the API's 404.
func (s *State) CheckOrg(orgID string) *Error {
	if _, ok := s.orgs.get(orgID); !ok {
		return Errorf(CodeNotFound, "Organization not found")
	}
	return nil
}

// checkNew is the preamble of every command that creates a record in an
// organization, in the order the API reports it: the new id's shape
// (checkID), then the organization (checkOrg).
func (s *State) checkNew(id, prefix, orgID string) *Error {
	if err := CheckID(id, prefix); err != nil {
		return err
	}
	return s.CheckOrg(orgID)
}

// CheckID validates an identifier chosen by the leader: the expected prefix,
// then 1 to 64 lowercase letters, digits or underscores.
func CheckID(id, prefix string) *Error {
	if !strings.HasPrefix(id, prefix) || len(id) == len(prefix) || len(id) > len(prefix)+64 {
		return Errorf(CodeValidation, "identifier %q must start with %s", id, prefix)
	}
	for i := len(prefix); i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return Errorf(CodeValidation, "identifier %q has an invalid character", id)
		}
	}
	return nil
}
