package app

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/ccmesh/ccmesh/app/backup"
	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/store"
)

// Export, import and sync are the package app/backup's
// (docs/BEHAVIOUR.md#backup-and-sync): its Service answers their routes,
// and reaches the app through backupHost.

// backups is the service of the export, import and sync routes.
func (a *App) backups() *backup.Service[Settings] {
	return backup.New(backupHost{a}, a.db, a.log, maxAdminBody)
}

// backupConfig is st's configuration as app/backup reads it.
func backupConfig(st *State) backup.Config[Settings] {
	return backup.Config[Settings]{Endpoints: st.Endpoints, Settings: st.Settings}
}

// backupHost is the app as app/backup needs it (backup.Host).
type backupHost struct{ a *App }

func (h backupHost) Config() backup.Config[Settings] { return backupConfig(h.a.state.Load()) }

func (h backupHost) Mutate(ctx context.Context, write func(context.Context) error) error {
	return h.a.mutate(ctx, write)
}

func (h backupHost) Reload(ctx context.Context) error { return h.a.reload(ctx) }

func (h backupHost) Removed(id int64) { h.a.breakers.Remove(id) }

func (h backupHost) Renewed(e store.Endpoint) {
	h.a.breakers.Get(e.ID).ForceClose()
	for _, k := range e.Keys {
		h.a.keyBreakers.Get(k.ID).ForceClose()
	}
}

func (h backupHost) SettingsChanged() { h.a.events.Publish("settings", h.a.state.Load().Settings) }

func (h backupHost) FileSettings(doc json.RawMessage) (Settings, error) {
	return mergeSettings(DefaultSettings(), doc)
}

func (h backupHost) CheckSettings(s Settings, targets config.Targets) error {
	if err := validateSettings(s, h.a.opts.Listen); err != nil {
		return err
	}
	_, err := validateRules(s.Rules, targets)
	return err
}

func (h backupHost) ReadBody(r *http.Request) ([]byte, error) { return readBody(r) }

func (h backupHost) WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

// Token, AtLogin and Local are the settings as app/backup sees them
// (backup.Settings): the client token is a key, start at login this
// machine's.
func (s Settings) Token() string { return s.ClientToken }

func (s Settings) AtLogin() bool { return s.StartAtLogin }

func (s Settings) Local(token string, atLogin bool) Settings {
	s = s.clone()
	s.ClientToken, s.StartAtLogin = token, atLogin
	return s
}
