package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"time"

	"github.com/ccmesh/ccmesh/app/desktop"
	"github.com/ccmesh/ccmesh/app/platform"
	"github.com/ccmesh/ccmesh/frontend"
)

// The window and the tray are app/desktop's (build tag desktop; without it
// desktop.Run says so); the app takes the lock, serves, and is the shell's
// Host.

// DesktopAvailable: this build has the window and the tray.
const DesktopAvailable = desktop.Available

// RunDesktop runs ccmesh with its window and tray until Quit or ctx ends.
// A second launch on the same data dir shows the first one's window and
// returns nil; it opens no database and binds no port.
func RunDesktop(ctx context.Context, opts Options) error {
	if !desktop.Available {
		return desktop.Run(ctx, desktop.Config{}, nil) // says why
	}
	inst, running, err := platform.AcquireInstance(opts.DataDir)
	if errors.Is(err, platform.ErrAlreadyRunning) {
		return showRunning(ctx, opts, running)
	}
	if err != nil {
		return err
	}
	defer inst.Release()

	dist, err := fs.Sub(frontend.Dist, "dist")
	if err != nil {
		return fmt.Errorf("the UI's files: %w", err)
	}
	a, ln, err := startServing(ctx, opts, inst)
	if err != nil {
		return err
	}
	serveCtx, stopServe := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- a.Serve(serveCtx, ln) }()

	err = desktop.Run(ctx, desktop.Config{Assets: dist, Handler: a.TrustedHandler(), Minimized: opts.Minimized, Log: a.log},
		desktopHost{a})
	stopServe()
	return errors.Join(err, <-served, a.Close(context.Background()))
}

// desktopHost is the App as the window and the tray see it.
type desktopHost struct{ *App }

func (h desktopHost) Watch() (<-chan struct{}, func()) { return h.events.Watch() }

func (h desktopHost) Meta(ctx context.Context, key string) (string, bool, error) {
	return h.db.GetMeta(ctx, key)
}

func (h desktopHost) SetMeta(ctx context.Context, key, value string) error {
	return h.db.SetMeta(ctx, key, value)
}

func (h desktopHost) SetWindow(show func())                        { h.showWindow.Store(&show) }
func (h desktopHost) SetNotifier(n func(title, body string) error) { h.notifier.Store(&n) }

// showRunning asks the instance that holds the data dir to show its window.
func showRunning(ctx context.Context, opts Options, addr string) error {
	token, err := loadAdminToken(opts.DataDir, opts.AdminToken)
	if err != nil {
		return err
	}
	if addr == "" {
		return fmt.Errorf("%w (data dir %s), and it has not said where it listens yet", platform.ErrAlreadyRunning, opts.DataDir)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/api/window/show", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w at %s, but it did not answer: %v", platform.ErrAlreadyRunning, addr, err)
	}
	resp.Body.Close()
	fmt.Printf("ccmesh is already running at http://%s; showed its window.\n", addr)
	return nil
}
