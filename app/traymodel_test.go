package app

import (
	"bytes"
	"fmt"
	"image/png"
	"testing"
)

func TestTrayView(t *testing.T) {
	h := newHarness(t)
	a := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	b := h.mustCreate(`{"name":"b","base_url":"https://b.example","protocol":"anthropic"}`)
	h.mustCreate(`{"name":"off","base_url":"https://c.example","protocol":"anthropic","enabled":false}`)
	steps := []struct {
		name    string
		do      func()
		overall string
		status  string
		pause   string
	}{
		{"all healthy", func() {}, HealthAll, "127.0.0.1:3457 · 2/3 healthy", "Pause proxy"},
		{"one open", func() { h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", a.ID), "") }, HealthSome, "127.0.0.1:3457 · 1/3 healthy", "Pause proxy"},
		{"none healthy", func() { h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", b.ID), "") }, HealthNone, "127.0.0.1:3457 · 0/3 healthy", "Pause proxy"},
		{"paused", func() { h.app.SetPaused(true) }, HealthPaused, "127.0.0.1:3457 · 0/3 healthy", "Pause proxy"},
		{"chinese", func() { h.do("PUT", "/api/settings", `{"language":"zh-CN"}`) }, HealthPaused, "127.0.0.1:3457 · 0/3 健康", "暂停代理"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do()
			v := h.app.TrayView()
			if v.Overall != s.overall || v.Status != s.status || v.Labels.Pause != s.pause {
				t.Errorf("got %q %q %q, want %q %q %q", v.Overall, v.Status, v.Labels.Pause, s.overall, s.status, s.pause)
			}
		})
	}
}

func TestTrayIconColours(t *testing.T) {
	seen := map[string]string{}
	for _, o := range []string{HealthAll, HealthSome, HealthNone, HealthPaused} {
		img, err := png.Decode(bytes.NewReader(TrayIcon(o)))
		if err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		r, g, b, _ := img.At(16, 16).RGBA()
		c := fmt.Sprintf("%02x%02x%02x", r>>8, g>>8, b>>8)
		if prev, dup := seen[c]; dup {
			t.Errorf("%s and %s share the colour %s", o, prev, c)
		}
		seen[c] = o
		if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
			t.Errorf("%s: corner is not transparent", o)
		}
	}
}
