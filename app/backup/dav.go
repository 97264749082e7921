package backup

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/studio-b12/gowebdav"

	"github.com/ccmesh/ccmesh/store"
)

// The WebDAV side of sync (docs/BEHAVIOUR.md#backup-and-sync): one file
// under the configured URL, read whole, and written as a temporary file
// that a MOVE puts in its place, so that a reader sees the old file or the
// new one, never part of one.

// FileName is the file push writes and pull reads under the sync URL.
const FileName = "ccmesh-sync.age"

// File is the remote file as read.
type File struct {
	Data     []byte
	ETag     string
	Modified time.Time
}

// DAV is one push's or pull's connection to the WebDAV server.
type DAV struct {
	c       *gowebdav.Client
	url     string
	ctx     context.Context
	rt      *davTransport
	timeout time.Duration
}

// NewDAV makes a client for cfg whose requests end with ctx, which ends
// within timeout (for messages). It reads a file of at most MaxFile(maxPlain)
// bytes: the sealed form of a plain file of at most maxPlain. Redirects
// are not followed (the answer says where to), and nothing is kept for the
// next sync: Close it.
func NewDAV(ctx context.Context, cfg store.SyncConfig, timeout time.Duration, maxPlain int64) *DAV {
	base := http.DefaultTransport.(*http.Transport).Clone()
	rt := &davTransport{ctx: ctx, base: base, maxFile: MaxFile(maxPlain)}
	c := gowebdav.NewClient(cfg.URL, cfg.User, cfg.Password)
	c.SetTransport(rt)
	c.SetHeader(gowebdav.XInhibitRedirect, "1")
	return &DAV{c: c, url: cfg.URL, ctx: ctx, rt: rt, timeout: timeout}
}

// Close lets the connections go.
func (d *DAV) Close() { d.rt.base.CloseIdleConnections() }

// Fetch reads the remote file; nil when there is none.
func (d *DAV) Fetch() (*File, error) {
	fi, err := d.statFile()
	if err != nil || fi == nil {
		return nil, err
	}
	f := &File{ETag: fi.ETag(), Modified: fi.ModTime()}
	if f.Data, err = d.read(); err != nil {
		if gowebdav.IsErrNotFound(err) { // gone since the PROPFIND
			return nil, nil
		}
		return nil, d.fail("read", err)
	}
	return f, nil
}

// read GETs the remote file, refused past its cap (the transport cuts
// the answer there).
func (d *DAV) read() ([]byte, error) {
	rc, err := d.c.ReadStream(FileName)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// statFile reads the remote file's properties; nil when there is none: a
// 404, or a 207 that gives no 200 propstat for it (a 404 one, or an empty
// <multistatus/>), which gowebdav answers with neither a file nor an error.
// An answer cut short or too large is an error, not "none": gowebdav's XML
// reader stops quietly at either.
func (d *DAV) statFile() (*gowebdav.File, error) {
	info, err := d.c.Stat(FileName)
	if berr := d.rt.bodyError(); berr != nil {
		return nil, d.fail("read", berr)
	}
	if gowebdav.IsErrNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, d.fail("read", err)
	}
	fi, ok := info.(*gowebdav.File)
	if !ok || fi == nil {
		return nil, nil
	}
	return fi, nil
}

// Stat reads the remote file's ETag and modification time, as far as the
// server tells them.
func (d *DAV) Stat() (etag string, modified time.Time) {
	fi, err := d.statFile()
	if err != nil || fi == nil {
		return "", time.Time{}
	}
	return fi.ETag(), fi.ModTime()
}

// ErrRemoteChanged ends an upload that found the remote file changed since
// the push read it: another computer pushed meanwhile.
var ErrRemoteChanged = errors.New("the remote file changed during the push")

// Upload writes data as the remote file: to a temporary name first, then
// moved over the file, so a reader never sees part of it. The move is
// conditional on the file the push read (was; nil when there was none): a
// file that changed meanwhile is ErrRemoteChanged, and it stays as it is.
// A failed upload leaves the file as it was (and tries to remove the
// temporary one).
func (d *DAV) Upload(data []byte, was *File) error {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:]) // never fails (crypto/rand)
	tmp := FileName + "." + hex.EncodeToString(nonce[:]) + ".tmp"
	err := d.c.Write(tmp, data, 0o600)
	if gowebdav.IsErrCode(err, http.StatusConflict) || gowebdav.IsErrNotFound(err) {
		// The folder itself is missing (a PUT needs its parent): make it.
		if merr := d.c.Mkdir("/", 0o700); merr == nil {
			err = d.c.Write(tmp, data, 0o600)
		}
	}
	if err == nil {
		if err = d.moveOver(tmp, was); err == nil {
			return nil
		}
	}
	// The temporary file may be there in part; the real one is untouched.
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(d.ctx), 5*time.Second)
	defer cancel()
	d.rt.setContext(cleanup)
	_ = d.c.Remove(tmp) // best effort: the server may be gone
	d.rt.setContext(d.ctx)
	if errors.Is(err, ErrRemoteChanged) {
		return err
	}
	return d.fail("write", err)
}

