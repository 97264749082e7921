//go:build desktop && !bindings

package desktop

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
	pauseFor, quit, update    *systray.MenuItem
	breaker                   [TrayBreakerLines]*systray.MenuItem
	last                      TrayView
}

func (t *tray) onReady() {
	v := t.d.h.TrayView()
	systray.SetTitle("ccmesh")
	t.open = systray.AddMenuItem(v.Labels.Open, "")
	t.status = systray.AddMenuItem(v.Status, "")
	t.status.Disable()
	for i := range t.breaker {
		t.breaker[i] = systray.AddMenuItem(v.Breaker[i], "")
		t.breaker[i].Disable()
	}
	t.update = systray.AddMenuItem(v.Update, "")
	systray.AddSeparator()
	t.pause = systray.AddMenuItem(v.PauseItem, "")
	t.pauseFor = systray.AddMenuItem(v.Labels.PauseFor, "")
	t.copy = systray.AddMenuItem(v.Labels.Copy, "")
	systray.AddSeparator()
	t.quit = systray.AddMenuItem(v.Labels.Quit, "")
	t.apply(v, true)
	go t.loop()
}

// loop handles clicks and keeps the menu and icon current. Every change
// that shows in them comes as an event, so nothing polls and the tray
// costs nothing while idle: health, endpoints and settings as they change;
// "info" for a pause, a timed pause ending, and lost log rows; "log" for
// each request written, which carries today's count and cost and the
// breaker changes that request caused (a forced change publishes
// "health").
func (t *tray) loop() {
	// A watch, not a subscription: the tray reads the App's state itself,
	// so no event is marshalled for it (a logged request costs a signal).
	events, unwatch := t.d.h.Watch()
	defer unwatch()
	for {
		select {
		case <-t.open.ClickedCh:
			go t.d.show()
		case <-t.pause.ClickedCh:
			t.d.h.SetPaused(!t.d.h.Paused())
		case <-t.pauseFor.ClickedCh:
			t.d.h.PauseFor(TrayPauseFor)
		case <-t.update.ClickedCh:
			if url := t.last.UpdateURL; url != "" {
				// Only the release page, in the browser: nothing is downloaded.
				go t.d.openURL(url)
			}
		case <-t.copy.ClickedCh:
			go t.d.copy(t.d.h.ExportLines())
		case <-t.quit.ClickedCh:
			go t.d.quit()
			return
		case <-events:
		}
		t.apply(t.d.h.TrayView(), false)
	}
}

// apply changes only what changed (all of it the first time): every
// SetIcon writes a temp file, and every change goes out over D-Bus.
func (t *tray) apply(v TrayView, first bool) {
	if first || v.Status != t.last.Status {
		t.status.SetTitle(v.Status)
		systray.SetTooltip("ccmesh " + v.Status)
	}
	for i, line := range v.Breaker {
		if !first && line == t.last.Breaker[i] {
			continue
		}
		t.breaker[i].SetTitle(line)
		if line == "" {
			t.breaker[i].Hide()
		} else {
			t.breaker[i].Show()
		}
	}
	if first || v.Update != t.last.Update {
		t.update.SetTitle(v.Update)
		if v.Update == "" {
			t.update.Hide()
		} else {
			t.update.Show()
		}
	}
	if first || v.PauseItem != t.last.PauseItem {
		t.pause.SetTitle(v.PauseItem)
	}
	if first || v.Paused != t.last.Paused {
		if v.Paused {
			t.pauseFor.Disable()
		} else {
			t.pauseFor.Enable()
		}
	}
	if first || v.Labels != t.last.Labels {
		t.open.SetTitle(v.Labels.Open)
		t.pauseFor.SetTitle(v.Labels.PauseFor)
		t.copy.SetTitle(v.Labels.Copy)
		t.quit.SetTitle(v.Labels.Quit)
	}
	if first || v.Overall != t.last.Overall {
		systray.SetIcon(TrayIcon(v.Overall))
	}
	t.last = v
}
