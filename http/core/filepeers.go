package core

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"payments/http/blob"
	"payments/ledger"
	"payments/ledger/disputes"
)

// Blob replication between nodes, over two internal routes on the same
// HTTP port as the API:
//
//	PUT /internal/blobs/{sha256}   a peer pushes bytes it took in an upload
//	GET /internal/blobs/{sha256}   a peer fetches bytes it lacks
//
// Each request carries x-payments-peer-token: "<unix expiry>.<hex HMAC>",
// the HMAC-SHA256 of the method, digest and expiry under a key derived from
// the replicated URL signing key, so only nodes that apply this cluster's
// log can call them (and a token cannot be replayed for another blob or
// after a minute). What a peer sends is verified against its digest before
// it is stored, so a bad peer cannot plant other bytes under a name.

const (
	PeerTokenHeader   = "x-payments-peer-token"
	PeerTokenLifetime = time.Minute
	PeerTimeout       = 15 * time.Second
	// peerKeyWait is how long a node waits to apply the signing key a peer
	// already uses (the first upload commits it just before pushing).
	peerKeyWait = 3 * time.Second
)

// fileRoutes registers the internal blob routes, which are not API calls
// with a key. They are not forwarded to the leader: any node serves them.
func (s *Server) fileRoutes() {
	s.router.PUT("/internal/blobs/{digest}", s.receiveBlob)
	s.router.GET("/internal/blobs/{digest}", s.serveBlob)
}

// bodyLimitFor is the most body the server reads for a request: more for an
// upload and a peer's push than for JSON calls.
func BodyLimitFor(h *fasthttp.RequestHeader) int {
	p := h.RequestURI()
	if i := bytes.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	switch {
	case h.IsPost() && string(p) == "/v1/files":
		return UploadBodyBytesMax
	case h.IsPut() && bytes.HasPrefix(p, []byte("/internal/blobs/")):
		return disputes.FileSizeMaxBytes
	}
	return ServerBodyBytesMax
}

func peerKey(signingKey []byte) []byte {
	m := hmac.New(sha256.New, signingKey)
	m.Write([]byte("blob-peer"))
	return m.Sum(nil)
}

func PeerToken(signingKey []byte, method, digest string, expires int64) string {
	e := strconv.FormatInt(expires, 10)
	m := hmac.New(sha256.New, peerKey(signingKey))
	m.Write([]byte(method + "\x00" + digest + "\x00" + e))
	return e + "." + hex.EncodeToString(m.Sum(nil))
}

// checkPeer verifies a peer request's token, waiting briefly for the
// signing key if this node has not applied it yet.
func (s *Server) CheckPeer(ctx *fasthttp.RequestCtx, digest string) *ledger.Error {
	deny := &ledger.Error{Code: ledger.CodeForbidden, Message: "Internal route: a valid peer token is required"}
	token := string(ctx.Request.Header.Peek(PeerTokenHeader))
	e, _, ok := strings.Cut(token, ".")
	expires, err := strconv.ParseInt(e, 10, 64)
	if !ok || err != nil || time.Now().Unix() > expires || expires > time.Now().Add(2*PeerTokenLifetime).Unix() {
		return deny
	}
	var key []byte
	for deadline := time.Now().Add(peerKeyWait); ; time.Sleep(20 * time.Millisecond) {
		key, _ = disputes.FileSigningKey(s.Config.Actors.Reader())
		if key != nil || time.Now().After(deadline) {
			break
		}
	}
	if key == nil || !hmac.Equal([]byte(token), []byte(PeerToken(key, string(ctx.Method()), digest, expires))) {
		return deny
	}
	return nil
}

func (s *Server) peerDigest(ctx *fasthttp.RequestCtx) (string, bool) {
	if !s.Begin(ctx) {
		return "", false
	}
	if s.Blobs == nil {
		WriteError(ctx, &ledger.Error{Code: ledger.CodeUnavailable, Message: "File storage is not configured on this node"})
		return "", false
	}
	digest, _ := ctx.UserValue("digest").(string)
	if !blob.ValidDigest(digest) {
		WriteError(ctx, ledger.FieldInvalid("digest", "must be a SHA-256 in lower-case hex"))
		return "", false
	}
	if e := s.CheckPeer(ctx, digest); e != nil {
		WriteError(ctx, e)
		return "", false
	}
	return digest, true
}

