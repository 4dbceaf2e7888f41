package ledger

import "strings"

// Provider instructions: what a payout or collection asked of a provider
// instance (a production rail: an EVM chain, MTN MoMo, M-Pesa), committed
// before the first outbound request so that whoever leads next sends
// exactly the same request, or none at all.
//
// An instruction is made by PrepareInstruction once the adapter prepared
// it: the instance's name, the provider's idempotency key (MoMo's
// X-Reference-Id, M-Pesa's OriginatorConversationID, a transaction hash)
// and, where the adapter gives one, the exact request to send (a signed
// transaction). A prepared value is never lost: a second PrepareInstruction
// for the same payout or collection changes nothing and answers with the
// committed one (Replayed), so two leaders racing to prepare converge on
// the first committed; only ReplaceInstruction supersedes it, for an
// adapter's same-nonce replacement of a stuck transaction, whose payload
// keeps what it needs of the earlier ones.
//
// For an adapter that must never send twice (M-Pesa), MarkInstructionSent
// records "submitting" before the request goes out; a leader that finds
// it set, with no answer recorded, only asks the provider's status. It is
// cleared again only when the provider answered that nothing was done.
//
// Callbacks find an instruction by (provider, key): the key it was first
// prepared with. The instruction closes, in the same Apply, when its
// payout or collection ends (SettlePayout, SettleCollection): an open
// instruction is work the rail driver resumes, a closed one is history.
//
// Kinds 121–129 belong to the production rails (120 is the deployment's
// id key, publicids.go).

// Command kinds of provider instructions.
const (
	KindPrepareInstruction      Kind = 121
	KindMarkInstructionSent     Kind = 122
	KindSetInstructionReference Kind = 123
	KindReplaceInstruction      Kind = 124
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

// PrepareInstruction commits a payout's or collection's prepared
// instruction before it is first sent.
type PrepareInstruction struct {
	At         int64
	ID         string
	Provider   string
	Collection bool
	Key        string
	Payload    string
	SendOnce   bool
}

// MarkInstructionSent records that a send-once instruction is being
// submitted (Sent true: from now on it may have arrived), or that the
// provider answered that nothing was done (Sent false).
type MarkInstructionSent struct {
	At   int64
	ID   string
	Sent bool
}

// SetInstructionReference records the provider's reference for an
// instruction.
type SetInstructionReference struct {
	At          int64
	ID          string
	ProviderRef string
}

// ReplaceInstruction supersedes an instruction's prepared value with the
// adapter's replacement (committed before it is sent).
type ReplaceInstruction struct {
	At      int64
	ID      string
	Key     string
	Payload string
}

func (*PrepareInstruction) Kind() Kind      { return KindPrepareInstruction }
func (*MarkInstructionSent) Kind() Kind     { return KindMarkInstructionSent }
func (*SetInstructionReference) Kind() Kind { return KindSetInstructionReference }
func (*ReplaceInstruction) Kind() Kind      { return KindReplaceInstruction }

func (c *PrepareInstruction) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.Provider)
	f.Bool(&c.Collection)
	f.Str(&c.Key)
	f.Str(&c.Payload)
	f.Bool(&c.SendOnce)
}

func (c *PrepareInstruction) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *MarkInstructionSent) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Bool(&c.Sent)
}

func (c *MarkInstructionSent) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *SetInstructionReference) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.ProviderRef)
}

func (c *SetInstructionReference) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *ReplaceInstruction) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.Key)
	f.Str(&c.Payload)
}

func (c *ReplaceInstruction) Encode(e *Encoder) { c.fields(e.Codec()) }

func init() {
	registerFields[PrepareInstruction](KindPrepareInstruction)
	registerFields[MarkInstructionSent](KindMarkInstructionSent)
	registerFields[SetInstructionReference](KindSetInstructionReference)
	registerFields[ReplaceInstruction](KindReplaceInstruction)
}

