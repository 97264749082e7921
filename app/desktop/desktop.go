//go:build desktop

package desktop

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"
)

// Available: this build has the window and the tray.
const Available = true

// desktop is the Wails window around the app. The window reaches the same
// admin API as the browser, through the asset server's handler.
type desktop struct {
	h     Host
	log   zerolog.Logger
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

// Run shows the window and the tray around the app h until Quit or ctx
// ends; the app serves meanwhile, and stops after Run returns.
func Run(ctx context.Context, cfg Config, h Host) error {
	quietWebKit()
	d := &desktop{h: h, log: cfg.Log, ready: make(chan struct{})}
	h.SetWindow(d.show)
	h.SetNotifier(notify)
	startTray(d)
	go func() {
		<-ctx.Done() // SIGINT/SIGTERM: quit through Wails like the tray does
		d.quit()
	}()

	g := d.loadGeometry()
	return wails.Run(&options.App{
		Title:             "ccmesh",
		Width:             g.W,
		Height:            g.H,
		MinWidth:          720,
		MinHeight:         480,
		HideWindowOnClose: true,
		StartHidden:       cfg.Minimized,
		AssetServer:       &assetserver.Options{Assets: cfg.Assets, Handler: cfg.Handler},
		OnStartup:         d.onStartup,
		OnBeforeClose:     d.onBeforeClose,
		Linux:             &linux.Options{ProgramName: "ccmesh", Icon: TrayIcon(HealthAll)},
	})
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
		if err := d.h.SetMeta(sctx, geometryKey, string(b)); err != nil {
			d.log.Warn().Err(err).Msg("could not save the window geometry")
		}
	}
	return false
}

func (d *desktop) loadGeometry() geometry {
	g := geometry{W: 1180, H: 800}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if s, ok, err := d.h.Meta(ctx, geometryKey); err == nil && ok {
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
		d.log.Warn().Err(err).Msg("could not copy to the clipboard")
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
