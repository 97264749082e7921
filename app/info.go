package app

import (
	"net/http"
	"time"
)

// Info is GET /api/info: what the header and the tray show.
type Info struct {
	Version  string `json:"version"`
	Listen   string `json:"listen"`
	ProxyURL string `json:"proxy_url"`
	DataDir  string `json:"data_dir"`
	Paused   bool   `json:"paused"`
	// PausedUntil is when a timed pause ends by itself (POST /api/pause
	// with minutes, the tray's "Pause for 15 minutes"); null when not
	// paused or paused until resumed (docs/BEHAVIOUR.md#pause).
	PausedUntil *time.Time `json:"paused_until"`
	Headless    bool       `json:"headless"`
	// Request log rows lost since start (docs/BEHAVIOUR.md#request-log):
	// refused because the writer's queue was full, and accepted but not
	// written (the process log says why, code LOG-001).
	LogRowsDropped uint64 `json:"log_rows_dropped"`
	LogRowsFailed  uint64 `json:"log_rows_failed"`
	// Captures left out since start because the writer's queue held too
	// many capture bytes (docs/BEHAVIOUR.md#capture-and-resend).
	CapturesDropped uint64 `json:"captures_dropped"`
}

// Version, Commit and Date are set at build time with
// -ldflags "-X github.com/ccmesh/ccmesh/app.Version=… -X …Commit=… -X …Date=…"
// (Makefile); `ccmesh --version` prints them.
var (
	Version = "dev"
	Commit  = "unknown"
	Date    = "unknown"
)

// VersionLine is what `ccmesh --version` prints.
func VersionLine() string {
	return "ccmesh " + Version + " (commit " + Commit + ", built " + Date + ")"
}

// Info describes the running instance.
func (a *App) Info() Info {
	p := a.pause.Now()
	var until *time.Time
	if !p.Until.IsZero() {
		until = &p.Until
	}
	return Info{
		Version:     Version,
		Listen:      a.opts.Listen,
		ProxyURL:    a.ProxyURL(),
		DataDir:     a.opts.DataDir,
		Paused:      p.On,
		PausedUntil: until,
		Headless:    a.opts.Headless,

		LogRowsDropped: a.logw.Dropped(),
		LogRowsFailed:  a.logw.Failed(),

		CapturesDropped: a.logw.CapturesDropped(),
	}
}

// ProxyURL is the base URL clients point at.
func (a *App) ProxyURL() string { return "http://" + a.opts.Listen }

func (a *App) getInfo(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, a.Info())
	return nil
}