func encodeInstruction(e *Encoder, in *Instruction) {
	e.Str(in.ID)
	e.Str(in.OrgID)
	e.Str(in.Provider)
	e.Bool(in.Collection)
	e.Str(in.Key)
	e.Str(in.PreparedKey)
	e.Str(in.Payload)
	e.Bool(in.SendOnce)
	e.Bool(in.Sent)
	e.Str(in.ProviderRef)
	e.Uvarint(uint64(in.Replacements))
	e.Bool(in.Closed)
	e.Varint(in.CreatedAt)
	e.Varint(in.UpdatedAt)
}

func decodeInstruction(d *Decoder) Instruction {
	return Instruction{
		ID: d.Str(), OrgID: d.Str(), Provider: d.Str(), Collection: d.Bool(), Key: d.Str(),
		PreparedKey: d.Str(), Payload: d.Str(), SendOnce: d.Bool(), Sent: d.Bool(), ProviderRef: d.Str(),
		Replacements: uint32(d.Uvarint()), Closed: d.Bool(), CreatedAt: d.Varint(), UpdatedAt: d.Varint(),
	}
}

// instructionKey is (provider, key) as a lookup key.
func instructionKey(provider, key string) string {
	if provider == "" || key == "" {
		return ""
	}
	return provider + "\x00" + key
}

// indexInstructionKey names the lookup by (provider, key).
const indexInstructionKey byte = 'k'

// instructionKind: an instruction stays open until its payout or
// collection is final.
var instructionKind = &kind[Instruction]{
	tag: tagInstruction, name: "instruction",
	id:  func(in *Instruction) (string, string) { return in.ID, in.OrgID },
	enc: encodeInstruction, dec: decodeInstruction,
	open: func(in *Instruction) bool { return !in.Closed },
	lookups: []lookup[Instruction]{
		{name: indexInstructionKey, key: func(in *Instruction) string { return instructionKey(in.Provider, in.Key) }},
	},
	unlisted: true,
}

// Bounds of what an instruction carries.
const (
	// InstructionPayloadBytesMax bounds a prepared payload (a signed
	// transaction and its replacements).
	InstructionPayloadBytesMax = 64 << 10
	instructionFieldMax        = 256
)

// instructionTarget returns the organization of the payout or collection
// id names and whether it can still move.
func (s *State) instructionTarget(id string, collection bool) (org string, open bool, err *Error) {
	if collection {
		c, ok := s.collections.get(id)
		if !ok {
			return "", false, Errorf(CodeNotFound, "Collection not found")
		}
		return c.OrgID, !c.Status.Terminal(), nil
	}
	p, ok := s.payouts.get(id)
	if !ok {
		return "", false, Errorf(CodeNotFound, "Payout not found")
	}
	return p.OrgID, !p.Status.Terminal(), nil
}

func (c *PrepareInstruction) Apply(s *State) Result {
	switch {
	case c.Provider == "" || len(c.Provider) > instructionFieldMax || strings.ContainsRune(c.Provider, 0):
		return Result{Err: Errorf(CodeValidation, "an instruction names its provider instance")}
	case c.Key == "" || len(c.Key) > instructionFieldMax:
		return Result{Err: Errorf(CodeValidation, "an instruction needs the provider's key")}
	case len(c.Payload) > InstructionPayloadBytesMax:
		return Result{Err: Errorf(CodeValidation, "an instruction's payload is over %d bytes", InstructionPayloadBytesMax)}
	}
	// A prepared value, once committed, is the one: never overwritten.
	if in, ok := s.instructions.get(c.ID); ok {
		return Result{Replayed: true, Instruction: &in}
	}
	org, open, err := s.instructionTarget(c.ID, c.Collection)
	if err != nil {
		return Result{Err: err}
	}
	if !open {
		return Result{Err: Errorf(CodeConflict, "%s is final; it needs no instruction", c.ID)}
	}
	if other, ok := s.instructions.find(indexInstructionKey, instructionKey(c.Provider, c.Key)); ok {
		return Result{Err: Errorf(CodeConflict, "the key is %s's instruction already", other.ID)}
	}
	in := Instruction{
		ID: c.ID, OrgID: org, Provider: c.Provider, Collection: c.Collection, Key: c.Key,
		PreparedKey: c.Key, Payload: c.Payload, SendOnce: c.SendOnce, CreatedAt: c.At, UpdatedAt: c.At,
	}
	s.instructions.insert(in)
	return Result{Instruction: &in}
}

