package app

import (
	"net"
	"net/http"
	"net/url"

	"github.com/ccmesh/ccmesh/app/update"
)

// The opt-in update check (docs/BEHAVIOUR.md#update-check): the setting's
// check and the routes GET /api/update and POST /api/update/check. The
// checker and its schedule, the feed and the version compare are the
// package app/update.

// UpdateStatus is GET /api/update, POST /api/update/check and the "update"
// event (update.UpdateStatus).
type UpdateStatus = update.UpdateStatus

// updateHost is the app as the checker sees it (update.Host).
type updateHost struct{ a *App }

func (h updateHost) Setting() (bool, string) {
	s := h.a.state.Load().Settings
	return s.UpdateCheck, s.UpdateFeedURL
}

func (h updateHost) Version() string { return Version }

func (h updateHost) Changed(s UpdateStatus) { h.a.events.Publish("update", s) }

func newUpdater(a *App, rt http.RoundTripper) *update.Checker {
	return update.NewChecker(updateHost{a}, a.log, rt)
}

func (a *App) getUpdate(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, a.upd.Status())
	return nil
}

func (a *App) checkUpdate(w http.ResponseWriter, r *http.Request) error {
	if !a.state.Load().Settings.UpdateCheck {
		return &apiError{Status: http.StatusConflict, Code: "update_check_off",
			Message: "the update check is off: turn update_check on in the settings first"}
	}
	writeJSON(w, http.StatusOK, a.upd.Check(r.Context()))
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