// receiveBlob: PUT /internal/blobs/{digest}, a peer's push.
func (s *Server) receiveBlob(ctx *fasthttp.RequestCtx) {
	digest, ok := s.peerDigest(ctx)
	if !ok {
		return
	}
	if e := s.ReadBody(ctx); e != nil { // only now: the peer token is checked
		WriteError(ctx, e)
		return
	}
	err := s.Blobs.PutVerified(digest, bytes.NewReader(ctx.Request.Body()), disputes.FileSizeMaxBytes)
	switch {
	case errors.Is(err, blob.ErrDigestMismatch), errors.Is(err, blob.ErrTooLarge):
		WriteError(ctx, &ledger.Error{Code: ledger.CodeValidation, Message: "The bytes do not match their digest"})
	case err != nil:
		s.Logger.Error("store pushed blob", "err", err)
		WriteError(ctx, &ledger.Error{Code: ledger.CodeUnavailable, Message: "The blob could not be stored"})
	default:
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}
}

// serveBlob: GET /internal/blobs/{digest}, from this node's store only.
func (s *Server) serveBlob(ctx *fasthttp.RequestCtx) {
	digest, ok := s.peerDigest(ctx)
	if !ok {
		return
	}
	f, size, err := s.Blobs.Open(digest)
	if err != nil {
		WriteError(ctx, &ledger.Error{Code: ledger.CodeNotFound, Message: "This node does not hold the blob"})
		return
	}
	ctx.SetContentType("application/octet-stream")
	ctx.SetBodyStream(f, int(size))
}

// peers returns the other nodes' HTTP addresses, in a fixed order.
func (s *Server) peers() []string {
	self := ""
	if s.Config.Cluster != nil {
		self = s.Config.Cluster.ID()
	}
	var out []string
	for id, addr := range s.Config.PeerHTTP {
		if id != self && addr != "" {
			out = append(out, addr)
		}
	}
	sort.Strings(out)
	return out
}

// replicateBlob pushes a blob this node stored to its peers and returns once
// a majority of the cluster (this node included) holds it; the pushes still
// running go on in the background. Fewer than a majority is an error and
// the upload stops there, with nothing committed.
func (s *Server) ReplicateBlob(key []byte, digest string, data []byte) *ledger.Error {
	peers := s.peers()
	needed := (len(peers) + 1) / 2 // a majority of the cluster, less this node
	if needed <= 0 {
		return nil
	}
	acks := make(chan error, len(peers))
	for _, addr := range peers {
		go func() { acks <- s.pushBlob(addr, key, digest, data) }()
	}
	got, failed := 0, 0
	for range peers {
		if err := <-acks; err != nil {
			failed++
			s.Logger.Warn("push blob to peer", "err", err)
		} else {
			got++
		}
		if got >= needed {
			return nil
		}
		if failed > len(peers)-needed {
			break
		}
	}
	return &ledger.Error{Code: ledger.CodeUnavailable,
		Message: "The file could not be stored on a majority of the cluster's nodes; nothing was done, retry shortly"}
}

func (s *Server) pushBlob(addr string, key []byte, digest string, data []byte) error {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + addr + "/internal/blobs/" + digest)
	req.Header.SetMethod(fasthttp.MethodPut)
	req.Header.Set(PeerTokenHeader, PeerToken(key, fasthttp.MethodPut, digest, time.Now().Add(PeerTokenLifetime).Unix()))
	req.SetBodyRaw(data)
	if err := s.Forwarder(addr).DoTimeout(req, resp, PeerTimeout); err != nil {
		return fmt.Errorf("push to %s: %w", addr, err)
	}
	if resp.StatusCode() != fasthttp.StatusNoContent {
		return fmt.Errorf("push to %s: status %d: %s", addr, resp.StatusCode(), resp.Body())
	}
	return nil
}

