package disputes

import (
	"slices"

	"payments/ledger"
)

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

// FilePurposes are the upload purposes and their limits, in the order the
// API lists them.
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

// Command kinds of files (range 50–69, see ledger/extend.go). Frozen.
const (
	KindCreateFile        ledger.Kind = 55
	KindSetFileSigningKey ledger.Kind = 56
)

func (*CreateFile) Kind() ledger.Kind        { return KindCreateFile }
func (*SetFileSigningKey) Kind() ledger.Kind { return KindSetFileSigningKey }

// FileOf returns the file a CreateFile recorded, or nil.
func FileOf(res ledger.Result) *File { return ledger.ValueOf[File](res) }

func (c *CreateFile) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.ID, &c.OrgID, &c.Purpose, &c.Filename, &c.ContentType)
	f.Varint(&c.Size)
	f.Str(&c.SHA256)
}

func (c *CreateFile) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func (c *SetFileSigningKey) Fields(f *ledger.Codec) {
	f.Varint(&c.At)
	f.Str(&c.Key)
}

func (c *SetFileSigningKey) Encode(e *ledger.Encoder) { c.Fields(e.Codec()) }

func init() {
	ledger.RegisterFieldsCommand[CreateFile](KindCreateFile)
	ledger.RegisterFieldsCommand[SetFileSigningKey](KindSetFileSigningKey)
}

// signingKeyID is the one record of the file signing key's kind.
const signingKeyID = "url_signing"

// fileKind: a file's record never changes once uploaded, listed also by
// its purpose.
var fileKind = ledger.NewRecordKind(ledger.RecordSpec[File]{
	Tag: ledger.TagFile, Name: "file",
	ID: func(f *File) (string, string) { return f.ID, f.OrgID },
	Fields: func(v *File, f *ledger.Codec) {
		f.Str(&v.ID, &v.OrgID, &v.Purpose, &v.Filename, &v.ContentType)
		f.Varint(&v.Size)
		f.Str(&v.SHA256)
		f.Varint(&v.CreatedAt)
	},
	Open: ledger.ClosedAtOnce[File],
	Filters: []ledger.Filter[File]{
		{Name: ledger.IndexParent, Value: func(f *File) string { return f.Purpose }},
	},
})

// signingKeyKind: the signing key is a deployment key (one record that
// stays open, in no organization's list).
var signingKeyKind = ledger.NewDeploymentKeyKind(ledger.TagFileSigningKey, "file signing key", signingKeyID)

func (c *CreateFile) Apply(s *ledger.State) ledger.Result {
	if err := ledger.CheckID(c.ID, "file_"); err != nil {
		return ledger.Result{Err: err}
	}
	if err := s.CheckOrg(c.OrgID); err != nil {
		return ledger.Result{Err: err}
	}
	p, ok := LookupFilePurpose(c.Purpose)
	if !ok {
		return ledger.Result{Err: ledger.FieldInvalid("purpose", "is not a file purpose")}
	}
	if c.Size <= 0 || c.Size > p.MaxSizeBytes {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "File size %d bytes is outside 1 to %d bytes for purpose %s", c.Size, p.MaxSizeBytes, p.Name)}
	}
	if !p.Allows(c.ContentType) {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeBadRequest, "Content type %s not allowed for purpose %s", c.ContentType, p.Name)}
	}
	if c.Filename == "" || len(c.Filename) > 4*fileNameLenMax {
		return ledger.Result{Err: ledger.FieldInvalid("file", "needs a file name of at most 255 characters")}
	}
	if !ValidDigest(c.SHA256) {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeValidation, "file digest %q is not a SHA-256 in lower-case hex", c.SHA256)}
	}
	files := feature.Of(s).files
	if _, dup := files.Get(c.ID); dup {
		return ledger.Result{Err: ledger.Errorf(ledger.CodeConflict, "file %s already exists", c.ID)}
	}
	f := File{ID: c.ID, OrgID: c.OrgID, Purpose: p.Name, Filename: c.Filename, ContentType: c.ContentType,
		Size: c.Size, SHA256: c.SHA256, CreatedAt: s.OrgNow(c.OrgID, c.At)}
	files.Insert(f)
	return ledger.Result{Value: &f}
}

// ValidDigest reports whether s is a SHA-256 in lower-case hex: what names
// a file's bytes, here and in the file store.
func ValidDigest(s string) bool {
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

func (c *SetFileSigningKey) Apply(s *ledger.State) ledger.Result {
	return ledger.SetDeploymentKey(feature.Of(s).keys, signingKeyID, c.Key, c.At, fileSigningKeyLen, "a file signing key")
}

// FileSigningKey returns the key that signs download URLs, once committed.
func FileSigningKey(r *ledger.Reader) ([]byte, bool) {
	return ledger.ReadDeploymentKey(r, signingKeyKind, signingKeyID)
}

// GetFile returns an organization's file by id.
func GetFile(r *ledger.Reader, orgID, id string) (File, bool) {
	return ledger.ReadOwned(r, fileKind, orgID, id)
}

// FileByID returns a file whatever its organization: for download URLs,
// whose signature is the authority.
func FileByID(r *ledger.Reader, id string) (File, bool) { return ledger.ReadRecord(r, fileKind, id) }

// Files lists an organization's files newest first, of one purpose when
// purpose is set.
func Files(r *ledger.Reader, orgID, purpose string, before ledger.Cursor, limit int) ledger.Page[File] {
	if purpose != "" {
		return ledger.ReadFiltered(r, fileKind, ledger.IndexParent, orgID, purpose, before, limit, nil)
	}
	return ledger.ReadList(r, fileKind, orgID, before, limit, nil)
}

// FileDigests returns the digest of every file record, for sweeping the
// blob store of bytes no record names. It walks every file.
func FileDigests(r *ledger.Reader) map[string]bool {
	out := make(map[string]bool)
	ledger.EachRecord(r, fileKind, func(f *File) { out[f.SHA256] = true })
	return out
}
