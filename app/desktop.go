//go:build desktop

package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/ccmesh/ccmesh/app/platform"
	"github.com/ccmesh/ccmesh/frontend"
)

// DesktopAvailable: this build has the window and the tray.
const DesktopAvailable = true

// desktop is the Wails window around the App. The window reaches the same
// admin API as the browser, through the asset server's handler.
type desktop struct {
	a     *App
	ready chan struct{} // closed when Wails has given us its context
	ctx   context.Context
	once  sync.Once
}

type geometry struct {
	W, H, X, Y int
	Placed     bool
}

const geometryKey = "window_geometry"

// webKitMemoryMonitor is WebKitGTK's switch for its memory pressure
// monitor: a thread of ours that reads /proc every few seconds for as long
// as the process lives, and was most of an idle ccmesh's own CPU with the
// window hidden (bench/NOTES.md, "Idle, desktop"). It exists to make a
// browser's many pages give memory back; ccmesh has one small page.
const webKitMemoryMonitor = "WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR"

// quietWebKit turns the monitor off unless the user chose otherwise
// (WEBKIT_DISABLE_MEMORY_PRESSURE_MONITOR=0 keeps it). WebKit reads the
// variable when it starts, so this runs before any window exists.
func quietWebKit() {
	if _, set := os.LookupEnv(webKitMemoryMonitor); !set {
		_ = os.Setenv(webKitMemoryMonitor, "1")
	}
}

// RunDesktop runs ccmesh with its window and tray until Quit or ctx ends.
// A second launch on the same data dir shows the first one's window and
// returns nil; it opens no database and binds no port.
func RunDesktop(ctx context.Context, opts Options) error {
	quietWebKit()
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
		return err
	}
	a, ln, err := startServing(ctx, opts, inst)
	if err != nil {
		return err
	}
	serveCtx, stopServe := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- a.Serve(serveCtx, ln) }()

	d := &desktop{a: a, ready: make(chan struct{})}
	a.setWindow(d.show)
	a.setNotifier(notify)
	startTray(d)
	go func() {
		<-ctx.Done() // SIGINT/SIGTERM: quit through Wails like the tray does
		d.quit()
	}()

	g := d.loadGeometry()
	err = wails.Run(&options.App{
		Title:             "ccmesh",
		Width:             g.W,
		Height:            g.H,
		MinWidth:          720,
		MinHeight:         480,
		HideWindowOnClose: true,
		StartHidden:       opts.Minimized,
		AssetServer:       &assetserver.Options{Assets: dist, Handler: a.TrustedHandler()},
		OnStartup:         d.onStartup,
		OnBeforeClose:     d.onBeforeClose,
		Linux:             &linux.Options{ProgramName: "ccmesh", Icon: TrayIcon(HealthAll)},
	})
	stopServe()
	return errors.Join(err, <-served, a.Close(context.Background()))
}

func (d *desktop) onStartup(ctx context.Context) {
	d.ctx = ctx
	close(d.ready)
	if g := d.loadGeometry(); g.Placed {
		wruntime.WindowSetPosition(ctx, g.X, g.Y)
	}
}

// onBeforeClose runs when the app quits (closing the window only hides
// it): remember where the window was.
func (d *desktop) onBeforeClose(ctx context.Context) bool {
	var g geometry
	g.W, g.H = wruntime.WindowGetSize(ctx)
	g.X, g.Y = wruntime.WindowGetPosition(ctx)
	g.Placed = true
	if b, err := json.Marshal(g); err == nil && g.W > 0 && g.H > 0 {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := d.a.db.SetMeta(sctx, geometryKey, string(b)); err != nil {
			d.a.log.Warn().Err(err).Msg("could not save the window geometry")
		}
	}
	return false
}

func (d *desktop) loadGeometry() geometry {
	g := geometry{W: 1180, H: 800}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if s, ok, err := d.a.db.GetMeta(ctx, geometryKey); err == nil && ok {
		var saved geometry
		if json.Unmarshal([]byte(s), &saved) == nil && saved.W >= 400 && saved.H >= 300 {
			g = saved
		}
	}
	return g
}

func (d *desktop) show() {
	<-d.ready
	wruntime.WindowShow(d.ctx)
	wruntime.WindowUnminimise(d.ctx)
}

// openURL opens url in the system's browser (the tray's update line: a
// release page, never a download).
func (d *desktop) openURL(url string) {
	<-d.ready
	wruntime.BrowserOpenURL(d.ctx, url)
}

func (d *desktop) copy(text string) {
	<-d.ready
	if err := wruntime.ClipboardSetText(d.ctx, text); err != nil {
		d.a.log.Warn().Err(err).Msg("could not copy to the clipboard")
	}
}

// quit stops through Wails (never systray.Quit, which would end Wails'
// GTK loop under it: docs/DESKTOP.md).
func (d *desktop) quit() {
	d.once.Do(func() {
		<-d.ready
		wruntime.Quit(d.ctx)
	})
}

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

func (a *App) setWindow(show func())                        { a.showWindow.Store(&show) }
func (a *App) setNotifier(n func(title, body string) error) { a.notifier.Store(&n) }