// moveOver moves tmp over the sync file if the file is still the one the
// push read. It looks first (the upload may have taken a while), then asks
// the server to check again as it moves: with no file before, "Overwrite:
// F"; with one, an If header naming its ETag (RFC 4918, 10.4). A server
// that knows If only for lock tokens (golang.org/x/net/webdav) refuses any
// such header with 412; when the file still has its ETag after that, the
// move goes again unconditioned, covered by the look before.
func (d *DAV) moveOver(tmp string, was *File) error {
	if err := d.unchanged(was); err != nil {
		return err
	}
	if was == nil {
		err := d.c.Rename(tmp, FileName, false)
		if gowebdav.IsErrCode(err, http.StatusPreconditionFailed) {
			return ErrRemoteChanged
		}
		return err
	}
	if was.ETag != "" {
		d.c.SetInterceptor(func(method string, r *http.Request) {
			if method == "MOVE" {
				r.Header.Set("If", "<"+r.Header.Get("Destination")+"> (["+quoteETag(was.ETag)+"])")
			}
		})
		err := d.c.Rename(tmp, FileName, true)
		d.c.SetInterceptor(nil)
		if !gowebdav.IsErrCode(err, http.StatusPreconditionFailed) {
			return err
		}
		if err := d.unchanged(was); err != nil {
			return err
		}
	}
	return d.c.Rename(tmp, FileName, true)
}

// unchanged says whether the remote file is still was (nil: still none),
// by its ETag, or its modification time when the server gives no ETag.
func (d *DAV) unchanged(was *File) error {
	now, err := d.statFile()
	switch {
	case err != nil:
		return err
	case was == nil && now == nil:
		return nil
	case was == nil || now == nil:
		return ErrRemoteChanged
	case was.ETag != "" && now.ETag() != was.ETag:
		return ErrRemoteChanged
	case was.ETag == "" && !now.ModTime().Equal(was.Modified):
		return ErrRemoteChanged
	}
	return nil
}

// quoteETag is an ETag as an If header's condition has it: quoted, as the
// server should have sent it (some leave the quotes out).
func quoteETag(etag string) string {
	if strings.HasSuffix(etag, `"`) {
		return etag
	}
	return `"` + etag + `"`
}

