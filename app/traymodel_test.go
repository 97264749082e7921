package app

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ccmesh/ccmesh/app/desktop"
	"github.com/ccmesh/ccmesh/app/stats"
	"github.com/ccmesh/ccmesh/breaker"
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
		lines   int // breaker changes shown
	}{
		{"all healthy", func() {}, HealthAll, "127.0.0.1:3457 · 2/3 healthy · 0 requests, $0.00 today", "Pause proxy", 0},
		{"one open", func() { h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", a.ID), "") }, HealthSome, "127.0.0.1:3457 · 1/3 healthy · 0 requests, $0.00 today", "Pause proxy", 1},
		{"none healthy", func() { h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", b.ID), "") }, HealthNone, "127.0.0.1:3457 · 0/3 healthy · 0 requests, $0.00 today", "Pause proxy", 2},
		{"paused", func() { h.app.SetPaused(true) }, HealthPaused, "127.0.0.1:3457 · 0/3 healthy · 0 requests, $0.00 today", "Resume proxy", 2},
		{"chinese", func() { h.do("PUT", "/api/settings", `{"language":"zh-CN"}`) }, HealthPaused, "127.0.0.1:3457 · 0/3 健康 · 今日 0 次请求，$0.00", "恢复代理", 2},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do()
			v := h.app.TrayView()
			if v.Overall != s.overall || v.Status != s.status || v.PauseItem != s.pause {
				t.Errorf("got %q %q %q, want %q %q %q", v.Overall, v.Status, v.PauseItem, s.overall, s.status, s.pause)
			}
			lines := 0
			for _, l := range v.Breaker {
				if l != "" {
					lines++
				}
			}
			if lines != s.lines {
				t.Errorf("%d breaker lines %q, want %d", lines, v.Breaker, s.lines)
			}
		})
	}
	if v := h.app.TrayView(); !strings.HasSuffix(v.Breaker[0], " b：闭合 → 熔断（手动熔断）") {
		t.Errorf("newest breaker line %q, want b forced open, in Chinese", v.Breaker[0])
	}
}

// The status line carries today's requests and cost as requests are
// logged, with a "+" once a request of today had no price.
func TestTrayToday(t *testing.T) {
	var c stats.Today
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.Local)
	if got := desktop.TodayWords("en", desktop.Today(c.Get(now))); got != "0 requests, $0.00 today" {
		t.Errorf("nothing yet: got %q", got)
	}
	// Usage with no price is not $0: said as the UI says it.
	var unpriced stats.Today
	unpriced.Add(now, []store.UsageDelta{{Counts: store.Counts{Requests: 1, Unpriced: 1}}})
	for lang, want := range map[string]string{"en": "1 request, no price today", "zh-CN": "今日 1 次请求，无价格"} {
		if got := desktop.TodayWords(lang, desktop.Today(unpriced.Get(now))); got != want {
			t.Errorf("%s, only unpriced requests: got %q, want %q", lang, got, want)
		}
	}
	c.Add(now, []store.UsageDelta{{Counts: store.Counts{Requests: 1, CostUSD: 1.25}}})
	if got := desktop.TodayWords("en", desktop.Today(c.Get(now))); got != "1 request, $1.25 today" {
		t.Errorf("got %q", got)
	}
	// A failover is two attempts, two requests to their endpoints, as the
	// statistics count them.
	c.Add(now, []store.UsageDelta{{Counts: store.Counts{Requests: 1, Errors: 1}}, {Counts: store.Counts{Requests: 1, CostUSD: 0.005}}})
	if got := desktop.TodayWords("en", desktop.Today(c.Get(now))); got != "3 requests, $1.25 today" {
		t.Errorf("got %q", got)
	}
	c.Add(now.Add(time.Minute), []store.UsageDelta{{Counts: store.Counts{Requests: 1, Unpriced: 1}}})
	if got := desktop.TodayWords("zh-CN", desktop.Today(c.Get(now))); got != "今日 4 次请求，$1.25+" {
		t.Errorf("got %q", got)
	}
	// Yesterday's late record does not count; a new day starts at zero.
	c.Add(now.Add(-24*time.Hour), []store.UsageDelta{{Counts: store.Counts{Requests: 1, CostUSD: 9}}})
	if got := c.Get(now); got.Requests != 4 {
		t.Errorf("a record of yesterday counted: %+v", got)
	}
	if got := c.Get(now.Add(10 * time.Hour)); got != (stats.Day{}) {
		t.Errorf("the next day starts at %+v", got)
	}
	c.Add(now.Add(10*time.Hour), []store.UsageDelta{{Counts: store.Counts{Requests: 1}}})
	if got := c.Get(now.Add(10 * time.Hour)); got.Requests != 1 {
		t.Errorf("the next day's first request: %+v", got)
	}
}

