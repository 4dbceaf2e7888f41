// Package instructions is the ledger's side of the production rails: what
// a payout or collection asked of a provider instance (an EVM chain, MTN
// MoMo, M-Pesa), committed before the first outbound request, and the
// treasury, each instance's float in the ledger that the money it carries
// moves through (treasury.go). It is a feature of the ledger's kernel
// (ledger/feature.go): its commands are applied by ledger.State.Apply in
// log order like every other, and its records are kept in the state store
// under tags ledger.TagInstruction and ledger.TagFloatFunding.
//
// One package holds both because the float follows the instruction: a
// payout or collection with an open instruction settles against the float
// of the instance it names (ledger.SetMovesThrough), and the operator's
// fundings of that float (FundFloat) are what reconciles it with the
// provider.
//
// An instruction is made by Prepare once the adapter prepared it: the
// instance's name, the provider's idempotency key (MoMo's X-Reference-Id,
// M-Pesa's OriginatorConversationID, a transaction hash) and, where the
// adapter gives one, the exact request to send (a signed transaction). A
// prepared value is never lost: a second Prepare for the same payout or
// collection changes nothing and answers with the committed one
// (Replayed), so two leaders racing to prepare converge on the first
// committed; only Replace supersedes it, for an adapter's same-nonce
// replacement of a stuck transaction, whose payload keeps what it needs of
// the earlier ones.
//
// For an adapter that must never send twice (M-Pesa), MarkSent records
// "submitting" before the request goes out; a leader that finds it set,
// with no answer recorded, only asks the provider's status. It is cleared
// again only when the provider answered that nothing was done.
//
// Callbacks find an instruction by (provider, key): the key it was first
// prepared with. The instruction closes, in the same Apply, when its
// payout or collection ends (ledger.SettlePayout, ledger.SettleCollection):
// an open instruction is work the rail driver resumes, a closed one is
// history.
//
// Kinds 121–129 belong to the production rails (120 is the deployment's
// id key, package publicids; 125 and 126 are package deposits' feeds).
package instructions

import (
	"strings"

	"payments/ledger"
)

// Command kinds of provider instructions.
const (
	KindPrepare      ledger.Kind = 121
	KindMarkSent     ledger.Kind = 122
	KindSetReference ledger.Kind = 123
	KindReplace      ledger.Kind = 124
)

// Instruction is a payout's or collection's instruction to a provider
// instance.
type Instruction struct {
	ID         string // the payout's or collection's id
	OrgID      string
	Provider   string // the instance's configured name
	Collection bool   // a collection's, else a payout's
	// Key is the provider's idempotency key as first prepared: callbacks
	// name the instruction by it.
	Key string
	// PreparedKey and Payload are the prepared value to send: the first
	// one, or the latest replacement.
	PreparedKey string
	Payload     string
	// SendOnce: the adapter must never send this instruction twice; Sent
	// then says a request may have reached the provider.
	SendOnce bool
	Sent     bool
	// ProviderRef is the provider's own reference, once it gave one.
	ProviderRef  string
	Replacements uint32 // how many times the prepared value was replaced
	Closed       bool   // its payout or collection is final
	CreatedAt    int64  // the leader's clock, unix ms
	UpdatedAt    int64
}

// Prepare commits a payout's or collection's prepared instruction before
// it is first sent.
type Prepare struct {
	At         int64
	ID         string
	Provider   string
	Collection bool
	Key        string
	Payload    string
	SendOnce   bool
}

// MarkSent records that a send-once instruction is being submitted (Sent
// true: from now on it may have arrived), or that the provider answered
// that nothing was done (Sent false).
type MarkSent struct {
	At   int64
	ID   string
	Sent bool
}

// SetReference records the provider's reference for an instruction.
type SetReference struct {
	At          int64
	ID          string
	ProviderRef string
}

// Replace supersedes an instruction's prepared value with the adapter's
// replacement (committed before it is sent).
type Replace struct {
	At      int64
	ID      string
	Key     string
	Payload string
}

func (*Prepare) Kind() ledger.Kind      { return KindPrepare }
func (*MarkSent) Kind() ledger.Kind     { return KindMarkSent }
func (*SetReference) Kind() ledger.Kind { return KindSetReference }
func (*Replace) Kind() ledger.Kind      { return KindReplace }

func (c *Prepare) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.Provider)
	f.Bool(&c.Collection)
	f.Str(&c.Key, &c.Payload)
	f.Bool(&c.SendOnce)
}

