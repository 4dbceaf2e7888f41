package ledger

// Helpers that features' commands and readers share: the outcome a
// command left in Result.Value, the record a command names by id or
// changes, the checks of a cross-currency create, and the declarations
// features repeat (commands registered together or under a reference,
// decided records, deployment keys).

// ValueOf returns the *V a feature's command left in Result.Value, or nil
// when it left none or another type: what each feature's XOf reader
// answers.
func ValueOf[V any](res Result) *V {
	v, _ := res.Value.(*V)
	return v
}

// ValueIn returns the *V a feature's command left in Result.Value, or the
// one in the *W it left there (in picks it out), or nil: what an XOf
// reader answers where a command leaves an outcome that holds the record
// (and, for some commands, the record itself).
func ValueIn[V, W any](res Result, in func(*W) *V) *V {
	switch v := res.Value.(type) {
	case *V:
		return v
	case *W:
		return in(v)
	}
	return nil
}

// Found returns the record with id if it belongs to org (Owned), or the
// not_found refusal "<what> not found": another organization's record is
// as unknown as a made-up one.
func (st Store[V]) Found(org, id, what string) (V, *Error) {
	v, ok := st.t.owned(org, id)
	if !ok {
		return v, Errorf(CodeNotFound, "%s not found", what)
	}
	return v, nil
}

// LookupCrossPair is LookupCurrencyPair for a create that turns fromAmount
// of one currency into toAmount of another (a quote, a cross-currency
// payout): the currencies must differ, else the refusal is same, and each
// amount must be positive and at most AmountMax.
func LookupCrossPair(fromCurrency, toCurrency string, fromAmount, toAmount Minor, same *Error) (Currency, Currency, *Error) {
	from, to, err := lookupCurrencyPair(fromCurrency, toCurrency)
	if err != nil {
		return from, to, err
	}
	switch {
	case from.Code == to.Code:
		return from, to, same
	case fromAmount <= 0 || fromAmount > AmountMax:
		return from, to, FieldInvalid("from.amount", "is out of range")
	case toAmount <= 0 || toAmount > AmountMax:
		return from, to, FieldInvalid("to.amount", "is out of range")
	}
	return from, to, nil
}

// Change applies a command that changes the record with id of org in st,
// found as Found finds it: change edits the record and reports whether it
// changed, or the refusal; a changed record is put. The outcome is the
// record.
func Change[V any](st Store[V], org, id, what string, change func(*V) (bool, *Error)) Result {
	v, err := st.Found(org, id, what)
	if err != nil {
		return Result{Err: err}
	}
	changed, err := change(&v)
	if err != nil {
		return Result{Err: err}
	}
	if changed {
		st.Put(v)
	}
	return Result{Value: &v}
}

// DecidedRecords is the DecidedResource of a feature's records that store
// keeps and finds by their reference (IndexReference): of is the record a
// result carries (nil for none), attempt where a record keeps the attempt
// that made it, and with sets a stamped record as the result's.
func DecidedRecords[V any](resource string, store func(*State) Store[V], of func(Result) *V, attempt func(*V) *string, with func(*Result, *V)) DecidedResource {
	return DecidedResource{
		Resource: resource,
		Referenced: func(s *State, org, ref string) bool {
			_, ok := store(s).Find(IndexReference, RefKey(org, ref))
			return ok
		},
		Attempt: func(res *Result) string {
			if v := of(*res); v != nil {
				return *attempt(v)
			}
			return ""
		},
		Stamp: func(s *State, res *Result, a string) {
			p := of(*res)
			if p == nil {
				return
			}
			v := *p
			*attempt(&v) = a
			store(s).Put(v)
			with(res, &v)
		},
	}
}

// RegisterRefCommand makes kinds k and kRef decodable as the two kinds of
// one command whose codec is fields: kRef's bytes have the command's
// reference (at ref) appended (Codec.AppendedRef), k's have none. The
// command's Kind is kRef when it has a reference, and its Encode writes
// fields, then AppendedRef.
func RegisterRefCommand[T any, P interface {
	*T
	Command
}](k, kRef Kind, fields func(P, *Codec), ref func(P) *string) {
	decoder := func(appended bool) func(*Decoder) Command {
		return func(d *Decoder) Command {
			c := P(new(T))
			f := d.Codec()
			fields(c, f)
			if appended {
				f.AppendedRef(ref(c))
			}
			return c
		}
	}
	RegisterCommand(k, decoder(false))
	RegisterCommand(kRef, decoder(true))
}

// DeploymentKey is a secret the whole deployment shares (the file signing
// key, the public ids' key): the one record of a kind of its own, in no
// organization's list, committed once.
type DeploymentKey struct {
	Key string
	At  int64 // when it was committed
}

// NewDeploymentKeyKind is the kind of a deployment key, whose one record
// is id and stays open.
func NewDeploymentKeyKind(tag byte, name, id string) RecordKind[DeploymentKey] {
	return NewUnlistedRecordKind(RecordSpec[DeploymentKey]{
		Tag: tag, Name: name,
		ID: func(*DeploymentKey) (string, string) { return id, "" },
		Fields: func(k *DeploymentKey, f *Codec) {
			f.Str(&k.Key)
			f.Varint(&k.At)
		},
	})
}

// SetDeploymentKey applies a command that commits key at at as the record
// id of st. The key must be n bytes (what names it in the refusal). The
// first key committed wins; a later one changes nothing and is answered as
// a replay.
func SetDeploymentKey(st Store[DeploymentKey], id, key string, at int64, n int, what string) Result {
	if len(key) != n {
		return Result{Err: Errorf(CodeValidation, "%s is %d bytes", what, n)}
	}
	if _, ok := st.Get(id); ok {
		return Result{Replayed: true}
	}
	st.Insert(DeploymentKey{Key: key, At: at})
	return Result{}
}

// ReadDeploymentKey returns the key of kind k's record id, once committed.
func ReadDeploymentKey(r *Reader, k RecordKind[DeploymentKey], id string) ([]byte, bool) {
	d, ok := ReadRecord(r, k, id)
	if !ok {
		return nil, false
	}
	return []byte(d.Key), true
}

// FieldsApplier is a feature's command whose Fields method is its whole
// codec (FieldsCommand), as RegisterFieldsCommands takes it.
type FieldsApplier interface {
	Applier
	Fields(f *Codec)
}

// Fresh returns a new zero command of type T: the function of T that
// RegisterFieldsCommands takes.
func Fresh[T any, P FieldsCommand[T]]() FieldsApplier { return P(new(T)) }

// RegisterFieldsCommands is RegisterFieldsCommand for several of a
// feature's commands, each made by one of news (Fresh[T]) and registered
// under the kind its zero value names: a command's kind is written once,
// in its Kind method. It is called from an init function.
func RegisterFieldsCommands(news ...func() FieldsApplier) {
	for _, fresh := range news {
		RegisterCommand(fresh().Kind(), func(d *Decoder) Command {
			c := fresh()
			c.Fields(d.Codec())
			return c
		})
	}
}
