package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/app/backup"
	"github.com/ccmesh/ccmesh/internal/logcode"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// WebDAV sync (docs/BEHAVIOUR.md#backup-and-sync): push uploads the
// configuration as the encrypted export file (keys included) under the
// configured URL, pull imports it. The last sync keeps the hash of the
// local configuration it left and of the remote file's bytes; a push
// whose remote file changed since, or a pull whose local configuration
// changed since, would overwrite that change, so it is a conflict (409)
// until the caller says which side wins.

const (
	// syncTimeout bounds one push or pull against the server.
	syncTimeout = 60 * time.Second
	// syncHold is how long a push or pull holds the sync (store.LockSync)
	// should the process die before it lets go.
	syncHold = 2 * syncTimeout
)

// The sides a conflict is settled for (SyncRun.Force).
const (
	forceLocal  = "local"
	forceRemote = "remote"
)

// SyncSettings is GET and PUT /api/sync: where to sync and the last sync.
// The password and passphrase are never shown.
type SyncSettings struct {
	URL           string `json:"url"`
	User          string `json:"user"`
	HasPassword   bool   `json:"has_password"`
	HasPassphrase bool   `json:"has_passphrase"`
	// File is the file's name under the URL.
	File       string     `json:"file"`
	LastSync   *time.Time `json:"last_sync"`   // null: never
	LastAction string     `json:"last_action"` // push | pull | ""
	// Warning says what the URL risks ("" when nothing): plain http to
	// another machine sends the password unencrypted.
	Warning string `json:"warning"`
}

// SyncInput is the body of PUT /api/sync: the fields given change, the
// rest keep their values; "" clears one (an empty url turns sync off).
type SyncInput struct {
	URL        *string `json:"url"`
	User       *string `json:"user"`
	Password   *string `json:"password"`
	Passphrase *string `json:"passphrase"`
}

// SyncRun is the body of POST /api/sync/push and /pull (it may be empty).
type SyncRun struct {
	// Force settles a conflict: "local" pushes this computer's
	// configuration, "remote" pulls the remote one, whichever route is
	// called.
	Force string `json:"force"`
}

// SyncResult answers a push or a pull: 200 when done, 409 for a conflict.
type SyncResult struct {
	OK       bool `json:"ok"`
	Conflict bool `json:"conflict"`
	// Action is what was done: push, pull, or none when both sides
	// already held the same configuration.
	Action   string     `json:"action"`
	LastSync *time.Time `json:"last_sync"`
	Message  string     `json:"message"`
	// Local and Remote describe both sides of a conflict.
	Local  *SyncSide `json:"local,omitempty"`
	Remote *SyncSide `json:"remote,omitempty"`
	// Import is what a pull changed here.
	Import *ImportReport `json:"import,omitempty"`
}

