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
		c = decodeCreateOrganization(d)
	case KindCreateAPIKey:
		k := decodeCreateAPIKey(d)
		c = &k
	case KindRevokeAPIKey:
		c = &RevokeAPIKey{At: d.varint(), ID: d.str(), OrgID: d.str()}
	case KindFundBalance:
		c = &FundBalance{At: d.varint(), OrgID: d.str(), Currency: d.str(), Amount: d.minor(), ExternalReference: d.str()}
	case KindCreatePayout:
		c = decodeCreatePayout(d)
	case KindMarkPayoutProcessing:
		c = &MarkPayoutProcessing{At: d.varint(), ID: d.str(), ProviderReference: d.str(), Message: d.str()}
	case KindSettlePayout:
		c = &SettlePayout{At: d.varint(), ID: d.str(), Completed: d.bool(), Message: d.str()}
	case KindCreateCollection:
		c = decodeCreateCollection(d)
	case KindSettleCollection:
		c = &SettleCollection{At: d.varint(), ID: d.str(), Completed: d.bool(), Message: d.str()}
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

func (c *CreateOrganization) encode(e *encoder) {
	e.varint(c.At)
	e.str(c.ID)
	e.str(c.Name)
	e.str(c.Country)
	e.str(c.Timezone)
	e.str(c.DefaultCurrency)
	c.Key.encode(e)
}

func decodeCreateOrganization(d *decoder) *CreateOrganization {
	return &CreateOrganization{
		At: d.varint(), ID: d.str(), Name: d.str(), Country: d.str(), Timezone: d.str(),
		DefaultCurrency: d.str(), Key: decodeCreateAPIKey(d),
	}
}

func (c *CreateAPIKey) encode(e *encoder) {
	e.varint(c.At)
	e.str(c.ID)
	e.str(c.OrgID)
	e.str(c.Name)
	e.str(c.Hash)
	e.str(c.Hint)
	e.uvarint(uint64(c.Scopes))
}

func decodeCreateAPIKey(d *decoder) CreateAPIKey {
	return CreateAPIKey{
		At: d.varint(), ID: d.str(), OrgID: d.str(), Name: d.str(), Hash: d.str(),
		Hint: d.str(), Scopes: Scopes(d.u32()),
	}
}

func (c *RevokeAPIKey) encode(e *encoder) {
	e.varint(c.At)
	e.str(c.ID)
	e.str(c.OrgID)
}

func (c *FundBalance) encode(e *encoder) {
	e.varint(c.At)
	e.str(c.OrgID)
	e.str(c.Currency)
	e.minor(c.Amount)
	e.str(c.ExternalReference)
}

func (s *PayoutSpec) encode(e *encoder) {
	e.str(s.Currency)
	e.minor(s.Amount)
	e.u8(uint8(s.AmountSide))
	e.str(s.Method)
	e.str(s.AccountNumber)
	e.str(s.Address)
	e.str(s.Tag)
	e.str(s.RecipientID)
	e.str(s.Narration)
	e.str(s.Metadata)
	e.str(s.FromKYC)
	e.str(s.ToKYC)
}

func decodePayoutSpec(d *decoder) PayoutSpec {
	return PayoutSpec{
		Currency: d.str(), Amount: d.minor(), AmountSide: Side(d.u8()), Method: d.str(),
		AccountNumber: d.str(), Address: d.str(), Tag: d.str(), RecipientID: d.str(),
		Narration: d.str(), Metadata: d.str(), FromKYC: d.str(), ToKYC: d.str(),
	}
}

func (c *CreatePayout) encode(e *encoder) {
	e.varint(c.At)
	e.str(c.ID)
	e.str(c.OrgID)
	e.str(c.ExternalReference)
	c.Spec.encode(e)
	e.methodType(c.MethodType)
	e.minor(c.Fee)
	e.uvarint(c.Reservation)
	if c.Spec.RoutingNumber != "" { // appended (routing.go)
		e.str(c.Spec.RoutingNumber)
	}
}

func decodeCreatePayout(d *decoder) *CreatePayout {
	return &CreatePayout{
		At: d.varint(), ID: d.str(), OrgID: d.str(), ExternalReference: d.str(),
		Spec: decodePayoutSpec(d), MethodType: d.methodType(), Fee: d.minor(), Reservation: d.uvarint(),
	}
}

func (c *MarkPayoutProcessing) encode(e *encoder) {
	e.varint(c.At)
	e.str(c.ID)
	e.str(c.ProviderReference)
	e.str(c.Message)
}

func (c *SettlePayout) encode(e *encoder) {
	e.varint(c.At)
	e.str(c.ID)
	e.bool(c.Completed)
	e.str(c.Message)
}

func (s *CollectionSpec) encode(e *encoder) {
	e.str(s.Currency)
	e.minor(s.Amount)
	e.str(s.Method)
	e.str(s.PayerNumber)
	e.str(s.Narration)
	e.str(s.Metadata)
	e.str(s.KYC)
}

func decodeCollectionSpec(d *decoder) CollectionSpec {
	return CollectionSpec{
		Currency: d.str(), Amount: d.minor(), Method: d.str(), PayerNumber: d.str(),
		Narration: d.str(), Metadata: d.str(), KYC: d.str(),
	}
}

func (c *CreateCollection) encode(e *encoder) {
	e.varint(c.At)
	e.str(c.ID)
	e.str(c.OrgID)
	e.str(c.ExternalReference)
	c.Spec.encode(e)
	e.methodType(c.MethodType)
	e.minor(c.Fee)
}

func decodeCreateCollection(d *decoder) *CreateCollection {
	return &CreateCollection{
		At: d.varint(), ID: d.str(), OrgID: d.str(), ExternalReference: d.str(),
		Spec: decodeCollectionSpec(d), MethodType: d.methodType(), Fee: d.minor(),
	}
}

func (c *SettleCollection) encode(e *encoder) {
	e.varint(c.At)
	e.str(c.ID)
	e.bool(c.Completed)
	e.str(c.Message)
}