// openInstruction returns the open instruction id names.
func (s *State) openInstruction(id string) (Instruction, *Error) {
	in, ok := s.instructions.get(id)
	if !ok {
		return in, Errorf(CodeNotFound, "Instruction not found")
	}
	if in.Closed {
		return in, Errorf(CodeConflict, "the instruction of %s is closed", id)
	}
	return in, nil
}

func (c *MarkInstructionSent) Apply(s *State) Result {
	in, err := s.openInstruction(c.ID)
	if err != nil {
		return Result{Err: err}
	}
	if !in.SendOnce {
		return Result{Err: Errorf(CodeValidation, "only a send-once instruction records its sending")}
	}
	if in.Sent == c.Sent {
		return Result{Replayed: true, Instruction: &in}
	}
	in.Sent, in.UpdatedAt = c.Sent, c.At
	s.instructions.put(in)
	return Result{Instruction: &in}
}

func (c *SetInstructionReference) Apply(s *State) Result {
	if c.ProviderRef == "" || len(c.ProviderRef) > instructionFieldMax {
		return Result{Err: Errorf(CodeValidation, "a provider reference is 1 to %d bytes", instructionFieldMax)}
	}
	in, err := s.openInstruction(c.ID)
	if err != nil {
		return Result{Err: err}
	}
	if in.ProviderRef == c.ProviderRef {
		return Result{Replayed: true, Instruction: &in}
	}
	in.ProviderRef, in.UpdatedAt = c.ProviderRef, c.At
	s.instructions.put(in)
	return Result{Instruction: &in}
}

func (c *ReplaceInstruction) Apply(s *State) Result {
	switch {
	case c.Key == "" || len(c.Key) > instructionFieldMax:
		return Result{Err: Errorf(CodeValidation, "a replacement needs the provider's key")}
	case len(c.Payload) > InstructionPayloadBytesMax:
		return Result{Err: Errorf(CodeValidation, "an instruction's payload is over %d bytes", InstructionPayloadBytesMax)}
	}
	in, err := s.openInstruction(c.ID)
	if err != nil {
		return Result{Err: err}
	}
	if in.PreparedKey == c.Key && in.Payload == c.Payload {
		return Result{Replayed: true, Instruction: &in}
	}
	in.PreparedKey, in.Payload, in.UpdatedAt = c.Key, c.Payload, c.At
	in.Replacements++
	s.instructions.put(in)
	return Result{Instruction: &in}
}

// closeInstruction closes the instruction of a payout or collection that
// just ended, if it has one. Open instructions are in memory, so one that
// does not exist costs a map lookup.
func (s *State) closeInstruction(id string, at int64) {
	if !s.instructions.taken(id) {
		return
	}
	in, _ := s.instructions.get(id)
	if in.Closed {
		return
	}
	in.Closed, in.UpdatedAt = true, at
	s.instructions.put(in)
}

// Instruction returns a payout's or collection's instruction, open or
// closed.
func (r *Reader) Instruction(id string) (Instruction, bool) {
	return readRecord(r, instructionKind, id)
}

// InstructionByKey returns the instruction a provider instance's key
// names (the key it was first prepared with).
func (r *Reader) InstructionByKey(provider, key string) (Instruction, bool) {
	return readFind(r, instructionKind, indexInstructionKey, instructionKey(provider, key))
}

// OpenInstructions walks the instructions whose payout or collection is
// not final; see OpenPayouts.
func (r *Reader) OpenInstructions(after OpenCursor, limit int) ([]Instruction, OpenCursor, bool) {
	return readOpen(r, instructionKind, after, limit)
}
