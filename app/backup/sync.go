package backup

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

	"github.com/ccmesh/ccmesh/app/apierr"
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

func (b *Service[S]) syncSettings(ctx context.Context) (SyncSettings, error) {
	cfg, state, err := b.db.GetSync(ctx)
	if err != nil {
		return SyncSettings{}, err
	}
	return SyncSettings{URL: cfg.URL, User: cfg.User, HasPassword: cfg.Password != "", HasPassphrase: cfg.Passphrase != "",
		File: FileName, LastSync: timePtr(state.At), LastAction: state.Action, Warning: syncURLWarning(cfg.URL)}, nil
}

// GetSync answers GET /api/sync.
func (b *Service[S]) GetSync(w http.ResponseWriter, r *http.Request) error {
	s, err := b.syncSettings(r.Context())
	if err != nil {
		return err
	}
	b.h.WriteJSON(w, http.StatusOK, s)
	return nil
}

// PutSync answers PUT /api/sync.
func (b *Service[S]) PutSync(w http.ResponseWriter, r *http.Request) error {
	var in SyncInput
	if err := b.decode(r, &in); err != nil {
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
		if err := checkNewPassphrase("passphrase", *in.Passphrase); err != nil {
			return err
		}
	}
	err := b.holdingSync(r.Context(), func() error {
		cfg, _, err := b.db.GetSync(r.Context())
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
		return b.db.PutSyncConfig(r.Context(), cfg, cfg.URL != was.URL || cfg.User != was.User)
	})
	if err != nil {
		return err
	}
	return b.GetSync(w, r)
}

