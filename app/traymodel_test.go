package app

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/store"
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
		{"all healthy", func() {}, HealthAll, "127.0.0.1:3457 · 2/3 healthy · $0.00 today", "Pause proxy"},
		{"one open", func() { h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", a.ID), "") }, HealthSome, "127.0.0.1:3457 · 1/3 healthy · $0.00 today", "Pause proxy"},
		{"none healthy", func() { h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", b.ID), "") }, HealthNone, "127.0.0.1:3457 · 0/3 healthy · $0.00 today", "Pause proxy"},
		{"paused", func() { h.app.SetPaused(true) }, HealthPaused, "127.0.0.1:3457 · 0/3 healthy · $0.00 today", "Pause proxy"},
		{"chinese", func() { h.do("PUT", "/api/settings", `{"language":"zh-CN"}`) }, HealthPaused, "127.0.0.1:3457 · 0/3 健康 · 今日 $0.00", "暂停代理"},
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

// The status line carries today's cost as requests are logged, with a "+"
// once a request of today had no price.
func TestTrayTodayCost(t *testing.T) {
	var c todayCost
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.Local)
	c.add(now, []store.UsageDelta{{CostUSD: 1.25}, {CostUSD: 0.005}})
	if usd, un := c.get(now); todayWords("en", usd, un) != "$1.25 today" {
		t.Errorf("got %q", todayWords("en", usd, un))
	}
	c.add(now.Add(time.Minute), []store.UsageDelta{{Unpriced: 1}})
	if usd, un := c.get(now); todayWords("zh-CN", usd, un) != "今日 $1.25+" {
		t.Errorf("got %q", todayWords("zh-CN", usd, un))
	}
	// Yesterday's late record does not count; a new day starts at zero.
	c.add(now.Add(-24*time.Hour), []store.UsageDelta{{CostUSD: 9}})
	if usd, _ := c.get(now.Add(10 * time.Hour)); usd != 0 {
		t.Errorf("the next day starts at %v", usd)
	}
}

// Today's cost survives a restart: it is loaded from the statistics.
func TestTrayTodayCostLoaded(t *testing.T) {
	h := newHarness(t)
	up, _ := fakeAnthropic(t)
	h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"k"}`)
	h.postMessages(t, "claude-sonnet-4-5")
	before, _ := h.app.today.get(time.Now())
	// fakeAnthropic answers 5 input and 2 output tokens: 15 + 30 µ$.
	if math.Abs(before-0.000045) > 1e-12 {
		t.Fatalf("today's cost %v, want 0.000045", before)
	}
	h = h.restart()
	if after, _ := h.app.today.get(time.Now()); math.Abs(after-before) > 1e-12 {
		t.Errorf("after a restart today's cost is %v, want %v", after, before)
	}
}