// fail turns a WebDAV error into an Error that says what went wrong and
// that neither side changed.
func (d *DAV) fail(op string, err error) error {
	var pe *os.PathError
	var se gowebdav.StatusError
	var big *davTooLarge
	if errors.As(err, &big) || errors.As(d.rt.bodyError(), &big) {
		return d.tooLarge(big)
	}
	if errors.As(err, &pe) && errors.As(pe.Err, &se) {
		return d.statusError(op, se.Status)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(d.ctx.Err(), context.DeadlineExceeded) {
		return &Error{Status: http.StatusGatewayTimeout, Code: "sync_timeout",
			Message: fmt.Sprintf("the WebDAV server at %s did not answer within %v; nothing was changed here or there", d.url, d.timeout)}
	}
	return &Error{Status: http.StatusBadGateway, Code: "sync_unreachable",
		Message: fmt.Sprintf("could not %s the sync file at %s: %v; nothing was changed here or there", op, d.url, err)}
}

func (d *DAV) statusError(op string, status int) error {
	unchanged := "; nothing was changed here or there"
	switch {
	case status == http.StatusUnauthorized:
		return &Error{Status: http.StatusBadGateway, Code: "sync_unauthorized",
			Message: fmt.Sprintf("the WebDAV server at %s refused the user name or password (401): check them "+
				"(some servers want an app password)%s", d.url, unchanged)}
	case status == http.StatusForbidden:
		return &Error{Status: http.StatusBadGateway, Code: "sync_forbidden",
			Message: fmt.Sprintf("the WebDAV server at %s does not let this user %s there (403): check the folder's "+
				"permissions%s", d.url, op, unchanged)}
	case status == http.StatusInsufficientStorage:
		return &Error{Status: http.StatusBadGateway, Code: "sync_no_space",
			Message: fmt.Sprintf("the WebDAV server at %s has no room for the file (507 Insufficient Storage): "+
				"free some space there and push again%s", d.url, unchanged)}
	case status >= 300 && status < 400:
		to := d.rt.redirect()
		return &Error{Status: http.StatusBadGateway, Code: "sync_redirect",
			Message: fmt.Sprintf("the WebDAV server redirects %s to %q (%d): set that address as the sync URL%s", d.url, to, status, unchanged)}
	case status == http.StatusNotFound || status == http.StatusConflict || status == http.StatusMethodNotAllowed:
		return &Error{Status: http.StatusBadGateway, Code: "sync_no_folder",
			Message: fmt.Sprintf("the WebDAV server has no folder at %s and could not make one (%d): check the URL, "+
				"or create the folder there%s", d.url, status, unchanged)}
	}
	return &Error{Status: http.StatusBadGateway, Code: "sync_failed",
		Message: fmt.Sprintf("the WebDAV server at %s answered %d %s when asked to %s the sync file%s",
			d.url, status, http.StatusText(status), op, unchanged)}
}

// tooLarge answers an answer past its cap.
func (d *DAV) tooLarge(big *davTooLarge) error {
	if big.method == http.MethodGet {
		return &Error{Status: http.StatusBadGateway, Code: "sync_too_large",
			Message: fmt.Sprintf("the file %s at %s is larger than %d MiB, more than any sync file ccmesh writes: "+
				"it is not one; nothing was changed here or there", FileName, d.url, big.limit>>20)}
	}
	return &Error{Status: http.StatusBadGateway, Code: "sync_too_large",
		Message: fmt.Sprintf("the WebDAV server at %s answered %s with more than %d KiB, more than such an answer "+
			"needs; nothing was changed here or there", d.url, big.method, big.limit>>10)}
}

// Caps on what sync reads from the server: the file, which is the
// encrypted export (MaxFile), and any other answer (a PROPFIND of one
// file, an error page, a MOVE's multistatus), which is small (MaxAnswer).
// A server's answer is otherwise read whole into memory.
const MaxAnswer = 64 << 10

// MaxFile is the cap on the sync file: age adds a header and 16 bytes per
// 64 KiB to a plain file of at most maxPlain (what an import takes).
func MaxFile(maxPlain int64) int64 { return maxPlain + 64<<10 }

// davTooLarge is an answer that passed its cap.
type davTooLarge struct {
	method string
	limit  int64
}

func (e *davTooLarge) Error() string {
	return fmt.Sprintf("the answer to %s is larger than %d bytes", e.method, e.limit)
}

// davTransport sends the client's requests with the sync's context, caps
// what their answers may hold, and notes where a redirect pointed and the
// first error reading an answer (gowebdav's PROPFIND reader drops them).
type davTransport struct {
	base    *http.Transport
	maxFile int64 // the cap on a GET's answer

	mu       sync.Mutex
	ctx      context.Context
	location string
	bodyErr  error
}

func (t *davTransport) setContext(ctx context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ctx = ctx
}

func (t *davTransport) redirect() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.location
}

// bodyError is the first error met reading an answer, nil if none.
func (t *davTransport) bodyError() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bodyErr
}

func (t *davTransport) noteBodyError(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.bodyErr == nil {
		t.bodyErr = err
	}
}

func (t *davTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	ctx := t.ctx
	t.mu.Unlock()
	res, err := t.base.RoundTrip(r.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 300 && res.StatusCode < 400 {
		t.mu.Lock()
		t.location = res.Header.Get("Location")
		t.mu.Unlock()
	}
	limit := int64(MaxAnswer)
	if r.Method == http.MethodGet {
		limit = t.maxFile
	}
	if res.ContentLength > limit { // refused before a byte of it is read
		res.Body.Close()
		big := &davTooLarge{method: r.Method, limit: limit}
		t.noteBodyError(big)
		return nil, big
	}
	res.Body = &cappedBody{rc: res.Body, left: limit, t: t, big: &davTooLarge{method: r.Method, limit: limit}}
	return res, nil
}

// cappedBody reads an answer up to its cap; past it, and at any error
// other than the end, it fails and tells the transport.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
	t    *davTransport
	big  *davTooLarge
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.big
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte past the cap tells a body at the cap from a longer one
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.left {
		n, b.left = int(b.left), -1
		b.t.noteBodyError(b.big)
		return n, b.big
	}
	b.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		b.t.noteBodyError(err)
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