// checkSyncURL checks a sync URL by base_url's rule (store.CheckHTTPURL):
// an http(s) folder address without credentials, query or fragment, or ""
// for no sync.
func checkSyncURL(s string) *apierr.Error {
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
		return apierr.Rejected("invalid_sync_url", "url", "%s", msg[f])
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
func (b *Service[S]) holdingSync(ctx context.Context, fn func() error) error {
	ok, err := b.db.LockSync(ctx, time.Now(), syncHold)
	if err != nil {
		return err
	}
	if !ok {
		return &apierr.Error{Status: http.StatusConflict, Code: "sync_busy",
			Message: "another push or pull is running; try again when it has finished"}
	}
	defer func() {
		if err := b.db.UnlockSync(context.WithoutCancel(ctx)); err != nil {
			b.log.Error().Err(err).Str(logcode.Field, logcode.SyncNotEnded).Msg("could not end the sync; it ends by itself within " + syncHold.String())
		}
	}()
	return fn()
}

// Push answers POST /api/sync/push.
func (b *Service[S]) Push(w http.ResponseWriter, r *http.Request) error { return b.sync(w, r, "push") }

// Pull answers POST /api/sync/pull.
func (b *Service[S]) Pull(w http.ResponseWriter, r *http.Request) error { return b.sync(w, r, "pull") }

// sync answers POST /api/sync/push (dir "push") and /pull ("pull").
func (b *Service[S]) sync(w http.ResponseWriter, r *http.Request, dir string) error {
	body, err := b.h.ReadBody(r)
	if err != nil {
		return err
	}
	var run SyncRun
	if len(bytes.TrimSpace(body)) > 0 {
		if err := apierr.Decode(body, &run); err != nil {
			return err
		}
	}
	switch run.Force {
	case "", forceLocal, forceRemote:
	default:
		return apierr.BadRequest("bad_force", "force", `force must be "local" (this computer's configuration wins) or "remote" (the remote file's wins), not %q`, run.Force)
	}
	var res *SyncResult
	err = b.holdingSync(r.Context(), func() error {
		var err error
		res, err = b.runSync(r.Context(), dir, run.Force)
		return err
	})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if res.Conflict {
		status = http.StatusConflict
	}
	b.h.WriteJSON(w, status, res)
	return nil
}

// runSync pushes or pulls; force settles a conflict, and picks the
// direction. The caller holds the sync.
func (b *Service[S]) runSync(ctx context.Context, dir, force string) (*SyncResult, error) {
	cfg, state, err := b.db.GetSync(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.URL == "" {
		return nil, apierr.Rejected("sync_not_configured", "url", "set the WebDAV folder's URL first")
	}
	if cfg.Passphrase == "" {
		return nil, apierr.Rejected("sync_no_passphrase", "passphrase", "set a passphrase first: the sync file holds your keys, so it is encrypted with it")
	}
	switch force {
	case forceLocal:
		dir = "push"
	case forceRemote:
		dir = "pull"
	}
	ctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	d := NewDAV(ctx, cfg, syncTimeout, int64(b.maxBody))
	defer d.Close()
	remote, err := d.Fetch()
	if err != nil {
		return nil, err
	}
	s := syncRun[S]{b: b, d: d, cfg: cfg, last: state, remote: remote, forced: force != ""}
	if dir == "push" {
		return s.push(ctx)
	}
	return s.pull(ctx)
}

// syncRun is one push or pull under way.
type syncRun[S Settings[S]] struct {
	b      *Service[S]
	d      *DAV
	cfg    store.SyncConfig
	last   store.SyncState
	remote *File // nil: no file yet
	forced bool
}

func bytesHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// localChanged says whether st differs from what the last sync left. A
// data dir that never synced has changed if it has an endpoint.
func (s *syncRun[S]) localChanged(st Config[S], hash string) bool {
	if s.last.LocalHash == "" {
		return len(st.Endpoints) > 0
	}
	return hash != s.last.LocalHash
}

// remoteChanged says whether the remote file differs from what the last
// sync left (any file does when there was none).
func (s *syncRun[S]) remoteChanged() bool {
	return s.remote != nil && bytesHash(s.remote.Data) != s.last.RemoteHash
}

// openRemote decrypts and parses the remote file, with errors that say it
// is the sync file.
func (s *syncRun[S]) openRemote(ctx context.Context) (*importFile[S], Doc[S], error) {
	plain, _, err := Open(ctx, s.remote.Data, s.cfg.Passphrase, s.b.maxBody)
	var f *importFile[S]
	if err == nil {
		f, err = s.b.parse(plain)
	}
	if ae, ok := errors.AsType[*apierr.Error](err); ok {
		e := *ae
		switch e.Code {
		case CodeBadPassphrase:
			e.Message = fmt.Sprintf("the sync file at %s does not open with the saved passphrase: set the passphrase "+
				"the other computers use; nothing was changed", s.cfg.URL)
		case CodeCorruptFile:
			e.Message = fmt.Sprintf("the sync file at %s: %s; push from a computer whose configuration you want "+
				"to replace it", s.cfg.URL, ae.Message)
		default:
			e.Message = "the sync file at " + s.cfg.URL + ": " + e.Message
		}
		return nil, Doc[S]{}, &e
	}
	if err != nil {
		return nil, Doc[S]{}, err
	}
	f.encrypted = true
	var doc Doc[S]
	if err := json.Unmarshal(plain, &doc); err != nil { // parse has read it
		return nil, Doc[S]{}, err
	}
	return f, doc, nil
}

// done records what the sync left and answers it.
func (s *syncRun[S]) done(ctx context.Context, action, localHash string, remote *File) (*SyncResult, error) {
	st := store.SyncState{At: time.Now().UTC(), Action: action, LocalHash: localHash,
		RemoteHash: bytesHash(remote.Data), RemoteETag: remote.ETag, RemoteModified: remote.Modified}
	if action == "none" {
		st.Action = s.last.Action
	}
	if err := s.b.db.PutSyncState(ctx, st); err != nil {
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
func (s *syncRun[S]) conflict(st Config[S], localChanged bool, doc *Doc[S]) *SyncResult {
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
func (s *syncRun[S]) push(ctx context.Context) (*SyncResult, error) {
	st := s.b.h.Config()
	local := ConfigHash(st)
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
	plain, err := DocOf(st, true, time.Now().UTC()).FileBytes()
	if err != nil {
		return nil, err
	}
	data, err := Seal(ctx, plain, s.cfg.Passphrase)
	if err != nil {
		return nil, err
	}
	if err := s.d.Upload(data, s.remote); errors.Is(err, ErrRemoteChanged) {
		return s.changedDuringPush(ctx, st, local)
	} else if err != nil {
		return nil, err
	}
	pushed := &File{Data: data}
	pushed.ETag, pushed.Modified = s.d.Stat()
	s.b.log.Info().Str("url", s.cfg.URL).Msg("sync: pushed")
	return s.done(ctx, "push", local, pushed)
}

// changedDuringPush answers a push whose upload found the remote file
// changed since it was read (another computer pushed meanwhile): the
// conflict, with the remote side as it is now.
func (s *syncRun[S]) changedDuringPush(ctx context.Context, st Config[S], local string) (*SyncResult, error) {
	remote, err := s.d.Fetch()
	if err != nil {
		return nil, err
	}
	s.remote = remote
	var doc *Doc[S]
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
func (s *syncRun[S]) pull(ctx context.Context) (*SyncResult, error) {
	if s.remote == nil {
		return nil, apierr.Rejected("sync_remote_missing", "url", "there is no %s at %s yet: push from the computer "+
			"whose configuration you want first", FileName, s.cfg.URL)
	}
	f, doc, err := s.openRemote(ctx)
	if err != nil {
		return nil, err
	}
	var res *SyncResult
	var settingsChanged bool
	err = s.b.h.Mutate(ctx, func(ctx context.Context) error {
		// Decided inside the write lock: no edit can come between the
		// check and the import.
		st := s.b.h.Config()
		local := ConfigHash(st)
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
		p, err := s.b.plan(st, f, false)
		if err != nil {
			return err
		}
		if err := s.b.apply(ctx, st, p); err != nil {
			return err
		}
		if err := s.b.h.Reload(ctx); err != nil {
			return err
		}
		if res, err = s.done(ctx, "pull", ConfigHash(s.b.h.Config()), s.remote); err != nil {
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
		s.b.h.SettingsChanged()
	}
	if res.Action == "pull" {
		s.b.log.Info().Str("url", s.cfg.URL).Msg("sync: pulled")
	}
	return res, nil
}

// withHint adds hint to an admin API error's message.
func withHint(err error, hint string) error {
	ae, ok := errors.AsType[*apierr.Error](err)
	if !ok {
		return err
	}
	e := *ae
	e.Message = strings.TrimSuffix(e.Message, ".") + hint
	return &e
}