// Today's requests and cost survive a restart: they are loaded from the
// statistics.
func TestTrayTodayLoaded(t *testing.T) {
	h := newHarness(t)
	up, _ := fakeAnthropic(t)
	h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"k"}`)
	h.postMessages(t, "claude-sonnet-4-5")
	h.postMessages(t, "claude-sonnet-4-5")
	before := h.app.today.Get(time.Now())
	// fakeAnthropic answers 5 input and 2 output tokens: 15 + 30 µ$ each.
	if math.Abs(before.USD-0.00009) > 1e-12 || before.Requests != 2 {
		t.Fatalf("today %+v, want 2 requests and $0.00009", before)
	}
	h = h.restart()
	if after := h.app.today.Get(time.Now()); after.Requests != before.Requests || math.Abs(after.USD-before.USD) > 1e-12 {
		t.Errorf("after a restart today is %+v, want %+v", after, before)
	}
}

// The breaker lines come from the audit trail at start and from
// transitions as they are reported, requests' and forced ones alike.
func TestTrayBreakerLines(t *testing.T) {
	h := newHarness(t)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		io.WriteString(w, `{"type":"error","error":{"type":"api_error","message":"down"}}`)
	}))
	t.Cleanup(broken.Close)
	e := h.mustCreate(`{"name":"flaky","base_url":"` + broken.URL + `","protocol":"anthropic","api_key":"k","breaker_overrides":{"failure_threshold":1}}`)
	h.postMessages(t, "claude-sonnet-4-5")
	h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-close", e.ID), "")
	h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", e.ID), "")
	want := []string{"flaky: closed → open (forced open)", "flaky: open → closed (forced closed)", "flaky: closed → open (broken)"}
	check := func(when string, v TrayView) {
		t.Helper()
		for i, w := range want {
			// "15:04 " first: the time is the local time of the change.
			if _, line, _ := strings.Cut(v.Breaker[i], " "); line != w {
				t.Errorf("%s: line %d is %q, want …%q", when, i, v.Breaker[i], w)
			}
		}
	}
	check("running", h.app.TrayView())
	// Restarting restores the forced-open breaker (an audit row of its own,
	// cause restore), and the lines are those of before.
	h = h.restart()
	check("after a restart", h.app.TrayView())
}

// Everything the tray shows changes with an event after it, which is what
// the tray redraws on (app/desktop/tray.go): it has no timer of its own.
func TestTrayFollowsEvents(t *testing.T) {
	h := newHarness(t)
	up, _ := fakeAnthropic(t)
	e := h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"k"}`)
	events, unwatch := h.app.Events().Watch() // as the tray watches
	defer unwatch()
	// after waits for the tray's view, recomputed at each event as the tray
	// does, to show what it should; a change without an event fails.
	after := func(what string, cond func(TrayView) bool) {
		t.Helper()
		timeout := time.After(5 * time.Second)
		for {
			select {
			case <-events:
				if cond(h.app.TrayView()) {
					return
				}
			case <-timeout:
				t.Fatalf("%s: no event after which the tray shows it; the view is %+v", what, h.app.TrayView())
			}
		}
	}
	h.postMessages(t, "claude-sonnet-4-5")
	after("a request", func(v TrayView) bool { return strings.HasSuffix(v.Status, "· 1 request, $0.00 today") })
	h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", e.ID), "")
	after("a forced change", func(v TrayView) bool { return strings.HasSuffix(v.Breaker[0], "up: closed → open (forced open)") })
	h.do("POST", "/api/pause", `{"minutes":15}`)
	after("a timed pause", func(v TrayView) bool { return strings.HasPrefix(v.PauseItem, "Resume proxy (paused until ") })
	h.do("POST", "/api/resume", "")
	after("resuming", func(v TrayView) bool { return v.PauseItem == "Pause proxy" })
	h.do("PUT", "/api/settings", `{"language":"zh-CN"}`)
	after("the language", func(v TrayView) bool { return v.Labels.PauseFor == "暂停 15 分钟" })
}