// SyncSide is one side of a conflict.
type SyncSide struct {
	// Changed says whether this side changed since the last sync.
	Changed bool `json:"changed"`
	// ModifiedAt is, for the remote file, when the server last saw it
	// written; locally, the newest endpoint edit since the last sync (null
	// when the change left no time: a removal or a setting).
	ModifiedAt *time.Time `json:"modified_at"`
	// ExportedAt is when ccmesh wrote the remote file (null locally, or
	// when the file does not open).
	ExportedAt *time.Time `json:"exported_at"`
	Endpoints  int        `json:"endpoints"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (a *App) syncSettings(ctx context.Context) (SyncSettings, error) {
	cfg, state, err := a.db.GetSync(ctx)
	if err != nil {
		return SyncSettings{}, err
	}
	return SyncSettings{URL: cfg.URL, User: cfg.User, HasPassword: cfg.Password != "", HasPassphrase: cfg.Passphrase != "",
		File: syncFileName, LastSync: timePtr(state.At), LastAction: state.Action, Warning: syncURLWarning(cfg.URL)}, nil
}

func (a *App) getSync(w http.ResponseWriter, r *http.Request) error {
	s, err := a.syncSettings(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s)
	return nil
}

func (a *App) putSync(w http.ResponseWriter, r *http.Request) error {
	var in SyncInput
	if err := decodeJSON(r, &in); err != nil {
		return err
	}
	if in.URL != nil {
		u := strings.TrimSpace(*in.URL)
		if err := checkSyncURL(u); err != nil {
			return err
		}
		in.URL = &u
	}
	if in.Passphrase != nil && *in.Passphrase != "" {
		if err := backup.CheckNewPassphrase("passphrase", *in.Passphrase); err != nil {
			return err
		}
	}
	err := a.holdingSync(r.Context(), func() error {
		cfg, _, err := a.db.GetSync(r.Context())
		if err != nil {
			return err
		}
		was := cfg
		set := func(dst *string, src *string) {
			if src != nil {
				*dst = *src
			}
		}
		set(&cfg.URL, in.URL)
		set(&cfg.User, in.User)
		set(&cfg.Password, in.Password)
		set(&cfg.Passphrase, in.Passphrase)
		// Another place, or another account: the last sync was not with it.
		return a.db.PutSyncConfig(r.Context(), cfg, cfg.URL != was.URL || cfg.User != was.User)
	})
	if err != nil {
		return err
	}
	return a.getSync(w, r)
}

// checkSyncURL checks a sync URL by base_url's rule (store.CheckHTTPURL):
// an http(s) folder address without credentials, query or fragment, or ""
// for no sync.
func checkSyncURL(s string) *apiError {
	if s == "" {
		return nil
	}
	const want = "url must be the http:// or https:// address of a WebDAV folder, e.g. " +
		"https://cloud.example/remote.php/dav/files/me/ccmesh/"
	msg := map[store.URLFault]string{
		store.URLNotUTF8:   "url is not valid UTF-8 text; type or paste it again",
		store.URLMalformed: want,
		store.URLBadPort:   "url's port must be a number from 1 to 65535",
		store.URLNotHTTP:   want,
		store.URLNoHost:    "url has no host name; " + want,
		store.URLQuery:     "url must be a folder address without ? or #",
		store.URLUserInfo:  "put the user name and password in their own fields, not in the URL (which is shown)",
	}
	if f := store.CheckHTTPURL(s); f != store.URLOK {
		return rejected("invalid_sync_url", "url", "%s", msg[f])
	}
	return nil
}

// syncURLWarning says what a valid sync URL risks, "" when nothing: plain
// http to another machine sends the password (Basic auth) unencrypted.
func syncURLWarning(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || proxy.IsLoopbackHost(u.Hostname()) {
		return ""
	}
	return fmt.Sprintf("this URL is plain http:// to %s: the WebDAV user name and password cross the network "+
		"unencrypted (the sync file itself stays encrypted); use https:// unless you trust every network between", u.Hostname())
}

// holdingSync runs fn while holding the sync (one push, pull or change of
// the sync settings at a time).
func (a *App) holdingSync(ctx context.Context, fn func() error) error {
	ok, err := a.db.LockSync(ctx, time.Now(), syncHold)
	if err != nil {
		return err
	}
	if !ok {
		return &apiError{Status: http.StatusConflict, Code: "sync_busy",
			Message: "another push or pull is running; try again when it has finished"}
	}
	defer func() {
		if err := a.db.UnlockSync(context.WithoutCancel(ctx)); err != nil {
			a.log.Error().Err(err).Str(logcode.Field, logcode.SyncNotEnded).Msg("could not end the sync; it ends by itself within " + syncHold.String())
		}
	}()
	return fn()
}

// syncHandler answers POST /api/sync/push (dir "push") and /pull ("pull").
func (a *App) syncHandler(dir string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := readBody(r)
		if err != nil {
			return err
		}
		var run SyncRun
		if len(bytes.TrimSpace(body)) > 0 {
			if err := decodeBody(body, &run); err != nil {
				return err
			}
		}
		switch run.Force {
		case "", forceLocal, forceRemote:
		default:
			return errBadRequest("bad_force", "force", `force must be "local" (this computer's configuration wins) or "remote" (the remote file's wins), not %q`, run.Force)
		}
		var res *SyncResult
		err = a.holdingSync(r.Context(), func() error {
			var err error
			res, err = a.runSync(r.Context(), dir, run.Force)
			return err
		})
		if err != nil {
			return err
		}
		status := http.StatusOK
		if res.Conflict {
			status = http.StatusConflict
		}
		writeJSON(w, status, res)
		return nil
	}
}

// runSync pushes or pulls; force settles a conflict, and picks the
// direction. The caller holds the sync.
func (a *App) runSync(ctx context.Context, dir, force string) (*SyncResult, error) {
	cfg, state, err := a.db.GetSync(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.URL == "" {
		return nil, rejected("sync_not_configured", "url", "set the WebDAV folder's URL first")
	}
	if cfg.Passphrase == "" {
		return nil, rejected("sync_no_passphrase", "passphrase", "set a passphrase first: the sync file holds your keys, so it is encrypted with it")
	}
	switch force {
	case forceLocal:
		dir = "push"
	case forceRemote:
		dir = "pull"
	}
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	d := newDAV(ctx, cfg)
	defer d.close()
	remote, err := d.fetch()
	if err != nil {
		return nil, err
	}
	s := syncRun{a: a, d: d, cfg: cfg, last: state, remote: remote, forced: force != ""}
	if dir == "push" {
		return s.push(ctx)
	}
	return s.pull(ctx)
}

// syncRun is one push or pull under way.
type syncRun struct {
	a      *App
	d      *davClient
	cfg    store.SyncConfig
	last   store.SyncState
	remote *davFile // nil: no file yet
	forced bool
}

func bytesHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// localChanged says whether st differs from what the last sync left. A
// data dir that never synced has changed if it has an endpoint.
func (s *syncRun) localChanged(st *State, hash string) bool {
	if s.last.LocalHash == "" {
		return len(st.Endpoints) > 0
	}
	return hash != s.last.LocalHash
}

// remoteChanged says whether the remote file differs from what the last
// sync left (any file does when there was none).
func (s *syncRun) remoteChanged() bool {
	return s.remote != nil && bytesHash(s.remote.Data) != s.last.RemoteHash
}

// openRemote decrypts and parses the remote file, with errors that say it
// is the sync file.
func (s *syncRun) openRemote(ctx context.Context) (*backupFile, backup.Doc[Settings], error) {
	plain, _, err := openFile(ctx, s.remote.Data, s.cfg.Passphrase)
	var f *backupFile
	if err == nil {
		f, err = parseBackup(plain)
	}
	if ae, ok := apiErrorOf(err); ok {
		e := *ae
		switch e.Code {
		case codeBadPassphrase:
			e.Message = fmt.Sprintf("the sync file at %s does not open with the saved passphrase: set the passphrase "+
				"the other computers use; nothing was changed", s.cfg.URL)
		case codeCorruptFile:
			e.Message = fmt.Sprintf("the sync file at %s: %s; push from a computer whose configuration you want "+
				"to replace it", s.cfg.URL, ae.Message)
		default:
			e.Message = "the sync file at " + s.cfg.URL + ": " + e.Message
		}
		return nil, backup.Doc[Settings]{}, &e
	}
	if err != nil {
		return nil, backup.Doc[Settings]{}, err
	}
	f.encrypted = true
	var doc backup.Doc[Settings]
	if err := json.Unmarshal(plain, &doc); err != nil { // parseBackup has read it
		return nil, backup.Doc[Settings]{}, err
	}
	return f, doc, nil
}

// done records what the sync left and answers it.
func (s *syncRun) done(ctx context.Context, action, localHash string, remote *davFile) (*SyncResult, error) {
	st := store.SyncState{At: time.Now().UTC(), Action: action, LocalHash: localHash,
		RemoteHash: bytesHash(remote.Data), RemoteETag: remote.ETag, RemoteModified: remote.Modified}
	if action == "none" {
		st.Action = s.last.Action
	}
	if err := s.a.db.PutSyncState(ctx, st); err != nil {
		return nil, err
	}
	msg := map[string]string{
		"push": "pushed this computer's configuration to " + s.cfg.URL,
		"pull": "pulled the configuration from " + s.cfg.URL,
		"none": "already in sync: both sides hold the same configuration",
	}[action]
	return &SyncResult{OK: true, Action: action, LastSync: timePtr(st.At), Message: msg}, nil
}

// conflict answers a sync that would overwrite a change.
func (s *syncRun) conflict(st *State, localChanged bool, doc *backup.Doc[Settings]) *SyncResult {
	local := &SyncSide{Changed: localChanged, Endpoints: len(st.Endpoints)}
	var newest time.Time
	for _, e := range st.Endpoints {
		if e.UpdatedAt.After(newest) && e.UpdatedAt.After(s.last.At) {
			newest = e.UpdatedAt
		}
	}
	local.ModifiedAt = timePtr(newest)
	remote := &SyncSide{Changed: s.remoteChanged()}
	if s.remote != nil { // nil: removed during a push
		remote.ModifiedAt = timePtr(s.remote.Modified)
	}
	if doc != nil {
		remote.ExportedAt, remote.Endpoints = timePtr(doc.ExportedAt), len(doc.Endpoints)
	}
	var msg string
	switch {
	case local.Changed && remote.Changed:
		msg = "both this computer's configuration and the remote file changed since the last sync"
	case remote.Changed:
		msg = "the remote file changed since the last sync: pushing would overwrite that change"
	default:
		msg = "this computer's configuration changed since the last sync: pulling would overwrite that change"
	}
	return &SyncResult{Conflict: true, LastSync: timePtr(s.last.At), Local: local, Remote: remote,
		Message: msg + `; choose which side wins ("force": "local" or "remote")`}
}

// push uploads the local configuration unless the remote file changed
// since the last sync to something else.
func (s *syncRun) push(ctx context.Context) (*SyncResult, error) {
	st := s.a.state.Load()
	local := backup.ConfigHash(backupConfig(st))
	if s.remote != nil && !s.forced {
		if s.remoteChanged() {
			_, doc, err := s.openRemote(ctx)
			if err != nil {
				return nil, withHint(err, `; to replace it with this computer's configuration, push with "force": "local"`)
			}
			if doc.Hash() != local {
				return s.conflict(st, s.localChanged(st, local), &doc), nil
			}
			return s.done(ctx, "none", local, s.remote)
		}
		if !s.localChanged(st, local) {
			return s.done(ctx, "none", local, s.remote)
		}
	}
	plain, err := backup.DocOf(backupConfig(st), true, time.Now().UTC()).FileBytes()
	if err != nil {
		return nil, err
	}
	data, err := backup.Seal(ctx, plain, s.cfg.Passphrase)
	if err != nil {
		return nil, err
	}
	if err := s.d.upload(data, s.remote); errors.Is(err, errRemoteChanged) {
		return s.changedDuringPush(ctx, st, local)
	} else if err != nil {
		return nil, err
	}
	pushed := &davFile{Data: data}
	pushed.ETag, pushed.Modified = s.d.stat()
	s.a.log.Info().Str("url", s.cfg.URL).Msg("sync: pushed")
	return s.done(ctx, "push", local, pushed)
}

