package app

import (
	"context"
	"time"

	"github.com/ccmesh/ccmesh/app/backup"
	"github.com/ccmesh/ccmesh/store"
)

// The WebDAV side of sync is app/backup's (backup.DAV); sync.go decides,
// and its refusals are the admin API's errors (apierr.Error).

// syncFileName is the file push writes and pull reads under the sync URL.
const syncFileName = backup.FileName

// davFile is the remote file as read.
type davFile = backup.File

// errRemoteChanged ends an upload that found the remote file changed since
// the push read it: another computer pushed meanwhile.
var errRemoteChanged = backup.ErrRemoteChanged

// davClient is one push's or pull's connection to the WebDAV server.
type davClient struct{ d *backup.DAV }

// newDAV makes a client for cfg whose requests end with ctx; close it.
func newDAV(ctx context.Context, cfg store.SyncConfig) *davClient {
	return &davClient{backup.NewDAV(ctx, cfg, syncTimeout, maxAdminBody)}
}

func (d *davClient) close() { d.d.Close() }

// fetch reads the remote file; nil when there is none.
func (d *davClient) fetch() (*davFile, error) {
	return d.d.Fetch()
}

// stat reads the remote file's ETag and modification time, as far as the
// server tells them.
func (d *davClient) stat() (etag string, modified time.Time) { return d.d.Stat() }

// upload writes data as the remote file, only over the file the push
// read (was; nil when there was none): errRemoteChanged otherwise.
func (d *davClient) upload(data []byte, was *davFile) error { return d.d.Upload(data, was) }
