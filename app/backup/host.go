package backup

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/store"
)

// Config is the configuration the app serves: one snapshot's endpoints, in
// list order, and its settings.
type Config[S any] struct {
	Endpoints []store.Endpoint
	Settings  S
}

// Settings is what export, import and sync ask of the app's settings
// document S (app.Settings), which they otherwise carry as it is: the
// client token is a key, and start at login is this machine's, not the
// configuration's.
type Settings[S any] interface {
	// Token is the client token ("" when none).
	Token() string
	// AtLogin is whether ccmesh starts at login here.
	AtLogin() bool
	// Local is a copy of the settings, with breaker profiles of its own,
	// whose client token and start at login are the ones given.
	Local(token string, atLogin bool) S
}

// Host is the app as export, import and sync need it.
type Host[S any] interface {
	// Config is the configuration served now.
	Config() Config[S]
	// Mutate runs write holding the app's write lock, then serves what is
	// stored and tells the UI (the admin API's one write path).
	Mutate(ctx context.Context, write func(ctx context.Context) error) error
	// Reload serves what is stored now; called inside Mutate.
	Reload(ctx context.Context) error
	// Removed lets go of what the app keeps for an endpoint an import
	// removed (its breaker).
	Removed(id int64)
	// Renewed closes the breakers of e and of its keys: an import gave it
	// a new key or URL, a new upstream whose old failures say nothing about
	// it (docs/BEHAVIOUR.md#endpoints).
	Renewed(e store.Endpoint)
	// SettingsChanged tells the UI that the served settings changed.
	SettingsChanged()
	// FileSettings lays a file's settings document over the defaults, as
	// PUT /api/settings lays a body over the settings: a setting the file
	// predates gets its default. A refusal is an *apierr.Error.
	FileSettings(doc json.RawMessage) (S, error)
	// CheckSettings checks s as PUT /api/settings does, its routing rules
	// against targets.
	CheckSettings(s S, targets config.Targets) error
	// ReadBody reads an admin API request's body (under the API's cap and
	// deadline); WriteJSON answers one.
	ReadBody(r *http.Request) ([]byte, error)
	WriteJSON(w http.ResponseWriter, status int, v any)
}

// Store is the database as export, import and sync use it (*store.DB).
type Store interface {
	Replace(ctx context.Context, endpoints []store.EndpointPatch, settings json.RawMessage) ([]int64, error)
	GetSync(ctx context.Context) (store.SyncConfig, store.SyncState, error)
	PutSyncConfig(ctx context.Context, c store.SyncConfig, reset bool) error
	PutSyncState(ctx context.Context, s store.SyncState) error
	LockSync(ctx context.Context, now time.Time, hold time.Duration) (ok bool, err error)
	UnlockSync(ctx context.Context) error
}

// Service answers the admin API's export, import and sync routes for the
// app h, whose settings document is S.
type Service[S Settings[S]] struct {
	h       Host[S]
	db      Store
	log     zerolog.Logger
	maxBody int // the admin API's cap on a request body: an import's file
}

// New is the service of h over db; maxBody is the admin API's cap on a
// request body, which bounds a file read (an import's, or the sync's).
func New[S Settings[S]](h Host[S], db Store, log zerolog.Logger, maxBody int) *Service[S] {
	return &Service[S]{h: h, db: db, log: log, maxBody: maxBody}
}
