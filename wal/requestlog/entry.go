package requestlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// entry is a batch's entry in the index: what the batch holds, for
// pruning, and each organization's records in it, newest first, linked to
// the organization's previous batch, for Scan.
type entry struct {
	newestAt     int64  // the newest record's time, unix ns
	maxSeq       uint64 // the highest position among the records
	block        uint64 // the first position of the batch's block; 0: none
	bytes        int64  // what the records and this entry count toward MaxBytes
	unattributed int64  // of bytes, the records of no organization
	orgs         []section
}

// section is one organization's records in a batch.
type section struct {
	org  string
	prev uint64   // the organization's previous batch; 0: none
	seqs []uint64 // positions, newest first
}

// encode returns an entry's value:
//
//	version 1 | CRC-32C of the rest (4) | newestAt (8) | maxSeq (8) | block (8) |
//	bytes, unattributed, len(orgs) as uvarints | per organization: len (1),
//	organization, prev, len(seqs), the first seq, then each next one's
//	distance below the one before, as uvarints
func (e *entry) encode() []byte {
	v := make([]byte, 5, 64+16*len(e.orgs))
	v[0] = entryVersion
	v = binary.BigEndian.AppendUint64(v, uint64(e.newestAt))
	v = binary.BigEndian.AppendUint64(v, e.maxSeq)
	v = binary.BigEndian.AppendUint64(v, e.block)
	v = binary.AppendUvarint(v, uint64(max(e.bytes, 0)))
	v = binary.AppendUvarint(v, uint64(max(e.unattributed, 0)))
	v = binary.AppendUvarint(v, uint64(len(e.orgs)))
	for _, sec := range e.orgs {
		v = append(v, byte(len(sec.org)))
		v = append(v, sec.org...)
		v = binary.AppendUvarint(v, sec.prev)
		v = binary.AppendUvarint(v, uint64(len(sec.seqs)))
		for i, seq := range sec.seqs {
			if i == 0 {
				v = binary.AppendUvarint(v, seq)
			} else {
				v = binary.AppendUvarint(v, sec.seqs[i-1]-seq)
			}
		}
	}
	binary.BigEndian.PutUint32(v[1:], crc32.Checksum(v[5:], crcTable))
	return v
}

func decodeEntryKV(k, v []byte) (uint64, entry, error) {
	if len(k) != 9 || k[0] != 'x' {
		return 0, entry{}, ErrCorrupt
	}
	no := binary.BigEndian.Uint64(k[1:])
	e, err := decodeEntry(v)
	if err != nil {
		return 0, entry{}, fmtCorrupt(err, no)
	}
	return no, e, nil
}

func decodeEntry(v []byte) (entry, error) {
	var e entry
	if len(v) < 5+24 || v[0] != entryVersion || binary.BigEndian.Uint32(v[1:]) != crc32.Checksum(v[5:], crcTable) {
		return e, ErrCorrupt
	}
	e.newestAt = int64(binary.BigEndian.Uint64(v[5:]))
	e.maxSeq = binary.BigEndian.Uint64(v[13:])
	e.block = binary.BigEndian.Uint64(v[21:])
	d := decoder{b: v[29:]}
	e.bytes, e.unattributed = int64(d.uvarint()), int64(d.uvarint())
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		return e, ErrCorrupt
	}
	e.orgs = make([]section, 0, n)
	for range n {
		var sec section
		sec.org = string(d.bytes(int(d.byte())))
		sec.prev = d.uvarint()
		m := d.uvarint()
		if m > uint64(len(d.b)) {
			return e, ErrCorrupt
		}
		sec.seqs = make([]uint64, m)
		for i := range sec.seqs {
			if i == 0 {
				sec.seqs[i] = d.uvarint()
			} else {
				sec.seqs[i] = sec.seqs[i-1] - d.uvarint()
			}
		}
		e.orgs = append(e.orgs, sec)
	}
	if d.bad || len(d.b) != 0 {
		return e, ErrCorrupt
	}
	return e, nil
}

// decoder reads an entry; a read past the end sets bad and yields zeros.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.bad = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bytes(n int) []byte {
	if n > len(d.b) {
		d.bad, d.b = true, nil
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func fmtCorrupt(err error, batch uint64) error {
	return fmt.Errorf("%w: batch %d", err, batch)
}