func (c *Prepare) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (c *MarkSent) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Bool(&c.Sent)
}

func (c *MarkSent) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (c *SetReference) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.ProviderRef)
}

func (c *SetReference) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (c *Replace) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.Key, &c.Payload)
}

func (c *Replace) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func init() {
	ledger.RegisterFieldsCommands(
		ledger.Fresh[Prepare], ledger.Fresh[MarkSent], ledger.Fresh[SetReference],
		ledger.Fresh[Replace], ledger.Fresh[FundFloat])
	ledger.AddPayoutMoved(func(s *ledger.State, p ledger.Payout, at int64) {
		if p.Status.Terminal() {
			closeInstruction(s, p.ID, at)
		}
	})
	ledger.AddCollectionSettled(func(s *ledger.State, col ledger.Collection, at int64) {
		closeInstruction(s, col.ID, at)
	})
	ledger.SetMovesThrough(movesThrough)
	ledger.SetFloatAccount(floatAccount)
}

// fields is an instruction's codec, in its frozen order.
func (in *Instruction) fields(f *ledger.Codec) {
	f.Str(&in.ID, &in.OrgID, &in.Provider)
	f.Bool(&in.Collection)
	f.Str(&in.Key, &in.PreparedKey, &in.Payload)
	f.Bool(&in.SendOnce, &in.Sent)
	f.Str(&in.ProviderRef)
	replacements := uint64(in.Replacements)
	f.Uvarint(&replacements)
	in.Replacements = uint32(replacements)
	f.Bool(&in.Closed)
	f.Varint(&in.CreatedAt, &in.UpdatedAt)
}

// key is (provider, key) as a lookup key.
func key(provider, key string) string {
	if provider == "" || key == "" {
		return ""
	}
	return provider + "\x00" + key
}

// indexKey names the lookup by (provider, key).
const indexKey byte = 'k'

// instructionKind: an instruction stays open until its payout or
// collection is final.
var instructionKind = ledger.NewUnlistedRecordKind(ledger.RecordSpec[Instruction]{
	Tag: ledger.TagInstruction, Name: "instruction",
	ID:     func(in *Instruction) (string, string) { return in.ID, in.OrgID },
	Fields: (*Instruction).fields,
	Open:   func(in *Instruction) bool { return !in.Closed },
	Lookups: []ledger.Lookup[Instruction]{
		{Name: indexKey, Key: func(in *Instruction) string { return key(in.Provider, in.Key) }},
	},
})

// book is the feature's part of a State: its stores.
type book struct {
	instructions ledger.Store[Instruction]
	fundings     ledger.Store[FloatFunding]
}

var feature = ledger.AddFeature(func(s *ledger.State) *book {
	return &book{
		instructions: ledger.AddStore(s, instructionKind),
		fundings:     ledger.AddStore(s, floatFundingKind),
	}
})

// Of returns the instruction a Prepare, MarkSent, SetReference or Replace
// left, or nil.
func Of(res ledger.Result) *Instruction { return ledger.ValueOf[Instruction](res) }

// Bounds of what an instruction carries.
const (
	// PayloadBytesMax bounds a prepared payload (a signed transaction and
	// its replacements).
	PayloadBytesMax = 64 << 10
	fieldMax        = ledger.InstructionFieldMax
)

// target returns the organization of the payout or collection id names
// and whether it can still move.
func target(s *ledger.State, id string, collection bool) (org string, open bool, err *ledger.Error) {
	if collection {
		c, ok := s.Collection(id)
		if !ok {
			return "", false, ledger.Errorf(ledger.CodeNotFound, "Collection not found")
		}
		return c.OrgID, !c.Status.Terminal(), nil
	}
	p, ok := s.Payout(id)
	if !ok {
		return "", false, ledger.Errorf(ledger.CodeNotFound, "Payout not found")
	}
	return p.OrgID, !p.Status.Terminal(), nil
}

