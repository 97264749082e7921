//go:build desktop && !bindings

package app

import (
	"github.com/getlantern/systray"
)

// startTray registers the tray with GTK's loop, which Wails runs; systray
// must not run a loop of its own beside Wails (docs/DESKTOP.md).
func startTray(d *desktop) {
	t := &tray{d: d}
	systray.Register(t.onReady, nil)
}

type tray struct {
	d                         *desktop
	status, open, pause, copy *systray.MenuItem
	quit                      *systray.MenuItem
	last                      TrayView
}

func (t *tray) onReady() {
	v := t.d.a.TrayView()
	systray.SetIcon(TrayIcon(v.Overall))
	systray.SetTitle("ccmesh")
	systray.SetTooltip("ccmesh " + v.Status)
	t.open = systray.AddMenuItem(v.Labels.Open, "")
	t.status = systray.AddMenuItem(v.Status, "")
	t.status.Disable()
	systray.AddSeparator()
	t.pause = systray.AddMenuItem(v.Labels.Pause, "")
	t.copy = systray.AddMenuItem(v.Labels.Copy, "")
	systray.AddSeparator()
	t.quit = systray.AddMenuItem(v.Labels.Quit, "")
	t.last = v
	t.apply(v)
	go t.loop()
}

// loop handles clicks and keeps the menu and icon current. Every change
// that shows in them comes as an event (health, info, endpoints,
// settings), so nothing polls: the tray costs nothing while idle.
func (t *tray) loop() {
	events, unsubscribe := t.d.a.events.Subscribe()
	defer unsubscribe()
	for {
		select {
		case <-t.open.ClickedCh:
			go t.d.show()
		case <-t.pause.ClickedCh:
			t.d.a.SetPaused(!t.d.a.Paused())
		case <-t.copy.ClickedCh:
			go t.d.copy(t.d.a.ExportLines())
		case <-t.quit.ClickedCh:
			go t.d.quit()
			return
		case <-events:
		}
		t.apply(t.d.a.TrayView())
	}
}

// apply changes only what changed: every SetIcon writes a temp file.
func (t *tray) apply(v TrayView) {
	if v.Status != t.last.Status {
		t.status.SetTitle(v.Status)
		systray.SetTooltip("ccmesh " + v.Status)
	}
	pauseLabel := v.Labels.Pause
	if v.Paused {
		pauseLabel = v.Labels.Resume
	}
	t.pause.SetTitle(pauseLabel)
	if v.Labels != t.last.Labels {
		t.open.SetTitle(v.Labels.Open)
		t.copy.SetTitle(v.Labels.Copy)
		t.quit.SetTitle(v.Labels.Quit)
	}
	if v.Overall != t.last.Overall {
		systray.SetIcon(TrayIcon(v.Overall))
	}
	t.last = v
}
