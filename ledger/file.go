package ledger

import "slices"

// Files: the ledger keeps each uploaded file's metadata (who, what, how
// big, and the SHA-256 that names its bytes), never the bytes. The bytes
// live in a content-addressed store on the nodes' disks (package blob);
// the digest here is what lets any node find, fetch and verify them.
//
// The key that signs download URLs is replicated here too: one random key
// drawn by the leader the first time it is needed and committed by
// SetFileSigningKey, so every node verifies every node's URLs and the key
// survives restarts with the log and snapshots.

// FilePurpose is what a file is for; it fixes the file's size limit and the
// content types it may have.
type FilePurpose struct {
	Name         string
	MaxSizeBytes int64
	AllowedTypes []string // MIME types, as detected from the bytes
}

// The upload purposes and their limits, in the order the API lists them.
var FilePurposes = []FilePurpose{
	{"dispute.evidence", 10 << 20, []string{"image/jpeg", "image/png", "image/webp", "application/pdf"}},
	{"identity.document", 5 << 20, []string{"image/jpeg", "image/png", "application/pdf"}},
	{"identity.selfie", 5 << 20, []string{"image/jpeg", "image/png"}},
	{"business.logo", 2 << 20, []string{"image/jpeg", "image/png", "image/svg+xml", "image/webp"}},
	{"business.document", 10 << 20, []string{"image/jpeg", "image/png", "application/pdf"}},
}

// PurposeDisputeEvidence is the purpose of files attached to disputes.
const PurposeDisputeEvidence = "dispute.evidence"

// FileSizeMaxBytes is the largest size any purpose allows.
const FileSizeMaxBytes = 10 << 20

// LookupFilePurpose returns the purpose with the given name.
func LookupFilePurpose(name string) (FilePurpose, bool) {
	for _, p := range FilePurposes {
		if p.Name == name {
			return p, true
		}
	}
	return FilePurpose{}, false
}

// Allows reports whether a file of this content type may have the purpose.
func (p FilePurpose) Allows(contentType string) bool {
	return slices.Contains(p.AllowedTypes, contentType)
}

// File is an uploaded file's metadata.
type File struct {
	ID          string
	OrgID       string
	Purpose     string
	Filename    string
	ContentType string // detected from the bytes, one of the purpose's types
	Size        int64  // bytes
	SHA256      string // lower-case hex digest of the bytes: their name in the blob store
	CreatedAt   int64
}

// Limits of file metadata, re-checked by Apply.
const (
	fileNameLenMax    = 255
	fileSigningKeyLen = 32
)

// CreateFile records an uploaded file. The bytes were stored (on a majority
// of nodes) before the command was proposed.
type CreateFile struct {
	At          int64
	ID          string
	OrgID       string
	Purpose     string
	Filename    string
	ContentType string
	Size        int64
	SHA256      string
}

// SetFileSigningKey commits the key that signs file download URLs. The first
// one committed wins; a later one changes nothing and is answered as a
// replay, so two leaders racing to create the key agree on one.
type SetFileSigningKey struct {
	At  int64
	Key string // fileSigningKeyLen random bytes
}

// Command kinds of files. Frozen.
const (
	KindCreateFile        Kind = 55
	KindSetFileSigningKey Kind = 56
)

func (*CreateFile) Kind() Kind        { return KindCreateFile }
func (*SetFileSigningKey) Kind() Kind { return KindSetFileSigningKey }

func (c *CreateFile) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID)
	f.Str(&c.OrgID)
	f.Str(&c.Purpose)
	f.Str(&c.Filename)
	f.Str(&c.ContentType)
	f.Varint(&c.Size)
	f.Str(&c.SHA256)
}

func (c *CreateFile) Encode(e *Encoder) { c.fields(e.Codec()) }

func (c *SetFileSigningKey) fields(f *Codec) {
	f.Varint(&c.At)
	f.Str(&c.Key)
}

func (c *SetFileSigningKey) Encode(e *Encoder) { c.fields(e.Codec()) }

func init() {
	registerFields[CreateFile](KindCreateFile)
	registerFields[SetFileSigningKey](KindSetFileSigningKey)
}

func encodeFile(e *Encoder, f *File) {
	e.str(f.ID)
	e.str(f.OrgID)
	e.str(f.Purpose)
	e.str(f.Filename)
	e.str(f.ContentType)
	e.varint(f.Size)
	e.str(f.SHA256)
	e.varint(f.CreatedAt)
}

func decodeFile(d *Decoder) File {
	return File{ID: d.str(), OrgID: d.str(), Purpose: d.str(), Filename: d.str(), ContentType: d.str(),
		Size: d.varint(), SHA256: d.str(), CreatedAt: d.varint()}
}

