// Package publicids is the public ids of journal entries and events. Inside,
// an entry or event is its place in one sequence shared by every
// organization, and ledger.EntryID and ledger.EventID name it by a fixed,
// public scramble of that number: anyone can undo it, so a tenant reading
// its own ids would see the platform's volume, and every fresh deployment
// repeats them. What clients see instead is the number enciphered with a key
// drawn once per deployment (SetKey, replicated, so every node makes the
// same ids): "le_" or "wev_" and 26 characters of base32 (0-9a-v) of one AES
// block holding the number and a tag. Without the key ids are neither
// decodable nor guessable; with it they map back to the number without an
// index. A random string of the right shape is refused (its tag does not
// match) but for a chance of 2^-64.
//
// Inside the ledger (Event.ID, an entry's RefID, a delivery's EventID and
// their indexes) the old form stays, so no stored record changes; the HTTP
// layer translates at its edge. Before the key exists, and for deployments
// that began without one, the old form is also what clients are shown, and
// it stays accepted on input.
//
// It is a feature of the ledger's kernel (ledger/feature.go): the key is one
// record in the state store, under tag ledger.TagIDKey.
package publicids

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"sync"

	"payments/ledger"
)

// keyID is the id of the one record of the id key's kind.
const keyID = "public_ids"

// keyKind: the id key is a deployment key (one record that stays open, in
// no organization's list), like the URL signing key of package disputes.
var keyKind = ledger.NewDeploymentKeyKind(ledger.TagIDKey, "id key", keyID)

// part is what the feature keeps in a State: the key, once committed.
type part struct {
	keys ledger.Store[ledger.DeploymentKey]
}

var feature = ledger.AddFeature(func(s *ledger.State) *part {
	return &part{keys: ledger.AddStore(s, keyKind)}
})

// KeyLen is the length of an id key in bytes.
const KeyLen = 32

// SetKey commits the deployment's id key. The first one committed wins;
// a later one changes nothing and is answered as a replay.
type SetKey struct {
	At  int64
	Key string // KeyLen random bytes
}

// KindSetKey is frozen.
const KindSetKey ledger.Kind = 120

func (*SetKey) Kind() ledger.Kind { return KindSetKey }

func (c *SetKey) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.Key)
}

func (c *SetKey) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func init() {
	ledger.RegisterFieldsCommand[SetKey](KindSetKey)
}

func (c *SetKey) Apply(s *ledger.State) ledger.Result {
	return ledger.SetDeploymentKey(feature.Of(s).keys, keyID, c.Key, c.At, KeyLen, "an id key")
}

// Key returns the deployment's id key, once committed.
func Key(r *ledger.Reader) ([]byte, bool) {
	return ledger.ReadDeploymentKey(r, keyKind, keyID)
}

// IDs makes and reads the public ids of one deployment. The nil *IDs (no
// key yet) uses the old, unkeyed form. Safe for concurrent
// use.
type IDs struct {
	block cipher.Block
}

var idsByKey sync.Map // string(key) → *IDs

// New returns the public ids made with key (KeyLen bytes), or nil for no
// key.
func New(key []byte) *IDs {
	if len(key) == 0 {
		return nil
	}
	if p, ok := idsByKey.Load(string(key)); ok {
		return p.(*IDs)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("public ids v1"))
	block, err := aes.NewCipher(m.Sum(nil)[:16])
	if err != nil {
		panic(err) // a 16-byte key is always valid
	}
	p, _ := idsByKey.LoadOrStore(string(key), &IDs{block: block})
	return p.(*IDs)
}

// publicIDEncoding is base32 over digits and lower-case letters, which sort
// as their values, without padding.
var publicIDEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

const publicIDLen = 26 // base32 characters of one 16-byte block

// publicIDForm is how one sequence's public ids are spelled: their prefix,
// the tag sealed with the number (which keeps an entry's id from reading as
// an event's), and the old, unkeyed form both ways.
type publicIDForm struct {
	prefix   string
	tag      [8]byte
	old      func(seq uint64) string
	parseOld func(id string) (uint64, bool)
}

var (
	entryIDForm = publicIDForm{"le_", [8]byte{'l', 'e', 0, 0, 0, 0, 0, 1}, ledger.EntryID, ledger.ParseEntryID}
	eventIDForm = publicIDForm{"wev_", [8]byte{'w', 'e', 'v', 0, 0, 0, 0, 1}, ledger.EventID, ledger.ParseEventID}
)

func (p *IDs) seal(prefix string, tag [8]byte, seq uint64) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], seq)
	copy(b[8:], tag[:])
	p.block.Encrypt(b[:], b[:])
	return prefix + publicIDEncoding.EncodeToString(b[:])
}

func (p *IDs) open(body string, tag [8]byte) (uint64, bool) {
	if len(body) != publicIDLen {
		return 0, false
	}
	var b [16]byte
	if n, err := publicIDEncoding.Decode(b[:], []byte(body)); err != nil || n != 16 {
		return 0, false
	}
	if publicIDEncoding.EncodeToString(b[:]) != body { // one spelling per id
		return 0, false
	}
	p.block.Decrypt(b[:], b[:])
	if [8]byte(b[8:]) != tag {
		return 0, false
	}
	return binary.BigEndian.Uint64(b[:8]), true
}

// id is the public id of seq in form f; the old form without a key.
func (p *IDs) id(f publicIDForm, seq uint64) string {
	if p == nil {
		return f.old(seq)
	}
	return p.seal(f.prefix, f.tag, seq)
}

// parse reads an id in form f: public when it has the public shape and
// there is a key, else in the old form.
func (p *IDs) parse(f publicIDForm, id string) (uint64, bool) {
	if p != nil && len(id) == len(f.prefix)+publicIDLen && id[:len(f.prefix)] == f.prefix {
		return p.open(id[len(f.prefix):], f.tag)
	}
	return f.parseOld(id)
}

// internal turns a public id in form f into the old form the ledger
// stores; any other string is returned as it is.
func (p *IDs) internal(f publicIDForm, id string) string {
	if p == nil {
		return id
	}
	if seq, ok := p.parse(f, id); ok {
		return f.old(seq)
	}
	return id
}

// EntryID is the public id of the journal entry at seq.
func (p *IDs) EntryID(seq uint64) string { return p.id(entryIDForm, seq) }

// ParseEntryID reads an entry id, public or in the old form.
func (p *IDs) ParseEntryID(id string) (uint64, bool) { return p.parse(entryIDForm, id) }

// EventID is the public id of the event at seq.
func (p *IDs) EventID(seq uint64) string { return p.id(eventIDForm, seq) }

// ParseEventID reads an event id, public or in the old form.
func (p *IDs) ParseEventID(id string) (uint64, bool) { return p.parse(eventIDForm, id) }

// PublicRef is ref as clients see it: an entry id in the old form (a
// top-up's reference to its own entry) becomes its public id; any other
// reference is returned as it is.
func (p *IDs) PublicRef(ref string) string {
	if p == nil || len(ref) < 4 || ref[:3] != "le_" {
		return ref
	}
	if seq, ok := ledger.ParseEntryID(ref); ok {
		return p.EntryID(seq)
	}
	return ref
}

// InternalEntryRef is the inverse of PublicRef, for filters: a public
// entry id becomes the old form stored in the journal.
func (p *IDs) InternalEntryRef(ref string) string { return p.internal(entryIDForm, ref) }

// InternalEventID turns a public event id into the old form the ledger
// stores (a delivery's EventID); any other string is returned as it is.
func (p *IDs) InternalEventID(id string) string { return p.internal(eventIDForm, id) }
