package ledger

import (
	"errors"
	"fmt"
	"strings"
)

// Command is one change to the ledger, as proposed to the log. Everything a
// command needs to apply deterministically is in it: identifiers, the
// leader's clock, fees. Apply reads nothing else.
type Command interface {
	Kind() Kind
	encode(e *encoder)
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
	e := encoder{buf: dst}
	e.u8(batchVersion)
	e.uvarint(uint64(len(cmds)))
	for _, c := range cmds {
		e.u8(uint8(c.Kind()))
		c.encode(&e)
	}
	return e.buf
}

// DecodeBatch decodes a log entry written by EncodeBatch.
func DecodeBatch(b []byte) ([]Command, error) {
	d := decoder{buf: b, short: new(strings.Builder)}
	if v := d.u8(); d.err == nil && v != batchVersion {
		return nil, fmt.Errorf("ledger: unknown batch version %d", v)
	}
	n := d.count()
	if n > BatchCommandsMax {
		return nil, fmt.Errorf("ledger: batch of %d commands exceeds %d", n, BatchCommandsMax)
	}
	cmds := make([]Command, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		c, err := decodeCommand(&d)
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, c)
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.buf) != 0 {
		return nil, errors.New("ledger: trailing bytes after batch")
	}
	return cmds, nil
}

func decodeCommand(d *decoder) (Command, error) {
	kind := Kind(d.u8())
	var c Command
	switch kind {
	case KindCreateOrganization:
		c = decodeFields[CreateOrganization](d)
	case KindCreateAPIKey:
		c = decodeFields[CreateAPIKey](d)
	case KindRevokeAPIKey:
		c = decodeFields[RevokeAPIKey](d)
	case KindFundBalance:
		c = decodeFields[FundBalance](d)
	case KindCreatePayout:
		c = decodeFields[CreatePayout](d)
	case KindMarkPayoutProcessing:
		c = decodeFields[MarkPayoutProcessing](d)
	case KindSettlePayout:
		c = decodeFields[SettlePayout](d)
	case KindCreateCollection:
		c = decodeFields[CreateCollection](d)
	case KindSettleCollection:
		c = decodeFields[SettleCollection](d)
	default:
		if d.err != nil {
			return nil, d.err
		}
		decode, ok := commandDecoders[kind]
		if !ok {
			return nil, fmt.Errorf("ledger: unknown command kind %d", kind)
		}
		c = decode(d)
	}
	if d.err != nil {
		return nil, d.err
	}
	return c, nil
}

func (c *CreateOrganization) fields(f *fieldCodec) {
	f.varint(&c.At)
	f.str(&c.ID)
	f.str(&c.Name)
	f.str(&c.Country)
	f.str(&c.Timezone)
	f.str(&c.DefaultCurrency)
	c.Key.fields(f)
}

func (c *CreateOrganization) encode(e *encoder) { c.fields(e.codec()) }

func (c *CreateAPIKey) fields(f *fieldCodec) {
	f.varint(&c.At)
	f.str(&c.ID)
	f.str(&c.OrgID)
	f.str(&c.Name)
	f.str(&c.Hash)
	f.str(&c.Hint)
	f.scopes(&c.Scopes)
}

func (c *CreateAPIKey) encode(e *encoder) { c.fields(e.codec()) }

func decodeCreateAPIKey(d *decoder) (k CreateAPIKey) {
	k.fields(d.codec())
	return k
}

func (c *RevokeAPIKey) fields(f *fieldCodec) {
	f.varint(&c.At)
	f.str(&c.ID)
	f.str(&c.OrgID)
}

func (c *RevokeAPIKey) encode(e *encoder) { c.fields(e.codec()) }

func (c *FundBalance) fields(f *fieldCodec) {
	f.varint(&c.At)
	f.str(&c.OrgID)
	f.str(&c.Currency)
	f.minor(&c.Amount)
	f.str(&c.ExternalReference)
}

func (c *FundBalance) encode(e *encoder) { c.fields(e.codec()) }

// fields are the spec's fields but RoutingNumber, which payouts append
// (routing.go).
func (s *PayoutSpec) fields(f *fieldCodec) {
	f.str(&s.Currency)
	f.minor(&s.Amount)
	fieldU8(f, &s.AmountSide)
	f.str(&s.Method)
	f.str(&s.AccountNumber)
	f.str(&s.Address)
	f.str(&s.Tag)
	f.str(&s.RecipientID)
	f.str(&s.Narration)
	f.str(&s.Metadata)
	f.str(&s.FromKYC)
	f.str(&s.ToKYC)
}

func (s *PayoutSpec) encode(e *encoder) { s.fields(e.codec()) }

func decodePayoutSpec(d *decoder) (s PayoutSpec) {
	s.fields(d.codec())
	return s
}

func (c *CreatePayout) fields(f *fieldCodec) {
	f.varint(&c.At)
	f.str(&c.ID)
	f.str(&c.OrgID)
	f.str(&c.ExternalReference)
	c.Spec.fields(f)
	f.methodType(&c.MethodType)
	f.minor(&c.Fee)
	f.uvarint(&c.Reservation)
}

func (c *CreatePayout) encode(e *encoder) {
	c.fields(e.codec())
	if c.Spec.RoutingNumber != "" { // appended (routing.go)
		e.str(c.Spec.RoutingNumber)
	}
}

func (c *MarkPayoutProcessing) fields(f *fieldCodec) {
	f.varint(&c.At)
	f.str(&c.ID)
	f.str(&c.ProviderReference)
	f.str(&c.Message)
}

func (c *MarkPayoutProcessing) encode(e *encoder) { c.fields(e.codec()) }

func (c *SettlePayout) fields(f *fieldCodec) {
	f.varint(&c.At)
	f.str(&c.ID)
	f.bool(&c.Completed)
	f.str(&c.Message)
}

func (c *SettlePayout) encode(e *encoder) { c.fields(e.codec()) }

func (s *CollectionSpec) fields(f *fieldCodec) {
	f.str(&s.Currency)
	f.minor(&s.Amount)
	f.str(&s.Method)
	f.str(&s.PayerNumber)
	f.str(&s.Narration)
	f.str(&s.Metadata)
	f.str(&s.KYC)
}

func (s *CollectionSpec) encode(e *encoder) { s.fields(e.codec()) }

func decodeCollectionSpec(d *decoder) (s CollectionSpec) {
	s.fields(d.codec())
	return s
}

func (c *CreateCollection) fields(f *fieldCodec) {
	f.varint(&c.At)
	f.str(&c.ID)
	f.str(&c.OrgID)
	f.str(&c.ExternalReference)
	c.Spec.fields(f)
	f.methodType(&c.MethodType)
	f.minor(&c.Fee)
}

func (c *CreateCollection) encode(e *encoder) { c.fields(e.codec()) }

func (c *SettleCollection) fields(f *fieldCodec) {
	f.varint(&c.At)
	f.str(&c.ID)
	f.bool(&c.Completed)
	f.str(&c.Message)
}

func (c *SettleCollection) encode(e *encoder) { c.fields(e.codec()) }
