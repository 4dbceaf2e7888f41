package ledger

import (
	"errors"
	"fmt"

	"payments/ledger/kv"
)

// Command is one change to the ledger, as proposed to the log. Everything a
// command needs to apply deterministically is in it: identifiers, the
// leader's clock, fees. Apply reads nothing else.
type Command interface {
	Kind() Kind
	Encode(e *Encoder)
}

// Kind tags a command in the log. Values are frozen: a new command is a new
// kind, and a kind is never reused.
type Kind uint8

// Command kinds.
const (
	KindCreateOrganization   Kind = 1
	KindCreateAPIKey         Kind = 2
	KindRevokeAPIKey         Kind = 3
	KindFundBalance          Kind = 4
	KindCreatePayout         Kind = 5
	KindMarkPayoutProcessing Kind = 6
	KindSettlePayout         Kind = 7
	KindCreateCollection     Kind = 8
	KindSettleCollection     Kind = 9
)

func (*CreateOrganization) Kind() Kind { return KindCreateOrganization }
func (*CreateAPIKey) Kind() Kind       { return KindCreateAPIKey }
func (*RevokeAPIKey) Kind() Kind       { return KindRevokeAPIKey }
func (*FundBalance) Kind() Kind        { return KindFundBalance }
func (c *CreatePayout) Kind() Kind {
	if c.Spec.RoutingNumber != "" {
		return KindCreatePayoutRouted // routing.go
	}
	return KindCreatePayout
}

func (*MarkPayoutProcessing) Kind() Kind { return KindMarkPayoutProcessing }
func (*SettlePayout) Kind() Kind         { return KindSettlePayout }
func (*CreateCollection) Kind() Kind     { return KindCreateCollection }
func (*SettleCollection) Kind() Kind     { return KindSettleCollection }

// batchVersion is the first byte of every encoded batch.
const batchVersion = 1

// BatchCommandsMax bounds the commands in one log entry.
const BatchCommandsMax = 4096

// EncodeBatch encodes commands as one log entry: a version byte, a count,
// then each command as its kind and its fields.
func EncodeBatch(dst []byte, cmds []Command) []byte {
	e := kv.NewEncoder(dst)
	e.U8(batchVersion)
	e.Uvarint(uint64(len(cmds)))
	for _, c := range cmds {
		e.U8(uint8(c.Kind()))
		c.Encode(&e)
	}
	return e.Bytes()
}

// DecodeBatch decodes a log entry written by EncodeBatch.
func DecodeBatch(b []byte) ([]Command, error) {
	d := kv.NewDecoder(b)
	d.PoolStrings()
	if v := d.U8(); d.Err() == nil && v != batchVersion {
		return nil, fmt.Errorf("ledger: unknown batch version %d", v)
	}
	n := d.Count()
	if n > BatchCommandsMax {
		return nil, fmt.Errorf("ledger: batch of %d commands exceeds %d", n, BatchCommandsMax)
	}
	cmds := make([]Command, 0, n)
	for i := 0; i < n && d.Err() == nil; i++ {
		c, err := decodeCommand(&d)
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, c)
	}
	if d.Err() != nil {
		return nil, d.Err()
	}
	if len(d.Rest()) != 0 {
		return nil, errors.New("ledger: trailing bytes after batch")
	}
	return cmds, nil
}

// The built-in commands decode by their fields methods, as the kinds
// registered with registerFields do.
func init() {
	registerBuiltin[CreateOrganization](KindCreateOrganization)
	registerBuiltin[CreateAPIKey](KindCreateAPIKey)
	registerBuiltin[RevokeAPIKey](KindRevokeAPIKey)
	registerBuiltin[FundBalance](KindFundBalance)
	registerBuiltin[CreatePayout](KindCreatePayout)
	registerBuiltin[MarkPayoutProcessing](KindMarkPayoutProcessing)
	registerBuiltin[SettlePayout](KindSettlePayout)
	registerBuiltin[CreateCollection](KindCreateCollection)
	registerBuiltin[SettleCollection](KindSettleCollection)
}

func decodeCommand(d *Decoder) (Command, error) {
	kind := Kind(d.U8())
	if d.Err() != nil {
		return nil, d.Err()
	}
	decode := commandDecoders[kind]
	if decode == nil {
		return nil, fmt.Errorf("ledger: unknown command kind %d", kind)
	}
	c := decode(d)
	if d.Err() != nil {
		return nil, d.Err()
	}
	return c, nil
}

func (c *CreateOrganization) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.Name, &c.Country, &c.Timezone, &c.DefaultCurrency)
	c.Key.fields(f)
}

func (c *CreateOrganization) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *CreateAPIKey) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.Name, &c.Hash, &c.Hint)
	kv.FieldU32(f, &c.Scopes)
}

func (c *CreateAPIKey) Encode(e *Encoder) { c.fields(e.Codec()) }

func decodeCreateAPIKey(d *Decoder) (k CreateAPIKey) {
	k.fields(d.Codec())
	return k
}

func (c *RevokeAPIKey) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID)
}

func (c *RevokeAPIKey) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *FundBalance) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.OrgID, &c.Currency)
	FieldMinor(f, &c.Amount)
	f.Str(&c.ExternalReference)
}

func (c *FundBalance) Encode(e *Encoder) { c.fields(e.Codec()) }

// fields are the spec's fields but RoutingNumber, which payouts append
// (routing.go).
func (s *PayoutSpec) fields(f *Codec) {
	f.Str(&s.Currency)
	FieldMinor(f, &s.Amount)
	FieldU8(f, &s.AmountSide)
	f.Str(&s.Method, &s.AccountNumber, &s.Address, &s.Tag, &s.RecipientID,
		&s.Narration, &s.Metadata, &s.FromKYC, &s.ToKYC)
}

func (c *CreatePayout) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.ExternalReference)
	c.Spec.fields(f)
	FieldMethodType(f, &c.MethodType)
	FieldMinor(f, &c.Fee)
	f.Uvarint(&c.Reservation)
}

func (c *CreatePayout) Encode(e *Encoder) {
	c.fields(e.Codec())
	c.Spec.encodeRouting(e) // appended (routing.go)
}

func (c *MarkPayoutProcessing) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.ProviderReference, &c.Message)
}

func (c *MarkPayoutProcessing) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *SettlePayout) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Bool(&c.Completed)
	f.Str(&c.Message)
}

func (c *SettlePayout) Encode(e *Encoder) { c.fields(e.Codec()) }

func (s *CollectionSpec) fields(f *Codec) {
	f.Str(&s.Currency)
	FieldMinor(f, &s.Amount)
	f.Str(&s.Method, &s.PayerNumber, &s.Narration, &s.Metadata, &s.KYC)
}

func (c *CreateCollection) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.ExternalReference)
	c.Spec.fields(f)
	FieldMethodType(f, &c.MethodType)
	FieldMinor(f, &c.Fee)
}

func (c *CreateCollection) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *SettleCollection) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Bool(&c.Completed)
	f.Str(&c.Message)
}

func (c *SettleCollection) Encode(e *Encoder) { c.fields(e.Codec()) }
