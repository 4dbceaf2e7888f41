package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"time"

	hraft "github.com/hashicorp/raft"
)

// The constants below are part of the on-disk format drawn in doc.go. They are
// frozen: a new layout gets a new version byte, never a changed meaning.
const (
	formatVersion1 byte = 1

	kindLog    byte = 'L'
	kindStable byte = 'S'

	prefixLog    byte = 'l'
	prefixStable byte = 's'

	// checksumOffset is where the CRC-32C sits; it covers every byte after it.
	checksumOffset = 1
	checksumEnd    = checksumOffset + 4

	logKeyLen = 1 + 8

	// logHeaderLen is the fixed part of a log record: version, checksum, kind,
	// index, term, type, appended-at seconds and nanoseconds, data length,
	// extensions length.
	logHeaderLen = 1 + 4 + 1 + 8 + 8 + 1 + 8 + 4 + 4 + 4

	// stableHeaderLen is the fixed part of a stable record: version,
	// checksum, kind, key length; the value length follows the key.
	stableHeaderLen = 1 + 4 + 1 + 4
	stableValueLen  = 4

	// fieldLenMax bounds Data, Extensions, keys and values: their lengths are
	// stored in 4 bytes.
	fieldLenMax = math.MaxUint32
)

// unixSecondsMax is the largest Unix second that time.Unix can represent
// without overflowing its internal count of seconds since year 1; beyond it a
// decoded time would not re-encode to the same bytes.
const unixSecondsMax = math.MaxInt64 - 62135596800

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errRecord is the cause under every ErrCorrupt raised by the codec; callers
// add the key or index.
var errRecord = errors.New("record")

// logKey returns the key of the log entry at index: 'l' + big-endian index, so
// that keys sort in index order.
func logKey(index uint64) []byte {
	var k [logKeyLen]byte
	putLogKey(k[:], index)
	return k[:]
}

func putLogKey(dst []byte, index uint64) {
	dst[0] = prefixLog
	binary.BigEndian.PutUint64(dst[1:], index)
}

// parseLogKey returns the index a log key names.
func parseLogKey(k []byte) (uint64, bool) {
	if len(k) != logKeyLen || k[0] != prefixLog {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[1:]), true
}

// stableKey returns the key of a stable value: 's' + the caller's key bytes.
func stableKey(key []byte) []byte {
	k := make([]byte, 1+len(key))
	k[0] = prefixStable
	copy(k[1:], key)
	return k
}

// logRecordLen returns the encoded size of l, or an error if a field is too
// long for the format.
func logRecordLen(l *hraft.Log) (int, error) {
	if uint64(len(l.Data)) > fieldLenMax || uint64(len(l.Extensions)) > fieldLenMax {
		return 0, fmt.Errorf("log %d: data or extensions longer than %d bytes", l.Index, uint64(fieldLenMax))
	}
	return logHeaderLen + len(l.Data) + len(l.Extensions), nil
}

// encodeLogRecord writes l into dst, which must be exactly logRecordLen(l)
// bytes long.
func encodeLogRecord(dst []byte, l *hraft.Log) {
	dst[0] = formatVersion1
	dst[5] = kindLog
	binary.BigEndian.PutUint64(dst[6:], l.Index)
	binary.BigEndian.PutUint64(dst[14:], l.Term)
	dst[22] = byte(l.Type)
	// Seconds and nanoseconds rather than UnixNano: UnixNano cannot hold the
	// zero time, which is what AppendedAt is when a leader did not set it.
	binary.BigEndian.PutUint64(dst[23:], uint64(l.AppendedAt.Unix()))
	binary.BigEndian.PutUint32(dst[31:], uint32(l.AppendedAt.Nanosecond()))
	binary.BigEndian.PutUint32(dst[35:], uint32(len(l.Data)))
	binary.BigEndian.PutUint32(dst[39:], uint32(len(l.Extensions)))
	n := copy(dst[logHeaderLen:], l.Data)
	copy(dst[logHeaderLen+n:], l.Extensions)
	binary.BigEndian.PutUint32(dst[checksumOffset:], crc32.Checksum(dst[checksumEnd:], castagnoli))
}

// verifyChecksum checks the version byte and the CRC-32C of a record.
func verifyChecksum(rec []byte, kind byte) error {
	if len(rec) < checksumEnd+1 {
		return fmt.Errorf("%w: %d bytes is too short", errRecord, len(rec))
	}
	if rec[0] != formatVersion1 {
		return fmt.Errorf("%w: unknown format version %d", errRecord, rec[0])
	}
	want := binary.BigEndian.Uint32(rec[checksumOffset:])
	if got := crc32.Checksum(rec[checksumEnd:], castagnoli); got != want {
		return fmt.Errorf("%w: checksum %08x, want %08x", errRecord, got, want)
	}
	if rec[5] != kind {
		return fmt.Errorf("%w: kind %q, want %q", errRecord, rec[5], kind)
	}
	return nil
}