// fileSigningKey is the one record of the file_keys section.
type fileSigningKey struct {
	Key string
	At  int64
}

const fileSigningKeyID = "url_signing"

func encodeFileSigningKey(e *Encoder, k *fileSigningKey) {
	e.str(k.Key)
	e.varint(k.At)
}

func decodeFileSigningKey(d *Decoder) fileSigningKey {
	return fileSigningKey{Key: d.str(), At: d.varint()}
}

// fileKind: a file's record never changes once uploaded. The signing key
// is one record that stays open.
var fileKind = &kind[File]{
	tag: tagFile, name: "file",
	id:  func(f *File) (string, string) { return f.ID, f.OrgID },
	enc: encodeFile, dec: decodeFile,
	open: func(*File) bool { return false },
	filters: []filter[File]{
		{indexParent, func(f *File) string { return f.Purpose }},
	},
}

var fileSigningKeyKind = &kind[fileSigningKey]{
	tag: tagFileSigningKey, name: "file signing key",
	id:  func(*fileSigningKey) (string, string) { return fileSigningKeyID, "" },
	enc: encodeFileSigningKey, dec: decodeFileSigningKey,
	unlisted: true,
}

func (c *CreateFile) Apply(s *State) Result {
	if err := s.checkNew(c.ID, "file_", c.OrgID); err != nil {
		return Result{Err: err}
	}
	p, ok := LookupFilePurpose(c.Purpose)
	if !ok {
		return Result{Err: FieldInvalid("purpose", "is not a file purpose")}
	}
	if c.Size <= 0 || c.Size > p.MaxSizeBytes {
		return Result{Err: Errorf(CodeBadRequest, "File size %d bytes is outside 1 to %d bytes for purpose %s", c.Size, p.MaxSizeBytes, p.Name)}
	}
	if !p.Allows(c.ContentType) {
		return Result{Err: Errorf(CodeBadRequest, "Content type %s not allowed for purpose %s", c.ContentType, p.Name)}
	}
	if c.Filename == "" || len(c.Filename) > 4*fileNameLenMax {
		return Result{Err: FieldInvalid("file", "needs a file name of at most 255 characters")}
	}
	if !isHexDigest(c.SHA256) {
		return Result{Err: Errorf(CodeValidation, "file digest %q is not a SHA-256 in lower-case hex", c.SHA256)}
	}
	if _, dup := s.files.get(c.ID); dup {
		return Result{Err: Errorf(CodeConflict, "file %s already exists", c.ID)}
	}
	f := File{ID: c.ID, OrgID: c.OrgID, Purpose: p.Name, Filename: c.Filename, ContentType: c.ContentType,
		Size: c.Size, SHA256: c.SHA256, CreatedAt: s.OrgNow(c.OrgID, c.At)}
	s.files.insert(f)
	return Result{File: &f}
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

func (c *SetFileSigningKey) Apply(s *State) Result {
	if len(c.Key) != fileSigningKeyLen {
		return Result{Err: Errorf(CodeValidation, "a file signing key is %d bytes", fileSigningKeyLen)}
	}
	if _, ok := s.fileKeys.get(fileSigningKeyID); ok {
		return Result{Replayed: true}
	}
	s.fileKeys.insert(fileSigningKey{Key: c.Key, At: c.At})
	return Result{}
}

// FileSigningKey returns the key that signs download URLs, once committed.
func (r *Reader) FileSigningKey() ([]byte, bool) {
	k, ok := readRecord(r, fileSigningKeyKind, fileSigningKeyID)
	if !ok {
		return nil, false
	}
	return []byte(k.Key), true
}

// File returns an organization's file by id.
func (r *Reader) File(orgID, id string) (File, bool) { return readOwned(r, fileKind, orgID, id) }

// FileByID returns a file whatever its organization: for download URLs,
// whose signature is the authority.
func (r *Reader) FileByID(id string) (File, bool) { return readRecord(r, fileKind, id) }

// Files lists an organization's files newest first, of one purpose when
// purpose is set.
func (r *Reader) Files(orgID, purpose string, before Cursor, limit int) Page[File] {
	k := fileKind
	prefix := k.listPrefix(orgID)
	if purpose != "" {
		prefix = k.filterPrefix(indexParent, orgID, purpose)
	}
	return readPage(r, k, prefix, before, limit, nil)
}

// FileDigests returns the digest of every file record, for sweeping the
// blob store of bytes no record names. It walks every file.
func (r *Reader) FileDigests() map[string]bool {
	out := make(map[string]bool)
	prefix := newKey(fileKind.tag, subRecord)
	scan(r.kv, prefix, prefixEnd(prefix), false, func(_, v []byte) bool {
		out[decodeOrFail(v, fileKind.decodeStored).v.SHA256] = true
		return true
	})
	return out
}