// fetchBlob copies a blob this node lacks from the first peer that has it,
// checking it against its digest.
func (s *Server) FetchBlob(key []byte, digest string) error {
	err := blob.ErrNotFound
	for _, addr := range s.peers() {
		req := fasthttp.AcquireRequest()
		resp := fasthttp.AcquireResponse()
		req.SetRequestURI("http://" + addr + "/internal/blobs/" + digest)
		req.Header.Set(PeerTokenHeader, PeerToken(key, fasthttp.MethodGet, digest, time.Now().Add(PeerTokenLifetime).Unix()))
		resp.SkipBody = false
		if e := s.Forwarder(addr).DoTimeout(req, resp, PeerTimeout); e != nil {
			err = fmt.Errorf("fetch from %s: %w", addr, e)
		} else if resp.StatusCode() != fasthttp.StatusOK {
			err = fmt.Errorf("fetch from %s: status %d", addr, resp.StatusCode())
		} else {
			err = s.Blobs.PutVerified(digest, bytes.NewReader(resp.Body()), disputes.FileSizeMaxBytes)
		}
		fasthttp.ReleaseRequest(req)
		fasthttp.ReleaseResponse(resp)
		if err == nil {
			return nil
		}
		s.Logger.Warn("fetch blob from peer", "err", err)
	}
	return err
}

// signingKey returns the cluster's signing key (of download URLs, and of
// the followers' word on a client's address), made first if there is none.
func (c *Call) SigningKey() ([]byte, *ledger.Error) {
	key, err := c.Server.Config.App.FileSigningKey()
	if err != nil {
		return nil, ErrorOf(err)
	}
	return key, nil
}

// Limits of an upload.
const (
	// uploadOverheadBytesMax is what the multipart framing may add to the
	// largest file: boundaries, part headers, the purpose field.
	uploadOverheadBytesMax = 64 << 10
	UploadBodyBytesMax     = disputes.FileSizeMaxBytes + uploadOverheadBytesMax
	UploadPartsMax         = 4
	UploadFieldBytesMax    = 256 // the purpose field's value
	FileNameLenMax         = 255 // characters
)

// BlobOrphanAge is how long uploaded bytes may wait for their file record
// before SweepBlobs removes them: far longer than any upload takes to
// commit.
const BlobOrphanAge = time.Hour

// SweepBlobs removes from this node's blob store the bytes that no
// committed file record names and that are older than BlobOrphanAge: the
// leftovers of uploads whose record never committed (no majority, a failed
// commit). It returns how many it removed. cmd/payments calls it hourly.
func (s *Server) SweepBlobs() (int, error) {
	if s.Blobs == nil || s.Config.Actors == nil {
		return 0, nil
	}
	var known map[string]bool
	known = disputes.FileDigests(s.Config.Actors.Reader())
	return s.Blobs.Sweep(func(d string) bool { return known[d] }, time.Now().Add(-BlobOrphanAge))
}

// OpenBlob returns an uploaded file's bytes and their size, fetching them
// from a peer (and keeping them) when this node lacks them: a backup taken
// on any node holds every file its state records. The caller closes it.
func (s *Server) OpenBlob(digest string) (io.ReadCloser, int64, error) {
	if s.Blobs == nil {
		return nil, 0, errors.New("file storage is not configured on this node")
	}
	file, size, err := s.Blobs.Open(digest)
	if errors.Is(err, blob.ErrNotFound) {
		key, _ := disputes.FileSigningKey(s.Config.Actors.Reader())
		if key == nil {
			return nil, 0, fmt.Errorf("file %s: not on this node, and no signing key to ask peers with", digest)
		}
		if err = s.FetchBlob(key, digest); err == nil {
			file, size, err = s.Blobs.Open(digest)
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("file %s: %w", digest, err)
	}
	return file, size, nil
}
