package ledger

// The kernel's side of the codec (package kv has the bytes): the fields
// methods of commands and records, and the fields of the ledger's own
// types. The codec is frozen: a change of layout is a new command kind or
// a new snapshot version, never an edit, because old log entries must
// replay exactly.

// FieldMinor reads or writes amounts, each a varint, in order.
func FieldMinor(f *Codec, ps ...*Minor) {
	for _, p := range ps {
		f.Varint((*int64)(p))
	}
}

// fieldsCommand is a command (a pointer P to a T) whose fields method is
// its codec.
type fieldsCommand[T any] interface {
	*T
	Command
	fields(f *Codec)
}

// decodeFields reads a command of type T by its fields method.
func decodeFields[T any, P fieldsCommand[T]](d *Decoder) P {
	c := P(new(T))
	c.fields(d.Codec())
	return c
}

// registerFields makes kind k decodable by its command's fields method.
func registerFields[T any, P fieldsCommand[T]](k Kind) {
	RegisterCommand(k, decodeCommandFields[T, P])
}

// registerBuiltin is registerFields for a built-in kind (command.go).
func registerBuiltin[T any, P fieldsCommand[T]](k Kind) {
	registerCommand(k, decodeCommandFields[T, P])
}

// decodeCommandFields is decodeFields as a command decoder.
func decodeCommandFields[T any, P fieldsCommand[T]](d *Decoder) Command {
	return decodeFields[T, P](d)
}

// fielded is a record (a pointer P to a V) whose fields method is its
// codec.
type fielded[V any] interface {
	*V
	fields(f *Codec)
}

// encodeByFields writes a record by its fields method.
func encodeByFields[V any, P fielded[V]](e *Encoder, v *V) {
	P(v).fields(e.Codec())
}

// decodeByFields reads a record by its fields method. The record escapes
// (a method called through a type parameter): the records read on every
// request or payout (payouts, collections, accounts) call their fields
// method directly instead.
func decodeByFields[V any, P fielded[V]](d *Decoder) (v V) {
	P(&v).fields(d.Codec())
	return v
}

// fieldRecord reads or writes a record that the encoding says is there,
// by its fields method: reading, it makes the record.
func fieldRecord[V any, P fielded[V]](f *Codec, p **V) {
	if f.Decoding() {
		*p = new(V)
	}
	P(*p).fields(f)
}

// fieldOptionalRecord reads or writes a record that may be absent: a flag,
// then the record where it is there.
func fieldOptionalRecord[V any, P fielded[V]](f *Codec, p **V) {
	there := *p != nil
	if f.Bool(&there); there {
		fieldRecord[V, P](f, p)
	}
}

// registerFieldsSubject makes a record type an event subject, coded by its
// fields method.
func registerFieldsSubject[V Subject, P fielded[V]](k SubjectKind) {
	registerSubject(k,
		func(e *Encoder, s Subject) { v := s.(V); P(&v).fields(e.Codec()) },
		func(d *Decoder) Subject { return decodeByFields[V, P](d) })
}
