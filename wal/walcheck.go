package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
	pebblewal "github.com/cockroachdb/pebble/v2/wal"
)

// This file checks Pebble's own logs before Pebble replays them. Pebble's
// replay stops at the first chunk that fails its checksum and treats the rest
// of the file as a torn tail, so a damaged record in the middle of a WAL makes
// Open succeed with every later write silently gone. Raft cannot tolerate
// that: a lost vote or a lost acknowledged entry breaks its safety. Pebble
// reads its MANIFEST, the list of its sstables, the same way, so MANIFEST
// files get the same check.
//
// Pebble's record format (record/record.go in pebble v2.1.7), as far as we
// rely on it: a file is a sequence of 32 KiB blocks; a block holds tightly
// packed chunks that never cross a block boundary; a block's tail too short
// for a header is zero-filled. Three chunk formats exist:
//
//	legacy:     | CRC (4B) | Size (2B) | Type (1B) | Payload |
//	recyclable: | CRC (4B) | Size (2B) | Type (1B) | Log number (4B) | Payload |
//	WAL sync:   | CRC (4B) | Size (2B) | Type (1B) | Log number (4B) | Synced offset (8B) | Payload |
//
// Integers are little-endian. CRC is Pebble's masked CRC-32C of everything
// from Type to the end of the payload. Types 1-4 are legacy full, first,
// middle and last chunks, 5-8 the same in recyclable format, 9-12 in WAL-sync
// format. Pebble writes WALs in the recyclable or WAL-sync format, with the
// low 32 bits of the file's number as log number, and MANIFESTs in the legacy
// format. A WAL closed cleanly ends with an EOF trailer: a recyclable full
// chunk with CRC 0, Size 0 and log number + 1.
//
// The check: read the chunks in order until the first one that is not valid
// (bad checksum, wrong type, wrong log number, cut short, zeroes, out of
// sequence, or the EOF trailer). Everything before it is what Pebble will
// replay. Then look for evidence that the writer went on past that point,
// which a torn tail cannot have:
//
//   - a valid chunk of this file (right type, right log number for a WAL,
//     checksum) anywhere later in the file;
//   - for a WAL, an EOF trailer right where the damaged chunk's own header
//     says it ends, or as the file's last 11 bytes: the log was closed
//     cleanly after the damaged chunk was written.
//
// Evidence means the damage happened after the write: refuse with ErrCorrupt.
// No evidence means the file simply ends there, a torn tail, which is benign.
// A trailer is not searched for anywhere else: its 11 bytes (six zeroes, 5,
// then a small little-endian number) occur naturally in our records, where a
// big-endian index is followed by a term's leading zeroes.
//
// Recycling: Pebble reuses old WAL files without truncating them, so a
// recycled file holds stale chunks after the live ones. Stale chunks and
// trailers carry older log numbers, never this file's number or the one after
// it, so they are never taken for evidence; recycling can stay on.
// MANIFEST files are never recycled.
//
// Limits. Damage inside the very last record of a file that was not closed
// cleanly looks exactly like a torn tail and is accepted: nothing after it can
// tell. A power loss that persists unsynced pages out of order (a later page
// of the last, unacknowledged write but not an earlier one) looks like damage
// followed by a valid chunk and is refused, though nothing acknowledged was
// lost; the check fails safe there, and the error names the file and offsets
// for an operator.

const (
	chunkBlockLen = 32 << 10

	chunkLegacyHeader     = 7
	chunkRecyclableHeader = 11
	chunkSyncHeader       = 19

	chunkLegacyMin     = 1
	chunkRecyclableMin = 5
	chunkSyncMin       = 9
	chunkMax           = 12
)

// chunkPosition is where a chunk sits in its record.
type chunkPosition int

const (
	chunkFull chunkPosition = iota
	chunkFirst
	chunkMiddle
	chunkLast
)