// logView is a verified log record whose Data and Extensions alias the
// record's bytes.
type logView struct {
	index, term uint64
	typ         hraft.LogType
	appendedAt  time.Time
	data, ext   []byte
}

// parseLogRecord verifies rec and returns its fields without copying. Every
// byte of rec must be accounted for, so that a record that parses re-encodes to
// the same bytes.
func parseLogRecord(rec []byte) (logView, error) {
	if err := verifyChecksum(rec, kindLog); err != nil {
		return logView{}, err
	}
	if len(rec) < logHeaderLen {
		return logView{}, fmt.Errorf("%w: %d bytes is shorter than a log header", errRecord, len(rec))
	}
	sec := int64(binary.BigEndian.Uint64(rec[23:]))
	nsec := binary.BigEndian.Uint32(rec[31:])
	if nsec >= uint32(time.Second) || sec > unixSecondsMax {
		return logView{}, fmt.Errorf("%w: appended-at %d s %d ns is out of range", errRecord, sec, nsec)
	}
	dataLen := uint64(binary.BigEndian.Uint32(rec[35:]))
	extLen := uint64(binary.BigEndian.Uint32(rec[39:]))
	if uint64(len(rec)) != logHeaderLen+dataLen+extLen {
		return logView{}, fmt.Errorf("%w: %d bytes, fields say %d", errRecord, len(rec), logHeaderLen+dataLen+extLen)
	}
	return logView{
		index:      binary.BigEndian.Uint64(rec[6:]),
		term:       binary.BigEndian.Uint64(rec[14:]),
		typ:        hraft.LogType(rec[22]),
		appendedAt: time.Unix(sec, int64(nsec)).UTC(),
		data:       rec[logHeaderLen : logHeaderLen+dataLen],
		ext:        rec[logHeaderLen+dataLen:],
	}, nil
}

// decodeLogRecord verifies rec and decodes it into l. Data and Extensions are
// copied out of rec, because Pebble owns its buffers; an empty field decodes
// as nil, and AppendedAt decodes in UTC.
func decodeLogRecord(rec []byte, l *hraft.Log) error {
	v, err := parseLogRecord(rec)
	if err != nil {
		return err
	}
	l.Index, l.Term, l.Type, l.AppendedAt = v.index, v.term, v.typ, v.appendedAt
	l.Data, l.Extensions = nil, nil
	if n := len(v.data) + len(v.ext); n > 0 {
		// One allocation for both fields; Data's capacity is clipped so that
		// an append to it cannot overwrite Extensions.
		buf := make([]byte, n)
		copy(buf, rec[logHeaderLen:])
		if len(v.data) > 0 {
			l.Data = buf[:len(v.data):len(v.data)]
		}
		if len(v.ext) > 0 {
			l.Extensions = buf[len(v.data):]
		}
	}
	return nil
}

// stableRecordLen returns the encoded size of a stable record.
func stableRecordLen(key, value []byte) (int, error) {
	if uint64(len(key)) > fieldLenMax || uint64(len(value)) > fieldLenMax {
		return 0, fmt.Errorf("stable key or value longer than %d bytes", uint64(fieldLenMax))
	}
	return stableHeaderLen + len(key) + stableValueLen + len(value), nil
}

// encodeStableRecord writes a stable record into dst, which must be exactly
// stableRecordLen(key, value) bytes long. The key is stored too, so that a
// value found under the wrong key is detected.
func encodeStableRecord(dst, key, value []byte) {
	dst[0] = formatVersion1
	dst[5] = kindStable
	binary.BigEndian.PutUint32(dst[6:], uint32(len(key)))
	n := stableHeaderLen + copy(dst[stableHeaderLen:], key)
	binary.BigEndian.PutUint32(dst[n:], uint32(len(value)))
	copy(dst[n+stableValueLen:], value)
	binary.BigEndian.PutUint32(dst[checksumOffset:], crc32.Checksum(dst[checksumEnd:], castagnoli))
}

// decodeStableRecord verifies rec and returns its key and value, both
// aliasing rec.
func decodeStableRecord(rec []byte) (key, value []byte, err error) {
	if err := verifyChecksum(rec, kindStable); err != nil {
		return nil, nil, err
	}
	if len(rec) < stableHeaderLen {
		return nil, nil, fmt.Errorf("%w: %d bytes is shorter than a stable header", errRecord, len(rec))
	}
	keyLen := uint64(binary.BigEndian.Uint32(rec[6:]))
	rest := rec[stableHeaderLen:]
	if uint64(len(rest)) < keyLen+stableValueLen {
		return nil, nil, fmt.Errorf("%w: key length %d overruns the record", errRecord, keyLen)
	}
	key, rest = rest[:keyLen], rest[keyLen:]
	valueLen := uint64(binary.BigEndian.Uint32(rest))
	value = rest[stableValueLen:]
	if uint64(len(value)) != valueLen {
		return nil, nil, fmt.Errorf("%w: %d value bytes, length says %d", errRecord, len(value), valueLen)
	}
	return key, value, nil
}