// "Pause for 15 minutes" pauses at once, shows until when, and resumes by
// itself after exactly 15 minutes; a manual Resume cancels that, and a
// pause after it is not ended by the old timer.
func TestTrayPauseFor15(t *testing.T) {
	h := newHarness(t)
	events, unsubscribe := h.app.Events().Subscribe() // made outside the bubble, read only after synctest.Wait
	defer unsubscribe()
	infos := func() (n int) {
		for {
			select {
			case ev := <-events:
				if ev.Name == "info" {
					n++
				}
			default:
				return n
			}
		}
	}
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		h.app.PauseFor(TrayPauseFor)
		v := h.app.TrayView()
		until := start.Add(15 * time.Minute)
		if want := "Resume proxy (paused until " + until.In(time.Local).Format("15:04") + ")"; !v.Paused || v.Overall != HealthPaused || v.PauseItem != want {
			t.Errorf("paused for 15 min: %+v, want %q", v, want)
		}
		if info := h.app.Info(); !info.Paused || info.PausedUntil == nil || !info.PausedUntil.Equal(until) {
			t.Errorf("info: paused %v until %v, want until %v", info.Paused, info.PausedUntil, until)
		}
		if n := infos(); n != 1 {
			t.Errorf("%d info events for the pause, want 1", n)
		}

		time.Sleep(15*time.Minute - time.Nanosecond)
		synctest.Wait()
		if !h.app.Paused() {
			t.Fatal("resumed before 15 minutes")
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if h.app.Paused() || h.app.Info().PausedUntil != nil || h.app.TrayView().PauseItem != "Pause proxy" {
			t.Errorf("not resumed after 15 minutes: %+v", h.app.Info())
		}
		if n := infos(); n != 1 {
			t.Errorf("%d info events for the end of the pause, want 1", n)
		}

		h.app.PauseFor(TrayPauseFor)
		time.Sleep(5 * time.Minute)
		h.app.SetPaused(false) // Resume from the tray or the window
		h.app.SetPaused(true)  // and "Pause proxy": until resumed
		infos()
		time.Sleep(time.Hour)
		synctest.Wait()
		if !h.app.Paused() || h.app.Info().PausedUntil != nil {
			t.Errorf("the cancelled timer ended a later pause: %+v", h.app.Info())
		}
		if n := infos(); n != 0 {
			t.Errorf("%d info events from a cancelled timer", n)
		}
		h.app.SetPaused(false)
	})
}

// Desktop notifications say a breaker change in the UI's words and
// language, never the API's identifiers.
func TestTransitionNotice(t *testing.T) {
	h := newHarness(t)
	a := h.mustCreate(`{"name":"relay","base_url":"https://a.example","protocol":"anthropic"}`)
	opened := breaker.Transition{ID: a.ID, From: breaker.Closed, To: breaker.Open, Reason: breaker.RateLimited}
	title, body, ok := h.app.transitionNotice(opened)
	if !ok || title != "ccmesh: relay is unhealthy" || body != "Its circuit breaker opened (rate limited); requests go to the other endpoints." {
		t.Errorf("opened: %v %q %q", ok, title, body)
	}
	if _, _, ok := h.app.transitionNotice(breaker.Transition{ID: a.ID, From: breaker.Open, To: breaker.HalfOpen}); ok {
		t.Error("a notification for Open → HalfOpen")
	}
	h.do("PUT", "/api/settings", `{"language":"zh-CN"}`)
	title, body, _ = h.app.transitionNotice(opened)
	if title != "ccmesh：relay 已熔断" || body != "熔断器已打开（限流）；请求改走其他端点。" {
		t.Errorf("zh-CN opened: %q %q", title, body)
	}
	title, body, ok = h.app.transitionNotice(breaker.Transition{ID: a.ID, From: breaker.HalfOpen, To: breaker.Closed})
	if !ok || title != "ccmesh：relay 已恢复健康" || body != "熔断器已关闭。" {
		t.Errorf("zh-CN closed: %v %q %q", ok, title, body)
	}
}
