package update

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

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

// Host is what the checker needs from the app.
type Host interface {
	// Setting is the update_check setting and the feed's URL, now.
	Setting() (on bool, feedURL string)
	// Version is the running version, as --version says it.
	Version() string
	// Changed is told the status after a check or a change of the setting.
	Changed(s UpdateStatus)
}

// Checker holds the last check's outcome and runs the schedule.
type Checker struct {
	host     Host
	log      zerolog.Logger
	client   *Client
	schedule *Schedule

	mu   sync.Mutex
	last UpdateStatus // Enabled, Current and Available are filled in by Status
}

// NewChecker returns a checker that reads the feed through rt.
func NewChecker(host Host, log zerolog.Logger, rt http.RoundTripper) *Checker {
	c := &Checker{host: host, log: log, client: NewClient(rt, "ccmesh/"+host.Version())}
	c.schedule = NewSchedule(func(ctx context.Context) { c.Check(ctx) })
	return c
}

// Schedule is the checker's daily schedule, which the app runs.
func (c *Checker) Schedule() *Schedule { return c.schedule }

// Configure follows the update_check setting: no timer at all while the
// check is off.
func (c *Checker) Configure(on bool) {
	c.mu.Lock()
	was := c.last.Enabled
	c.last.Enabled = on
	c.mu.Unlock()
	c.schedule.Set(on)
	if was != on {
		c.host.Changed(c.Status())
	}
}

// Status is the current UpdateStatus; off, it says only so and the version.
func (c *Checker) Status() UpdateStatus {
	c.mu.Lock()
	s := c.last
	c.mu.Unlock()
	if !s.Enabled {
		s = UpdateStatus{}
	}
	s.Current = c.host.Version()
	if cur, ok := Running(s.Current); ok && s.Latest != "" {
		s.Available = Newer(s.Latest, cur)
	}
	return s
}

// Check reads the feed now, if the check is on, and tells the host what
// it found.
func (c *Checker) Check(ctx context.Context) UpdateStatus {
	on, feed := c.host.Setting()
	if !on {
		return c.Status()
	}
	latest, found, err := c.client.Check(ctx, feed)
	now := time.Now().UTC()
	c.mu.Lock()
	c.last.CheckedAt, c.last.Error = &now, ""
	switch {
	case err != nil:
		c.last.Error = err.Error()
		c.log.Warn().Err(err).Msg("update check failed")
	case found:
		c.last.Latest, c.last.URL, c.last.Notes = latest.Version, latest.URL, latest.Notes
	default:
		c.last.Latest, c.last.URL, c.last.Notes = "", "", ""
	}
	c.mu.Unlock()
	st := c.Status()
	c.host.Changed(st)
	return st
}
