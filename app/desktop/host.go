// Package desktop is ccmesh's desktop shell: the Wails window, the tray,
// desktop notifications (files with the build tag desktop; stub.go is the
// plain build's twin), the tray's look (view.go) and the latest breaker
// changes the tray shows (recent.go, read from the audit trail through
// AuditTrail) — those two untagged, so they are tested in every build. It
// knows nothing of the app: what it needs of it is Host, and the app
// gathers the tray's facts for View.
package desktop

import (
	"context"
	"io/fs"
	"net/http"
	"time"

	"github.com/rs/zerolog"
)

// Host is what the window and the tray need from the app.
type Host interface {
	// TrayView is what the tray shows now.
	TrayView() TrayView
	// Watch signals each change that may show in the tray; stop ends it.
	Watch() (changed <-chan struct{}, stop func())
	Paused() bool
	SetPaused(on bool)
	PauseFor(d time.Duration)
	// ExportLines are the shell lines the tray copies.
	ExportLines() string
	// Meta and SetMeta keep a value of the shell's (the window's place)
	// in the app's database.
	Meta(ctx context.Context, key string) (value string, ok bool, err error)
	SetMeta(ctx context.Context, key, value string) error
	// SetWindow and SetNotifier hand the app the window's show and the
	// notifier, for a second launch and for breaker and balance notices.
	SetWindow(show func())
	SetNotifier(notify func(title, body string) error)
}

// Config is the window's.
type Config struct {
	Assets    fs.FS        // the UI
	Handler   http.Handler // the admin API without a token, reachable only from the window
	Minimized bool         // start in the tray, the window hidden
	Log       zerolog.Logger
}
