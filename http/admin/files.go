package admin

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"payments/actors/app"
	"payments/http/blob"
	"payments/http/core"
	"payments/ledger"
	"payments/ledger/disputes"
)

// Files. The metadata is a ledger record committed through Raft; the bytes
// are in each node's blob store (package blob), written on the node that
// takes the upload and copied to a majority of nodes before the record is
// committed, so a file that was acknowledged survives the loss of any
// minority of nodes. A node asked for bytes it lacks fetches them from a
// peer over an internal route and checks their digest (filepeers.go).
//
// Download URLs are served by our own endpoint, GET /v1/files/{id}/content,
// on any node, without an API key: the URL carries its expiry and an
// HMAC-SHA256 over the file id and expiry, keyed with the replicated signing
// key (disputes.SetFileSigningKey), so every node can verify every node's
// URLs and they stay valid across restarts until they expire.

func init() {
	core.RegisterRoutes(core.Resource("/v1/files", ledger.ScopeFilesRead, ledger.ScopeFilesWrite,
		core.Handlers{Create: uploadFile, List: listFiles, Get: getFile})...)
	core.RegisterRoutes(
		core.Endpoint{Method: fasthttp.MethodGet, Path: "/v1/files/purposes", H: filePurposes},
	)
	// The signed download is not an API call with a key, and is not
	// forwarded to the leader: any node serves it.
	core.RegisterRouteSet(func(s *core.Server) {
		s.Router().GET("/v1/files/{id}/content", func(a0 *fasthttp.RequestCtx) { downloadFile(s, a0) })
	})
}

const listFilesKind core.ListKind = 'F'

// fileURLLifetime is how long a download URL is valid, by purpose: identity
// documents briefly, logos (shown on pages) for a day.
var fileURLLifetime = map[string]time.Duration{
	"dispute.evidence":  time.Hour,
	"identity.document": 15 * time.Minute,
	"identity.selfie":   15 * time.Minute,
	"business.logo":     24 * time.Hour,
	"business.document": time.Hour,
}

// uploadsInFlight bounds the uploads being parsed and stored at once: each
// holds up to two copies of a file in memory.
var uploadsInFlight = make(chan struct{}, 8)

