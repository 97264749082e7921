package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/studio-b12/gowebdav"

	"github.com/ccmesh/ccmesh/store"
)

// The WebDAV side of sync (docs/BEHAVIOUR.md#backup-and-sync): one file
// under the configured URL, read whole, and written as a temporary file
// that a MOVE puts in its place, so that a reader sees the old file or the
// new one, never part of one.

// syncFileName is the file push writes and pull reads under the sync URL.
const syncFileName = "ccmesh-sync.age"

// davFile is the remote file as read.
type davFile struct {
	data     []byte
	etag     string
	modified time.Time
}

// davClient is one push's or pull's connection to the WebDAV server.
type davClient struct {
	c   *gowebdav.Client
	url string
	ctx context.Context
	rt  *davTransport
}

// newDAV makes a client for cfg whose requests end with ctx. Redirects are
// not followed (the answer says where to), and nothing is kept for the
// next sync: close it.
func newDAV(ctx context.Context, cfg store.SyncConfig) *davClient {
	base := http.DefaultTransport.(*http.Transport).Clone()
	rt := &davTransport{ctx: ctx, base: base}
	c := gowebdav.NewClient(cfg.URL, cfg.User, cfg.Password)
	c.SetTransport(rt)
	c.SetHeader(gowebdav.XInhibitRedirect, "1")
	return &davClient{c: c, url: cfg.URL, ctx: ctx, rt: rt}
}

func (d *davClient) close() { d.rt.base.CloseIdleConnections() }

// fetch reads the remote file; nil when there is none.
func (d *davClient) fetch() (*davFile, error) {
	info, err := d.c.Stat(syncFileName)
	if gowebdav.IsErrNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, d.fail("read", err)
	}
	f := &davFile{modified: info.ModTime()}
	if fi, ok := info.(*gowebdav.File); ok {
		f.etag = fi.ETag()
	}
	if f.data, err = d.c.Read(syncFileName); err != nil {
		if gowebdav.IsErrNotFound(err) { // gone since the PROPFIND
			return nil, nil
		}
		return nil, d.fail("read", err)
	}
	return f, nil
}

// stat reads the remote file's ETag and modification time, as far as the
// server tells them.
func (d *davClient) stat() (etag string, modified time.Time) {
	info, err := d.c.Stat(syncFileName)
	if err != nil {
		return "", time.Time{}
	}
	if fi, ok := info.(*gowebdav.File); ok {
		etag = fi.ETag()
	}
	return etag, info.ModTime()
}

// upload writes data as the remote file: to a temporary name first, then
// moved over the file, so a reader never sees part of it. A failed upload
// leaves the file as it was (and tries to remove the temporary one).
func (d *davClient) upload(data []byte) error {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:]) // never fails (crypto/rand)
	tmp := syncFileName + "." + hex.EncodeToString(nonce[:]) + ".tmp"
	err := d.c.Write(tmp, data, 0o600)
	if gowebdav.IsErrCode(err, http.StatusConflict) || gowebdav.IsErrNotFound(err) {
		// The folder itself is missing (a PUT needs its parent): make it.
		if merr := d.c.Mkdir("/", 0o700); merr == nil {
			err = d.c.Write(tmp, data, 0o600)
		}
	}
	if err == nil {
		if err = d.c.Rename(tmp, syncFileName, true); err == nil {
			return nil
		}
	}
	// The temporary file may be there in part; the real one is untouched.
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(d.ctx), 5*time.Second)
	defer cancel()
	d.rt.setContext(cleanup)
	_ = d.c.Remove(tmp) // best effort: the server may be gone
	return d.fail("write", err)
}

// fail turns a WebDAV error into an admin API error that says what went
// wrong and that neither side changed.
func (d *davClient) fail(op string, err error) error {
	var pe *os.PathError
	var se gowebdav.StatusError
	if errors.As(err, &pe) && errors.As(pe.Err, &se) {
		return d.statusError(op, se.Status)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(d.ctx.Err(), context.DeadlineExceeded) {
		return &apiError{Status: http.StatusGatewayTimeout, Code: "sync_timeout",
			Message: fmt.Sprintf("the WebDAV server at %s did not answer within %v; nothing was changed here or there", d.url, syncTimeout)}
	}
	return &apiError{Status: http.StatusBadGateway, Code: "sync_unreachable",
		Message: fmt.Sprintf("could not %s the sync file at %s: %v; nothing was changed here or there", op, d.url, err)}
}

func (d *davClient) statusError(op string, status int) error {
	unchanged := "; nothing was changed here or there"
	switch {
	case status == http.StatusUnauthorized:
		return &apiError{Status: http.StatusBadGateway, Code: "sync_unauthorized",
			Message: fmt.Sprintf("the WebDAV server at %s refused the user name or password (401): check them "+
				"(some servers want an app password)%s", d.url, unchanged)}
	case status == http.StatusForbidden:
		return &apiError{Status: http.StatusBadGateway, Code: "sync_forbidden",
			Message: fmt.Sprintf("the WebDAV server at %s does not let this user %s there (403): check the folder's "+
				"permissions%s", d.url, op, unchanged)}
	case status == http.StatusInsufficientStorage:
		return &apiError{Status: http.StatusBadGateway, Code: "sync_no_space",
			Message: fmt.Sprintf("the WebDAV server at %s has no room for the file (507 Insufficient Storage): "+
				"free some space there and push again%s", d.url, unchanged)}
	case status >= 300 && status < 400:
		to := d.rt.redirect()
		return &apiError{Status: http.StatusBadGateway, Code: "sync_redirect",
			Message: fmt.Sprintf("the WebDAV server redirects %s to %q (%d): set that address as the sync URL%s", d.url, to, status, unchanged)}
	case status == http.StatusNotFound || status == http.StatusConflict || status == http.StatusMethodNotAllowed:
		return &apiError{Status: http.StatusBadGateway, Code: "sync_no_folder",
			Message: fmt.Sprintf("the WebDAV server has no folder at %s and could not make one (%d): check the URL, "+
				"or create the folder there%s", d.url, status, unchanged)}
	}
	return &apiError{Status: http.StatusBadGateway, Code: "sync_failed",
		Message: fmt.Sprintf("the WebDAV server at %s answered %d %s when asked to %s the sync file%s",
			d.url, status, http.StatusText(status), op, unchanged)}
}

// davTransport sends the client's requests with the sync's context and
// notes where a redirect pointed.
type davTransport struct {
	base *http.Transport

	mu       sync.Mutex
	ctx      context.Context
	location string
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

func (t *davTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.mu.Lock()
	ctx := t.ctx
	t.mu.Unlock()
	res, err := t.base.RoundTrip(r.WithContext(ctx))
	if err == nil && res.StatusCode >= 300 && res.StatusCode < 400 {
		t.mu.Lock()
		t.location = res.Header.Get("Location")
		t.mu.Unlock()
	}
	return res, err
}