// checkPebbleLogs runs checkPebbleLog on every WAL and MANIFEST file in dir. A
// directory that does not exist yet holds none.
func checkPebbleLogs(fs vfs.FS, dir string) error {
	names, err := fs.List(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	slices.Sort(names)
	for _, name := range names {
		s := chunkScanner{manifest: strings.HasPrefix(name, "MANIFEST-")}
		if num, _, ok := pebblewal.ParseLogFilename(name); ok {
			s.logNum = uint32(num)
		} else if !s.manifest {
			continue
		}
		if err := checkPebbleLog(fs, fs.PathJoin(dir, name), &s); err != nil {
			return err
		}
	}
	return nil
}

// checkPebbleLog returns an error wrapping ErrCorrupt if the file at path has
// an invalid chunk followed by evidence that it was written past it.
func checkPebbleLog(fs vfs.FS, path string, s *chunkScanner) error {
	f, err := fs.Open(path)
	if err != nil {
		return fmt.Errorf("open pebble log %s: %w", path, err)
	}
	defer f.Close()
	s.f = f
	stop, err := s.firstInvalid()
	if err != nil {
		return fmt.Errorf("read pebble log %s: %w", path, err)
	}
	if stop.offset < 0 {
		return nil
	}
	evidence, what, err := s.evidenceAfter(stop)
	if err != nil {
		return fmt.Errorf("read pebble log %s: %w", path, err)
	}
	if evidence >= 0 {
		return fmt.Errorf("%w: pebble log %s: %s at offset %d, yet %s at offset %d: "+
			"pebble would silently drop everything written after the first",
			ErrCorrupt, path, stop.reason, stop.offset, what, evidence)
	}
	return nil
}

// chunkStop is where the in-order read of a file ended; offset is -1 when it
// reached the end of the file without a problem. end is where the chunk at
// offset ends by its own header, or -1 when the header is not this file's.
type chunkStop struct {
	offset, end int64
	reason      string
}

// chunkScanner reads one file block by block; memory stays at one block.
type chunkScanner struct {
	f        vfs.File
	manifest bool   // legacy chunks, no log number
	logNum   uint32 // a WAL's number, low 32 bits
	block    [chunkBlockLen]byte
}

// readBlock reads block i, returning how many bytes the file holds there.
func (s *chunkScanner) readBlock(i int64) (int, error) {
	n, err := s.f.ReadAt(s.block[:], i*chunkBlockLen)
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// header returns the header length and position of a chunk type, or ok false
// for a type this file cannot hold.
func (s *chunkScanner) header(kind byte) (length int, pos chunkPosition, ok bool) {
	switch {
	case s.manifest && kind >= chunkLegacyMin && kind < chunkRecyclableMin:
		return chunkLegacyHeader, chunkPosition(kind - chunkLegacyMin), true
	case s.manifest:
		return 0, 0, false
	case kind >= chunkRecyclableMin && kind < chunkSyncMin:
		return chunkRecyclableHeader, chunkPosition(kind - chunkRecyclableMin), true
	case kind >= chunkSyncMin && kind <= chunkMax:
		return chunkSyncHeader, chunkPosition(kind - chunkSyncMin), true
	}
	return 0, 0, false
}

// chunkAt parses the chunk at off in the current block of n bytes. It returns
// the chunk's length (header and payload) and position when the chunk is a
// valid chunk of this file, or a reason when it is not. declared is the length
// the header gives when the header is at least of this file, or -1.
func (s *chunkScanner) chunkAt(off, n int) (length int, pos chunkPosition, declared int, reason string) {
	b := s.block[:n]
	if off+chunkLegacyHeader > n {
		return 0, 0, -1, "chunk header cut short"
	}
	header, pos, ok := s.header(b[off+6])
	if !ok {
		return 0, 0, -1, "bad chunk type"
	}
	if off+header > n {
		return 0, 0, -1, "chunk header cut short"
	}
	if !s.manifest && binary.LittleEndian.Uint32(b[off+7:]) != s.logNum {
		return 0, 0, -1, "chunk of another log"
	}
	length = header + int(binary.LittleEndian.Uint16(b[off+4:]))
	if off+length > n {
		return 0, 0, length, "chunk cut short"
	}
	if binary.LittleEndian.Uint32(b[off:]) != pebbleCRC(b[off+6:off+length]) {
		return 0, 0, length, "chunk checksum mismatch"
	}
	return length, pos, length, ""
}

// isEOFTrailer reports whether b starts with the trailer Pebble writes when it
// closes this WAL cleanly.
func (s *chunkScanner) isEOFTrailer(b []byte) bool {
	return !s.manifest && len(b) >= chunkRecyclableHeader &&
		binary.LittleEndian.Uint32(b) == 0 &&
		binary.LittleEndian.Uint16(b[4:]) == 0 &&
		b[6] == chunkRecyclableMin &&
		binary.LittleEndian.Uint32(b[7:]) == s.logNum+1
}

// firstInvalid reads the chunks in order and returns where they stop being a
// valid sequence of records.
func (s *chunkScanner) firstInvalid() (chunkStop, error) {
	inRecord := false // a first chunk was read and its last chunk was not
	for i := int64(0); ; i++ {
		n, err := s.readBlock(i)
		if err != nil {
			return chunkStop{}, err
		}
		base := i * chunkBlockLen
		for off := 0; off < n; {
			if chunkBlockLen-off < chunkSyncHeader && allZero(s.block[off:n]) {
				break // zero padding at the end of a block
			}
			stop := chunkStop{offset: base + int64(off), end: -1}
			if !inRecord && s.isEOFTrailer(s.block[off:n]) {
				stop.reason = "eof trailer"
				return stop, nil
			}
			length, pos, declared, reason := s.chunkAt(off, n)
			if declared >= 0 {
				stop.end = stop.offset + int64(declared)
			}
			if reason != "" {
				if allZero(s.block[off:min(off+chunkSyncHeader, n)]) {
					reason = "zeroed chunk"
				}
				stop.reason = reason
				return stop, nil
			}
			if starts := pos == chunkFull || pos == chunkFirst; starts == inRecord {
				stop.reason = "chunk out of sequence"
				return stop, nil
			}
			inRecord = pos == chunkFirst || pos == chunkMiddle
			off += length
		}
		if n < chunkBlockLen {
			// The end of the file. A record still open here was being written
			// when the process stopped: a torn tail with nothing after it.
			return chunkStop{offset: -1, end: -1}, nil
		}
	}
}

// evidenceAfter looks for proof that the file was written past stop: see the
// comment at the top of this file. It returns the offset of the proof and
// what it is, or -1.
func (s *chunkScanner) evidenceAfter(stop chunkStop) (int64, string, error) {
	if off, err := s.validChunkFrom(stop.offset + 1); err != nil || off >= 0 {
		return off, "a valid chunk", err
	}
	if s.manifest {
		return -1, "", nil
	}
	info, err := s.f.Stat()
	if err != nil {
		return -1, "", err
	}
	for _, off := range []int64{stop.end, info.Size() - chunkRecyclableHeader} {
		if off <= stop.offset {
			continue
		}
		var b [chunkRecyclableHeader]byte
		if n, err := s.f.ReadAt(b[:], off); n < len(b) {
			if err == io.EOF {
				continue
			}
			return -1, "", err
		}
		if s.isEOFTrailer(b[:]) {
			return off, "an eof trailer", nil
		}
	}
	return -1, "", nil
}

// validChunkFrom searches every byte offset from start to the end of the file
// for a valid chunk of this file and returns the first one's offset, or -1.
func (s *chunkScanner) validChunkFrom(start int64) (int64, error) {
	for i := start / chunkBlockLen; ; i++ {
		n, err := s.readBlock(i)
		if err != nil {
			return -1, err
		}
		base := i * chunkBlockLen
		off := 0
		if base < start {
			off = int(start - base)
		}
		for ; off+chunkLegacyHeader <= n; off++ {
			if _, _, ok := s.header(s.block[off+6]); !ok {
				continue // the cheap filter, before any checksum
			}
			if _, _, _, reason := s.chunkAt(off, n); reason == "" {
				return base + int64(off), nil
			}
		}
		if n < chunkBlockLen {
			return -1, nil
		}
	}
}

// pebbleCRC is the checksum of Pebble's record package: CRC-32C, rotated
// right by 15 bits, plus a constant.
func pebbleCRC(b []byte) uint32 {
	c := crc32.Checksum(b, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
