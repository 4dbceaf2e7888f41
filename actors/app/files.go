package app

import (
	"crypto/rand"

	"payments/actors"
	"payments/ledger/disputes"
)

// Files: the record of an uploaded file, and the cluster's signing key.
// The bytes are the front end's (each node's blob store, copied to a
// majority before the record is created); the record is the ledger's.

// fileSigningKeyLen is the signing key's length in bytes.
const fileSigningKeyLen = 32

// FileSigningKey returns the cluster's signing key, committing a fresh
// random one first if there is none: it signs file download URLs, and the
// followers' word on a client's address (so an IP allowlist needs it). A
// race of two leaders is settled by the ledger: the first one committed
// wins. The error is a *ledger.Error or one of the actors' errors.
func (a *App) FileSigningKey() ([]byte, error) {
	if key, ok := disputes.FileSigningKey(a.sys.Reader()); ok {
		return key, nil
	}
	fresh := make([]byte, fileSigningKeyLen)
	rand.Read(fresh)
	r := a.propose(&disputes.SetFileSigningKey{At: a.sys.Now().UnixMilli(), Key: string(fresh)})
	if r.Err != nil {
		return nil, r.Err
	}
	if r.Result.Err != nil {
		return nil, r.Result.Err
	}
	key, _ := disputes.FileSigningKey(a.sys.Reader())
	return key, nil
}

// NewFile is the record of a file whose bytes are stored.
type NewFile struct {
	Purpose     string
	Filename    string
	ContentType string
	Size        int64
	SHA256      string // hex digest of the bytes: where the blob stores find them
}

// CreateFile records an uploaded file in the caller's organization.
func (a *App) CreateFile(c Caller, in NewFile) actors.Reply {
	return a.propose(&disputes.CreateFile{
		At: a.sys.Now().UnixMilli(), ID: actors.NewID("file_"), OrgID: c.OrgID,
		Purpose: in.Purpose, Filename: in.Filename, ContentType: in.ContentType, Size: in.Size, SHA256: in.SHA256,
	})
}
