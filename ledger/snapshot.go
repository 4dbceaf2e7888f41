package ledger

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
)

// Snapshot format, version 2. Frozen; a new layout is a new version.
// Version 1 is version 2 without the named sections, and is still read.
//
//	magic    "PAYLEDGR"           8 bytes
//	version  2                     1 byte
//	section  organizations         count, then each record
//	section  API keys
//	section  accounts
//	section  payouts
//	section  collections
//	section  fundings
//	section  journal entries
//	named    count, then each: its name, then a section (see extend.go)
//	crc      CRC-32C of all the bytes above, big-endian, 4 bytes
//
// A count is a uvarint; a record is a uvarint length and the record's bytes
// in the command codec. Records appear in creation order, so the same state
// always encodes to the same bytes.

const (
	snapshotMagic   = "PAYLEDGR"
	snapshotVersion = 2
	recordLenMax    = 4 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Snapshot is a consistent, read-only view of the state at one moment,
// taken in O(1) by Freeze. It may be written on any goroutine while Apply
// goes on; call State.Thaw once it is no longer read.
type Snapshot struct {
	orgs         func(string) (Organization, bool)
	keys         func(string) (APIKey, bool)
	accounts     func(string) (Account, bool)
	payouts      func(string) (Payout, bool)
	collections  func(string) (Collection, bool)
	fundings     func(string) (Funding, bool)
	orgOrder     []string
	keyOrder     []string
	accountOrder []string
	payoutOrder  appendList[string]
	collOrder    appendList[string]
	fundingOrder []string
	entries      appendList[Entry]
	names        []string
	named        []sectionView
}

func lookup[V any](m map[string]V) func(string) (V, bool) {
	return func(k string) (V, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// Freeze captures the current state for a snapshot. Until Thaw, Apply writes
// to overlays and the captured maps stay untouched.
func (s *State) Freeze() *Snapshot {
	if s.frozen {
		panic("ledger: state frozen twice")
	}
	s.frozen = true
	sn := s.view()
	sn.orgs = lookup(s.orgs.freeze())
	sn.keys = lookup(s.keys.freeze())
	sn.accounts = lookup(s.accounts.freeze())
	sn.payouts = lookup(s.payouts.freeze())
	sn.collections = lookup(s.collections.freeze())
	sn.fundings = lookup(s.fundings.freeze())
	for _, sec := range s.sections {
		sn.names = append(sn.names, sec.sectionName())
		sn.named = append(sn.named, sec.freezeSection())
	}
	return sn
}

// View is the live state as a Snapshot, for encoding it without freezing
// (to compare replicas, or audit). It is valid only while the caller keeps
// Apply out, as a read lock does.
func (s *State) View() *Snapshot {
	sn := s.view()
	sn.orgs = s.orgs.get
	sn.keys = s.keys.get
	sn.accounts = s.accounts.get
	sn.payouts = s.payouts.get
	sn.collections = s.collections.get
	sn.fundings = s.fundings.get
	for _, sec := range s.sections {
		sn.names = append(sn.names, sec.sectionName())
		sn.named = append(sn.named, sec.liveSection())
	}
	return sn
}

// view captures the append-only orders; their prefixes never change.
func (s *State) view() *Snapshot {
	return &Snapshot{
		orgOrder:     s.orgOrder[:len(s.orgOrder):len(s.orgOrder)],
		keyOrder:     s.keyOrder[:len(s.keyOrder):len(s.keyOrder)],
		accountOrder: s.accountOrder[:len(s.accountOrder):len(s.accountOrder)],
		payoutOrder:  s.payoutOrder.view(),
		collOrder:    s.collectionOrder.view(),
		fundingOrder: s.fundingOrder[:len(s.fundingOrder):len(s.fundingOrder)],
		entries:      s.entries.view(),
	}
}

// Thaw ends a snapshot: the overlays written since Freeze are folded back.
// The caller guarantees that nothing reads the Snapshot any more.
func (s *State) Thaw() {
	if !s.frozen {
		return
	}
	s.orgs.thaw()
	s.keys.thaw()
	s.accounts.thaw()
	s.payouts.thaw()
	s.collections.thaw()
	s.fundings.thaw()
	for _, sec := range s.sections {
		sec.thawSection()
	}
	s.frozen = false
}

// WriteTo encodes the snapshot. It returns the number of bytes written.
func (sn *Snapshot) WriteTo(w io.Writer) (int64, error) {
	sw := &snapshotWriter{w: bufio.NewWriterSize(w, 256<<10), crc: crc32.New(castagnoli)}
	sw.raw([]byte(snapshotMagic))
	sw.raw([]byte{snapshotVersion})
	tableSection(sw, sn.orgOrder, sn.orgs, encodeOrganization)
	tableSection(sw, sn.keyOrder, sn.keys, encodeAPIKey)
	tableSection(sw, sn.accountOrder, sn.accounts, encodeAccount)
	listSection(sw, &sn.payoutOrder, sn.payouts, encodePayout)
	listSection(sw, &sn.collOrder, sn.collections, encodeCollection)
	tableSection(sw, sn.fundingOrder, sn.fundings, encodeFunding)
	sw.count(sn.entries.len())
	sn.entries.all(func(_ int, en Entry) {
		sw.record(func(e *encoder) { encodeEntry(e, &en) })
	})
	sw.count(len(sn.named))
	for i, v := range sn.named {
		sw.record(func(e *encoder) { e.str(sn.names[i]) })
		sw.count(v.len())
		v.each(sw.record)
	}
	var crc [4]byte
	binary.BigEndian.PutUint32(crc[:], sw.crc.Sum32())
	if sw.err == nil {
		_, sw.err = sw.w.Write(crc[:])
		sw.n += 4
	}
	if sw.err == nil {
		sw.err = sw.w.Flush()
	}
	return sw.n, sw.err
}

func tableSection[V any](sw *snapshotWriter, order []string, get func(string) (V, bool), enc func(*encoder, *V)) {
	sw.count(len(order))
	for _, id := range order {
		v, ok := get(id)
		if !ok {
			panic("ledger: snapshot order names a missing record " + id)
		}
		sw.record(func(e *encoder) { enc(e, &v) })
	}
}

func listSection[V any](sw *snapshotWriter, order *appendList[string], get func(string) (V, bool), enc func(*encoder, *V)) {
	sw.count(order.len())
	order.all(func(_ int, id string) {
		v, ok := get(id)
		if !ok {
			panic("ledger: snapshot order names a missing record " + id)
		}
		sw.record(func(e *encoder) { enc(e, &v) })
	})
}

type snapshotWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
	enc encoder
	n   int64
	err error
}

func (sw *snapshotWriter) raw(b []byte) {
	if sw.err != nil {
		return
	}
	sw.crc.Write(b)
	_, sw.err = sw.w.Write(b)
	sw.n += int64(len(b))
}

func (sw *snapshotWriter) count(n int) {
	var buf [binary.MaxVarintLen64]byte
	sw.raw(buf[:binary.PutUvarint(buf[:], uint64(n))])
}

func (sw *snapshotWriter) record(enc func(*encoder)) {
	sw.enc.buf = sw.enc.buf[:0]
	enc(&sw.enc)
	sw.count(len(sw.enc.buf))
	sw.raw(sw.enc.buf)
}

// Restore decodes a snapshot written by Snapshot.WriteTo into a new State and
// rebuilds its indexes.
func Restore(r io.Reader) (*State, error) {
	sr := &snapshotReader{r: bufio.NewReaderSize(r, 256<<10), crc: crc32.New(castagnoli)}
	var head [len(snapshotMagic) + 1]byte
	sr.full(head[:])
	if sr.err != nil {
		return nil, fmt.Errorf("ledger: read snapshot header: %w", sr.err)
	}
	if string(head[:len(snapshotMagic)]) != snapshotMagic {
		return nil, errors.New("ledger: not a ledger snapshot")
	}
	version := head[len(snapshotMagic)]
	if version != 1 && version != snapshotVersion {
		return nil, fmt.Errorf("ledger: unknown snapshot version %d", version)
	}
	s := NewState()
	readSection(sr, func(d *decoder) {
		o := decodeOrganization(d)
		s.orgs.put(o.ID, o)
		s.orgOrder = append(s.orgOrder, o.ID)
	})
	readSection(sr, func(d *decoder) {
		k := decodeAPIKey(d)
		s.keys.put(k.ID, k)
		s.keyOrder = append(s.keyOrder, k.ID)
		s.keyByHash[digest(k.Hash)] = k.ID
		s.keysByOrg[k.OrgID] = append(s.keysByOrg[k.OrgID], k.ID)
	})
	readSection(sr, func(d *decoder) {
		a := decodeAccount(d)
		s.insertAccount(a)
	})
	readSection(sr, func(d *decoder) {
		p := decodePayout(d)
		s.payouts.put(p.ID, p)
		s.payoutOrder.append(p.ID)
		s.indexPayout(p)
	})
	readSection(sr, func(d *decoder) {
		c := decodeCollection(d)
		s.collections.put(c.ID, c)
		s.collectionOrder.append(c.ID)
		s.indexCollection(c)
	})
	readSection(sr, func(d *decoder) {
		f := decodeFunding(d)
		key := fundingKey(f.OrgID, f.ExternalReference)
		s.fundings.put(key, f)
		s.fundingOrder = append(s.fundingOrder, key)
	})
	readSection(sr, func(d *decoder) {
		e := decodeEntry(d)
		s.entries.append(e)
		if a, ok := s.accounts.get(e.Account); ok && a.Purpose == PurposeMerchant {
			indexOf(s.entriesByAccount, e.Account).append(uint64(s.entries.len()))
		}
	})
	if version >= 2 {
		restoreNamed(sr, s)
	}
	if sr.err != nil {
		return nil, fmt.Errorf("ledger: read snapshot: %w", sr.err)
	}
	want := sr.crc.Sum32()
	var crc [4]byte
	if _, err := io.ReadFull(sr.r, crc[:]); err != nil {
		return nil, fmt.Errorf("ledger: read snapshot checksum: %w", err)
	}
	if got := binary.BigEndian.Uint32(crc[:]); got != want {
		return nil, fmt.Errorf("ledger: snapshot checksum mismatch: %08x, want %08x", got, want)
	}
	if _, err := sr.r.ReadByte(); err != io.EOF {
		return nil, errors.New("ledger: trailing bytes after snapshot")
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("ledger: restored snapshot is inconsistent: %w", err)
	}
	return s, nil
}

// restoreNamed reads the named sections. Each name must be one this build
// knows: a snapshot from a newer build is refused rather than half-read.
func restoreNamed(sr *snapshotReader, s *State) {
	n := sr.uvarint()
	seen := make(map[string]bool)
	for i := uint64(0); i < n && sr.err == nil; i++ {
		var name string
		readRecord(sr, func(d *decoder) { name = d.str() })
		if sr.err != nil {
			return
		}
		var sec section
		for _, c := range s.sections {
			if c.sectionName() == name {
				sec = c
			}
		}
		if sec == nil || seen[name] {
			sr.err = fmt.Errorf("unknown or repeated section %q", name)
			return
		}
		seen[name] = true
		readSection(sr, func(d *decoder) { sec.restoreRecord(s, d) })
	}
}

type snapshotReader struct {
	r   *bufio.Reader
	crc hash.Hash32
	buf []byte
	err error
}

func (sr *snapshotReader) full(b []byte) {
	if sr.err != nil {
		return
	}
	if _, err := io.ReadFull(sr.r, b); err != nil {
		sr.err = err
		return
	}
	sr.crc.Write(b)
}

func (sr *snapshotReader) uvarint() uint64 {
	if sr.err != nil {
		return 0
	}
	var buf [binary.MaxVarintLen64]byte
	for i := range buf {
		b, err := sr.r.ReadByte()
		if err != nil {
			sr.err = err
			return 0
		}
		buf[i] = b
		if b < 0x80 {
			sr.crc.Write(buf[:i+1])
			v, n := binary.Uvarint(buf[:i+1])
			if n <= 0 {
				sr.err = errTruncated
			}
			return v
		}
	}
	sr.err = errTruncated
	return 0
}

func readSection(sr *snapshotReader, fn func(*decoder)) {
	n := sr.uvarint()
	for i := uint64(0); i < n && sr.err == nil; i++ {
		readRecord(sr, fn)
	}
}

// readRecord reads one length-prefixed record and decodes it with fn, which
// must consume it whole.
func readRecord(sr *snapshotReader, fn func(*decoder)) {
	size := sr.uvarint()
	if size > recordLenMax {
		sr.err = fmt.Errorf("record of %d bytes exceeds %d", size, recordLenMax)
		return
	}
	if cap(sr.buf) < int(size) {
		sr.buf = make([]byte, size)
	}
	sr.buf = sr.buf[:size]
	sr.full(sr.buf)
	if sr.err != nil {
		return
	}
	d := decoder{buf: sr.buf}
	fn(&d)
	if d.err == nil && len(d.buf) != 0 {
		d.err = errors.New("trailing bytes in record")
	}
	if d.err != nil {
		sr.err = d.err
	}
}

// Record codecs. Frozen with the snapshot version.

func encodeOrganization(e *encoder, o *Organization) {
	e.str(o.ID)
	e.str(o.Name)
	e.str(o.Country)
	e.str(o.Timezone)
	e.str(o.DefaultCurrency)
	e.str(o.Status)
	e.varint(o.CreatedAt)
	e.varint(o.UpdatedAt)
}

func decodeOrganization(d *decoder) Organization {
	return Organization{
		ID: d.str(), Name: d.str(), Country: d.str(), Timezone: d.str(), DefaultCurrency: d.str(),
		Status: d.str(), CreatedAt: d.varint(), UpdatedAt: d.varint(),
	}
}

func encodeAPIKey(e *encoder, k *APIKey) {
	e.str(k.ID)
	e.str(k.OrgID)
	e.str(k.Name)
	e.str(k.Hash)
	e.str(k.Hint)
	e.uvarint(uint64(k.Scopes))
	e.bool(k.Revoked)
	e.varint(k.CreatedAt)
	e.varint(k.RevokedAt)
}

func decodeAPIKey(d *decoder) APIKey {
	return APIKey{
		ID: d.str(), OrgID: d.str(), Name: d.str(), Hash: d.str(), Hint: d.str(),
		Scopes: Scopes(d.u32()), Revoked: d.bool(), CreatedAt: d.varint(), RevokedAt: d.varint(),
	}
}

func encodeAccount(e *encoder, a *Account) {
	e.str(a.Number)
	e.str(a.OrgID)
	e.str(a.Currency)
	e.u8(uint8(a.Purpose))
	e.minor(a.Total)
	e.minor(a.Held)
	e.uvarint(a.Reservation)
	e.varint(a.CreatedAt)
}

func decodeAccount(d *decoder) Account {
	return Account{
		Number: d.str(), OrgID: d.str(), Currency: d.str(), Purpose: AccountPurpose(d.u8()),
		Total: d.minor(), Held: d.minor(), Reservation: d.uvarint(), CreatedAt: d.varint(),
	}
}

func encodePayout(e *encoder, p *Payout) {
	e.str(p.ID)
	e.str(p.OrgID)
	e.str(p.AccountNumber)
	p.Spec.encode(e)
	e.str(p.MethodType)
	e.minor(p.Fee)
	e.str(p.ExternalReference)
	e.u8(uint8(p.Status))
	e.str(p.StatusMessage)
	e.str(p.ProviderReference)
	e.varint(p.CreatedAt)
	e.varint(p.UpdatedAt)
	e.varint(p.ProcessingAt)
	e.varint(p.CompletedAt)
	e.varint(p.FailedAt)
}

func decodePayout(d *decoder) Payout {
	return Payout{
		ID: d.str(), OrgID: d.str(), AccountNumber: d.str(), Spec: decodePayoutSpec(d),
		MethodType: d.str(), Fee: d.minor(), ExternalReference: d.str(), Status: PayoutStatus(d.u8()),
		StatusMessage: d.str(), ProviderReference: d.str(), CreatedAt: d.varint(), UpdatedAt: d.varint(),
		ProcessingAt: d.varint(), CompletedAt: d.varint(), FailedAt: d.varint(),
	}
}

func encodeCollection(e *encoder, c *Collection) {
	e.str(c.ID)
	e.str(c.OrgID)
	e.str(c.Type)
	c.Spec.encode(e)
	e.str(c.MethodType)
	e.minor(c.Fee)
	e.str(c.ExternalReference)
	e.str(c.AccountNumber)
	e.u8(uint8(c.Status))
	e.str(c.StatusMessage)
	e.varint(c.CreatedAt)
	e.varint(c.UpdatedAt)
	e.varint(c.CompletedAt)
	e.varint(c.FailedAt)
}

func decodeCollection(d *decoder) Collection {
	return Collection{
		ID: d.str(), OrgID: d.str(), Type: d.str(), Spec: decodeCollectionSpec(d), MethodType: d.str(),
		Fee: d.minor(), ExternalReference: d.str(), AccountNumber: d.str(),
		Status: CollectionStatus(d.u8()), StatusMessage: d.str(), CreatedAt: d.varint(),
		UpdatedAt: d.varint(), CompletedAt: d.varint(), FailedAt: d.varint(),
	}
}

func encodeFunding(e *encoder, f *Funding) {
	e.uvarint(f.EntrySeq)
	e.str(f.OrgID)
	e.str(f.AccountNumber)
	e.str(f.Currency)
	e.minor(f.Amount)
	e.minor(f.BalanceAfter)
	e.str(f.ExternalReference)
	e.varint(f.At)
}

func decodeFunding(d *decoder) Funding {
	return Funding{
		EntrySeq: d.uvarint(), OrgID: d.str(), AccountNumber: d.str(), Currency: d.str(),
		Amount: d.minor(), BalanceAfter: d.minor(), ExternalReference: d.str(), At: d.varint(),
	}
}

func encodeEntry(e *encoder, en *Entry) {
	e.str(en.Account)
	e.u8(uint8(en.Type))
	e.minor(en.Amount)
	e.minor(en.BalanceAfter)
	e.str(en.RefID)
	e.str(en.ExternalRef)
	e.varint(en.At)
}

func decodeEntry(d *decoder) Entry {
	return Entry{
		Account: d.str(), Type: EntryType(d.u8()), Amount: d.minor(), BalanceAfter: d.minor(),
		RefID: d.str(), ExternalRef: d.str(), At: d.varint(),
	}
}