func (c *Prepare) Apply(s *ledger.State) ledger.Result {
	switch {
	case c.Provider == "" || len(c.Provider) > fieldMax || strings.ContainsRune(c.Provider, 0):
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "an instruction names its provider instance")}
	case c.Key == "" || len(c.Key) > fieldMax:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "an instruction needs the provider's key")}
	case len(c.Payload) > PayloadBytesMax:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "an instruction's payload is over %d bytes", PayloadBytesMax)}
	}
	b := feature.Of(s)
	// A prepared value, once committed, is the one: never overwritten.
	if in, ok := b.instructions.Get(c.ID); ok {
		return ledger.Result{Replayed: true, Value: &in}
	}
	org, open, err := target(s, c.ID, c.Collection)
	if err != nil {
		return ledger.Result{Err: err}
	}
	if !open {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "%s is final; it needs no instruction", c.ID)}
	}
	if other, ok := b.instructions.Find(indexKey, key(c.Provider, c.Key)); ok {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "the key is %s's instruction already", other.ID)}
	}
	in := Instruction{
		ID: c.ID, OrgID: org, Provider: c.Provider, Collection: c.Collection, Key: c.Key,
		PreparedKey: c.Key, Payload: c.Payload, SendOnce: c.SendOnce, CreatedAt: c.At, UpdatedAt: c.At,
	}
	b.instructions.Insert(in)
	return ledger.Result{Value: &in}
}

// open returns the open instruction id names.
func open(s *ledger.State, id string) (Instruction, *ledger.Error) {
	in, ok := feature.Of(s).instructions.Get(id)
	if !ok {
		return in, ledger.Errorf(ledger.CodeNotFound, "Instruction not found")
	}
	if in.Closed {
		return in, ledger.Errorf(ledger.CodeConflict, "the instruction of %s is closed", id)
	}
	return in, nil
}

// change is the answer to a command on the open instruction in: a replay
// when the command asks for what in already is (unchanged), else in
// changed by set and stored, updated at leader time at.
func change(s *ledger.State, in Instruction, unchanged bool, at int64, set func(*Instruction)) ledger.Result {
	if unchanged {
		return ledger.Result{Replayed: true, Value: &in}
	}
	set(&in)
	in.UpdatedAt = at
	feature.Of(s).instructions.Put(in)
	return ledger.Result{Value: &in}
}

func (c *MarkSent) Apply(s *ledger.State) ledger.Result {
	in, err := open(s, c.ID)
	if err != nil {
		return ledger.Result{Err: err}
	}
	if !in.SendOnce {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "only a send-once instruction records its sending")}
	}
	return change(s, in, in.Sent == c.Sent, c.At, func(in *Instruction) { in.Sent = c.Sent })
}

func (c *SetReference) Apply(s *ledger.State) ledger.Result {
	if c.ProviderRef == "" || len(c.ProviderRef) > fieldMax {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "a provider reference is 1 to %d bytes", fieldMax)}
	}
	in, err := open(s, c.ID)
	if err != nil {
		return ledger.Result{Err: err}
	}
	return change(s, in, in.ProviderRef == c.ProviderRef, c.At, func(in *Instruction) { in.ProviderRef = c.ProviderRef })
}

func (c *Replace) Apply(s *ledger.State) ledger.Result {
	switch {
	case c.Key == "" || len(c.Key) > fieldMax:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "a replacement needs the provider's key")}
	case len(c.Payload) > PayloadBytesMax:
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "an instruction's payload is over %d bytes", PayloadBytesMax)}
	}
	in, err := open(s, c.ID)
	if err != nil {
		return ledger.Result{Err: err}
	}
	return change(s, in, in.PreparedKey == c.Key && in.Payload == c.Payload, c.At, func(in *Instruction) {
		in.PreparedKey, in.Payload = c.Key, c.Payload
		in.Replacements++
	})
}

// closeInstruction closes the instruction of a payout or collection that
// just ended, if it has one (ledger.AddPayoutMoved,
// ledger.AddCollectionSettled). Open instructions are in memory, so one
// that does not exist costs a map lookup.
func closeInstruction(s *ledger.State, id string, at int64) {
	st := feature.Of(s).instructions
	if !st.Taken(id) {
		return
	}
	in, _ := st.Get(id)
	if in.Closed {
		return
	}
	in.Closed, in.UpdatedAt = true, at
	st.Put(in)
}

// Get returns a payout's or collection's instruction, open or closed.
func Get(r *ledger.Reader, id string) (Instruction, bool) {
	return ledger.ReadRecord(r, instructionKind, id)
}

// ByKey returns the instruction a provider instance's key names (the key
// it was first prepared with).
func ByKey(r *ledger.Reader, provider, k string) (Instruction, bool) {
	return ledger.ReadFind(r, instructionKind, indexKey, key(provider, k))
}

// Open walks the instructions whose payout or collection is not final;
// see ledger.Reader.OpenPayouts.
func Open(r *ledger.Reader, after ledger.OpenCursor, limit int) ([]Instruction, ledger.OpenCursor, bool) {
	return ledger.ReadOpen(r, instructionKind, after, limit)
}