// changedDuringPush answers a push whose upload found the remote file
// changed since it was read (another computer pushed meanwhile): the
// conflict, with the remote side as it is now.
func (s *syncRun) changedDuringPush(ctx context.Context, st *State, local string) (*SyncResult, error) {
	remote, err := s.d.fetch()
	if err != nil {
		return nil, err
	}
	s.remote = remote
	var doc *backup.Doc[Settings]
	if remote != nil {
		if _, d, err := s.openRemote(ctx); err == nil {
			doc = &d
		}
	}
	res := s.conflict(st, s.localChanged(st, local), doc)
	res.Remote.Changed = true
	res.Message = "the remote file changed while this push was under way: pushing would overwrite that change; " +
		`choose which side wins ("force": "local" or "remote")`
	return res, nil
}

// errSyncConflict ends a pull's write when it finds a conflict.
var errSyncConflict = errors.New("sync conflict")

// pull imports the remote file unless the local configuration changed
// since the last sync to something else.
func (s *syncRun) pull(ctx context.Context) (*SyncResult, error) {
	if s.remote == nil {
		return nil, rejected("sync_remote_missing", "url", "there is no %s at %s yet: push from the computer "+
			"whose configuration you want first", syncFileName, s.cfg.URL)
	}
	f, doc, err := s.openRemote(ctx)
	if err != nil {
		return nil, err
	}
	var res *SyncResult
	var settingsChanged bool
	err = s.a.mutate(ctx, func(ctx context.Context) error {
		// Decided inside the write lock: no edit can come between the
		// check and the import.
		st := s.a.state.Load()
		local := backup.ConfigHash(backupConfig(st))
		if doc.Hash() == local {
			var err error
			res, err = s.done(ctx, "none", local, s.remote)
			return err
		}
		if !s.forced && s.localChanged(st, local) {
			res = s.conflict(st, true, &doc)
			return errSyncConflict
		}
		// A sync file carries keys; one that does not moves none to
		// another host (nobody is there to confirm it).
		p, err := s.a.planImport(st, f, false)
		if err != nil {
			return err
		}
		if err := s.a.applyImport(ctx, st, p); err != nil {
			return err
		}
		if err := s.a.reload(ctx); err != nil {
			return err
		}
		if res, err = s.done(ctx, "pull", backup.ConfigHash(backupConfig(s.a.state.Load())), s.remote); err != nil {
			return err
		}
		res.Import = &p.report
		settingsChanged = len(p.report.Settings) > 0
		return nil
	})
	switch {
	case errors.Is(err, errSyncConflict):
		return res, nil
	case err != nil:
		return nil, err
	}
	if settingsChanged {
		s.a.events.Publish("settings", s.a.state.Load().Settings)
	}
	if res.Action == "pull" {
		s.a.log.Info().Str("url", s.cfg.URL).Msg("sync: pulled")
	}
	return res, nil
}

// withHint adds hint to an admin API error's message.
func withHint(err error, hint string) error {
	ae, ok := apiErrorOf(err)
	if !ok {
		return err
	}
	e := *ae
	e.Message = strings.TrimSuffix(e.Message, ".") + hint
	return &e
}