type fileJSON struct {
	ID          string `json:"id"`
	Purpose     string `json:"purpose"`
	Filename    string `json:"filename"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
	URL         string `json:"url,omitempty"`
	CreatedAt   string `json:"createdAt"`
}

type fileBody struct {
	File fileJSON `json:"file"`
}

func renderFile(f *disputes.File) fileJSON {
	return fileJSON{ID: f.ID, Purpose: f.Purpose, Filename: f.Filename, ContentType: f.ContentType,
		Size: f.Size, CreatedAt: core.Timestamp(f.CreatedAt)}
}

// urlSigner makes download URLs for one response.
type urlSigner struct {
	base string // scheme and host
	key  []byte
	now  time.Time
}

// signer returns the URL signer for this request: the configured public
// base URL (Config.PublicBaseURL, never the request's Host), the replicated key (nil before any file exists), and the
// organization's clock, so that advancing a sandbox clock expires links as
// it expires everything else. Call it under the state's read lock.
func signer(c *core.Call, st *ledger.Reader) urlSigner {
	key, _ := disputes.FileSigningKey(st)
	now := time.UnixMilli(st.OrgNow(c.Org, c.Server.Config.Actors.Now().UnixMilli()))
	return urlSigner{base: c.Server.Config.PublicBaseURL, key: key, now: now}
}

func (u urlSigner) url(f *disputes.File) string {
	if u.key == nil {
		return ""
	}
	life, ok := fileURLLifetime[f.Purpose]
	if !ok {
		life = 15 * time.Minute
	}
	expires := strconv.FormatInt(u.now.Add(life).Unix(), 10)
	return u.base + "/v1/files/" + f.ID + "/content?expires=" + expires + "&signature=" + fileSignature(u.key, f.ID, expires)
}

// fileSignature is the hex HMAC-SHA256 of a download URL's id and expiry.
func fileSignature(key []byte, id, expires string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("file-url\x00" + id + "\x00" + expires))
	return hex.EncodeToString(m.Sum(nil))
}

// uploadFile: POST /v1/files.
func uploadFile(c *core.Call) {
	if c.Server.Blobs == nil {
		c.Fail(&ledger.Error{Code: ledger.CodeUnavailable, Message: "File storage is not configured on this node; nothing was done"})
		return
	}
	select {
	case uploadsInFlight <- struct{}{}:
		defer func() { <-uploadsInFlight }()
	default:
		c.Fail(&ledger.Error{Code: ledger.CodeUnavailable, Message: "Too many uploads in progress; nothing was done, retry shortly"})
		return
	}
	up, e := parseUpload(string(c.Ctx.Request.Header.ContentType()), c.Ctx.Request.Body())
	if e != nil {
		c.Fail(e)
		return
	}
	purpose, contentType, e := checkUpload(up)
	if e != nil {
		c.Fail(e)
		return
	}
	key, e := c.SigningKey()
	if e != nil {
		c.Fail(e)
		return
	}
	digest, err := c.Server.Blobs.Put(up.content)
	if err != nil {
		c.Server.Logger.Error("store blob", "err", err)
		c.Fail(&ledger.Error{Code: ledger.CodeUnavailable, Message: "The file could not be stored; nothing was done, retry shortly"})
		return
	}
	if e := c.Server.ReplicateBlob(key, digest, up.content); e != nil {
		c.Fail(e)
		return
	}
	r := c.Server.Config.App.CreateFile(c.Caller(), app.NewFile{
		Purpose: purpose.Name, Filename: up.filename, ContentType: contentType,
		Size: int64(len(up.content)), SHA256: digest,
	})
	var sign urlSigner
	sign = signer(c, c.Server.Config.Actors.Reader())
	c.Created(r, func(res *ledger.Result) any {
		f := renderFile(disputes.FileOf(*res))
		f.URL = sign.url(disputes.FileOf(*res))
		return &fileBody{f}
	})
}

// getFile: GET /v1/files/{id}, with a fresh signed URL.
func getFile(c *core.Call) {
	core.Get(c, "id", "File", func(st *ledger.Reader, org, id string) (fileJSON, bool) {
		f, ok := disputes.GetFile(st, org, id)
		if !ok {
			return fileJSON{}, false
		}
		out := renderFile(&f)
		out.URL = signer(c, st).url(&f)
		return out, true
	}, func(f *fileJSON) *fileBody { return &fileBody{*f} })
}

// listFiles: GET /v1/files, newest first, without URLs.
func listFiles(c *core.Call) {
	core.List(c, listFilesKind, func(c *core.Call) (string, *ledger.Error) {
		purpose, given := core.Query(c.Ctx, "purpose")
		if _, ok := disputes.LookupFilePurpose(purpose); given && !ok {
			return "", ledger.FieldInvalid("purpose", "must be one of "+purposeNames())
		}
		return purpose, nil
	}, disputes.Files, renderFile)
}

type filePurposeJSON struct {
	Name         string   `json:"name"`
	MaxSizeBytes int64    `json:"maxSizeBytes"`
	AllowedTypes []string `json:"allowedTypes"`
}

type filePurposesBody struct {
	Purposes []filePurposeJSON `json:"purposes"`
}

// filePurposes: GET /v1/files/purposes, so clients check before uploading.
func filePurposes(c *core.Call) {
	var body filePurposesBody
	for _, p := range disputes.FilePurposes {
		body.Purposes = append(body.Purposes, filePurposeJSON{p.Name, p.MaxSizeBytes, p.AllowedTypes})
	}
	c.OK(fasthttp.StatusOK, &body)
}

// downloadFile: GET /v1/files/{id}/content?expires=…&signature=…, on any
// node and without an API key: the signature is the authority. A follower
// that has not yet applied the file's record (or the key) relays to the
// leader, which has.
func downloadFile(s *core.Server, ctx *fasthttp.RequestCtx) {
	if !s.Begin(ctx) {
		return
	}
	// No key to count against: the route is limited per client address,
	// at the per-key rate, before any lookup or signature check.
	if e := s.Limiter.Allow(ctx, "ip:"+ctx.RemoteIP().String(), core.PerClientAddress); e != nil {
		core.WriteError(ctx, e)
		return
	}
	id, e := core.PathParam(ctx, "id")
	if e != nil {
		core.WriteError(ctx, e)
		return
	}
	expiresText, _ := core.Query(ctx, "expires")
	signature, _ := core.Query(ctx, "signature")
	var p core.Problems
	expires, err := strconv.ParseInt(expiresText, 10, 64)
	if err != nil || expires <= 0 {
		p.Add("expires", "is required: use the url exactly as the API returned it")
	}
	if signature == "" {
		p.Add("signature", "is required: use the url exactly as the API returned it")
	}
	if e := p.Err(); e != nil {
		core.WriteError(ctx, e)
		return
	}
	var f disputes.File
	var found bool
	var key []byte
	var nowSeconds int64 // on the file's organization's clock
	read := func() {
		st := s.Config.Actors.Reader()
		f, found = disputes.FileByID(st, id)
		key, _ = disputes.FileSigningKey(st)
		nowSeconds = st.OrgNow(f.OrgID, s.Config.Actors.Now().UnixMilli()) / 1000
	}
	read()
	if key == nil || !found {
		// Unknown here: the leader answers, or this node once it has
		// caught up with the leader.
		if s.ForwardIfFollower(ctx) {
			return
		}
		read()
	}
	invalid := &ledger.Error{Code: ledger.CodeForbidden,
		Message: "This file link's signature is invalid; use the url exactly as the API returned it"}
	if key == nil || !found { // no valid link names an unknown file
		core.WriteError(ctx, invalid)
		return
	}
	if nowSeconds > expires {
		core.WriteError(ctx, &ledger.Error{Code: ledger.CodeForbidden,
			Message: "This file link has expired; get the file again (GET /v1/files/{id}) for a fresh url"})
		return
	}
	if !hmac.Equal([]byte(signature), []byte(fileSignature(key, id, expiresText))) {
		core.WriteError(ctx, invalid)
		return
	}
	if s.Blobs == nil {
		core.WriteError(ctx, &ledger.Error{Code: ledger.CodeUnavailable, Message: "File storage is not configured on this node"})
		return
	}
	file, size, err := s.Blobs.Open(f.SHA256)
	if errors.Is(err, blob.ErrNotFound) {
		err = s.FetchBlob(key, f.SHA256)
		if err == nil {
			file, size, err = s.Blobs.Open(f.SHA256)
		}
	}
	if err != nil {
		s.Logger.Warn("file bytes unavailable", "file", f.ID, "err", err)
		core.WriteError(ctx, &ledger.Error{Code: ledger.CodeUnavailable,
			Message: "The file's bytes are not reachable on this node or its peers right now; retry shortly"})
		return
	}
	h := &ctx.Response.Header
	h.SetContentType(f.ContentType)
	h.Set("Content-Disposition", contentDisposition(f.Filename))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "private, max-age="+strconv.FormatInt(max(expires-nowSeconds, 0), 10))
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetBodyStream(file, int(size)) // fasthttp closes file when sent
}

// contentDisposition makes the file download under its name, never render
// inline (an SVG could carry script).
func contentDisposition(name string) string {
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '_'
		}
		return r
	}, name)
	return `attachment; filename="` + ascii + `"; filename*=UTF-8''` + url.PathEscape(name)
}
