package app

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/ccmesh/ccmesh/app/update"
)

// The opt-in update check (docs/BEHAVIOUR.md#update-check): the setting,
// its schedule, GET /api/update and POST /api/update/check. The feed, the
// version compare and the schedule are the package app/update.

// UpdateStatus is GET /api/update, POST /api/update/check and the "update"
// event.
type UpdateStatus struct {
	Enabled bool `json:"enabled"` // the update_check setting
	// CheckedAt is when the feed was last read (null: not since start, or off).
	CheckedAt *time.Time `json:"checked_at"`
	Current   string     `json:"current"` // the running version, as --version says it
	// Latest is the feed's newest release that is neither a draft nor a
	// prerelease ("" when it lists none), URL its page and Notes the first
	// line of its notes.
	Latest string `json:"latest"`
	// Available: Latest is a later version than Current. A running
	// version that is not semver (a dev build) never has one.
	Available bool   `json:"available"`
	URL       string `json:"url"`
	Notes     string `json:"notes"`
	// Error is why the last check failed ("" when it did not); Latest
	// stays what an earlier check found.
	Error string `json:"error"`
}

// updater holds the last check's outcome and runs the schedule.
type updater struct {
	a        *App
	client   *update.Client
	schedule *update.Schedule

	mu   sync.Mutex
	last UpdateStatus // Enabled, Current and Available are filled in by status
}

func newUpdater(a *App, rt http.RoundTripper) *updater {
	u := &updater{a: a, client: update.NewClient(rt, "ccmesh/"+Version)}
	u.schedule = update.NewSchedule(func(ctx context.Context) { u.check(ctx) })
	return u
}

// configure follows a new snapshot: no timer at all while the check is off.
func (u *updater) configure(st *State) {
	u.mu.Lock()
	was := u.last.Enabled
	u.last.Enabled = st.Settings.UpdateCheck
	u.mu.Unlock()
	u.schedule.Set(st.Settings.UpdateCheck)
	if was != st.Settings.UpdateCheck {
		u.a.events.Publish("update", u.status())
	}
}

// status is the current UpdateStatus; off, it says only so and the version.
func (u *updater) status() UpdateStatus {
	u.mu.Lock()
	s := u.last
	u.mu.Unlock()
	if !s.Enabled {
		s = UpdateStatus{}
	}
	s.Current = Version
	if cur, ok := update.Running(Version); ok && s.Latest != "" {
		s.Available = update.Newer(s.Latest, cur)
	}
	return s
}

// check reads the feed now, if the check is on, and tells the UI and the
// tray what it found.
func (u *updater) check(ctx context.Context) UpdateStatus {
	s := u.a.state.Load().Settings
	if !s.UpdateCheck {
		return u.status()
	}
	latest, found, err := u.client.Check(ctx, s.UpdateFeedURL)
	now := time.Now().UTC()
	u.mu.Lock()
	u.last.CheckedAt, u.last.Error = &now, ""
	switch {
	case err != nil:
		u.last.Error = err.Error()
		u.a.log.Warn().Err(err).Msg("update check failed")
	case found:
		u.last.Latest, u.last.URL, u.last.Notes = latest.Version, latest.URL, latest.Notes
	default:
		u.last.Latest, u.last.URL, u.last.Notes = "", "", ""
	}
	u.mu.Unlock()
	st := u.status()
	u.a.events.Publish("update", st)
	return st
}

func (a *App) getUpdate(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, a.upd.status())
	return nil
}

func (a *App) checkUpdate(w http.ResponseWriter, r *http.Request) error {
	if !a.state.Load().Settings.UpdateCheck {
		return &apiError{Status: http.StatusConflict, Code: "update_check_off",
			Message: "the update check is off: turn update_check on in the settings first"}
	}
	writeJSON(w, http.StatusOK, a.upd.check(r.Context()))
	return nil
}

// validUpdateFeed checks the update_feed_url setting: https, or http to a
// loopback address only (a feed read in the clear could point the UI's
// link anywhere), and no credentials in it, as none is ever sent.
func validUpdateFeed(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return invalid("update_feed_url", "update_feed_url must be an https URL (the default is %s), not %q", update.DefaultFeed, s)
	}
	if u.User != nil {
		return invalid("update_feed_url", "update_feed_url must not carry a user or password: the check sends no credentials")
	}
	if u.Scheme == "http" {
		if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return invalid("update_feed_url", "update_feed_url must be https unless it is a loopback address, not %q", s)
		}
	}
	return nil
}
