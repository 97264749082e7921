package app

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/app/update"
)

// countingTransport counts the requests that reach it and answers none.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, context.Canceled
}

// Off (the default), the update check makes no request at all, at start or
// in the days after, holds no timer, and a check asked for is refused.
func TestUpdateCheckOff(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		rt := &countingTransport{}
		a, err := New(context.Background(), Options{DataDir: dir, Listen: "127.0.0.1:3457", AdminToken: testToken, Logger: zerolog.Nop(),
			Headless: true, HomeDir: t.TempDir(), Transport: rt})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		defer a.Close(context.Background())
		time.Sleep(72 * time.Hour)
		synctest.Wait()
		if got := rt.n.Load(); got != 0 {
			t.Errorf("requests while off = %d, want 0", got)
		}
		if a.upd.Schedule().Armed() {
			t.Error("a timer is armed while off")
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "http://127.0.0.1:3457/api/update/check", nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		a.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "update_check_off") {
			t.Errorf("POST /api/update/check while off = %d %s, want 409 update_check_off", rec.Code, rec.Body)
		}
		if got := rt.n.Load(); got != 0 {
			t.Errorf("requests after the refused check = %d, want 0", got)
		}
	})
}

// fakeFeed answers like GitHub's releases list.
func fakeFeed(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestUpdateCheck(t *testing.T) {
	const feed = `[{"tag_name":"v2.0.0","draft":false,"prerelease":true,"html_url":"https://example.test/v2.0.0"},
		{"tag_name":"v1.5.0","draft":true,"html_url":"https://example.test/v1.5.0"},
		{"tag_name":"v1.4.0","name":"One four","body":"Faster failover.\n\nMore.","draft":false,"prerelease":false,"html_url":"https://example.test/v1.4.0"}]`
	cases := []struct {
		name, version, feed string
		latest              string
		available           bool
		wantErr             string
	}{
		{"newer", "v1.3.2", feed, "v1.4.0", true, ""},
		{"a build past an older tag", "v1.3.2-7-gabcdef0-dirty", feed, "v1.4.0", true, ""},
		{"same", "v1.4.0", feed, "v1.4.0", false, ""},
		{"a build past the same tag", "v1.4.0-3-gabcdef0", feed, "v1.4.0", false, ""},
		{"older", "v1.5.1", feed, "v1.4.0", false, ""},
		{"a dev build", "dev", feed, "v1.4.0", false, ""},
		{"prereleases only", "v1.0.0", `[{"tag_name":"v9.0.0","prerelease":true}]`, "", false, ""},
		{"malformed", "v1.0.0", `[{"tag_name":`, "", false, "decode the feed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := Version
			Version = c.version
			t.Cleanup(func() { Version = old })
			h := newHarness(t)
			srv := fakeFeed(t, c.feed)
			okAs[Settings](t, h.do("PUT", "/api/settings", `{"update_check":true,"update_feed_url":"`+srv.URL+`"}`))
			events, unsubscribe := h.app.Events().Subscribe()
			defer unsubscribe()
			got := okAs[UpdateStatus](t, h.do("POST", "/api/update/check", ""))
			if !got.Enabled || got.Current != c.version || got.Latest != c.latest || got.Available != c.available ||
				got.CheckedAt == nil || !strings.Contains(got.Error, c.wantErr) || (c.wantErr == "") != (got.Error == "") {
				t.Errorf("POST /api/update/check = %+v, want enabled, current %s, latest %q, available %v, error with %q",
					got, c.version, c.latest, c.available, c.wantErr)
			}
			if c.latest == "v1.4.0" && (got.URL != "https://example.test/v1.4.0" || got.Notes != "Faster failover.") {
				t.Errorf("url, notes = %q, %q; want the release page and the notes' first line", got.URL, got.Notes)
			}
			if st := okAs[UpdateStatus](t, h.do("GET", "/api/update", "")); st.Latest != got.Latest || st.Available != got.Available {
				t.Errorf("GET /api/update = %+v, want what the check found", st)
			}
			waitEvent(t, events, "update")
			wantLine := ""
			if c.available {
				wantLine = "Update available: v1.4.0 — Faster failover."
			}
			if v := h.app.TrayView(); v.Update != wantLine {
				t.Errorf("tray line = %q, want %q", v.Update, wantLine)
			}
		})
	}
}

// waitEvent waits for an event called name, failing the test after 5 s.
func waitEvent(t *testing.T, events <-chan Event, name string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Name == name {
				return
			}
		case <-deadline:
			t.Fatalf("no %q event within 5 s", name)
		}
	}
}

// Turning the check off hides what it found, from the API and the tray.
func TestUpdateCheckTurnedOff(t *testing.T) {
	old := Version
	Version = "v1.0.0"
	t.Cleanup(func() { Version = old })
	h := newHarness(t)
	srv := fakeFeed(t, `[{"tag_name":"v1.1.0","html_url":"https://example.test/v1.1.0"}]`)
	okAs[Settings](t, h.do("PUT", "/api/settings", `{"update_check":true,"update_feed_url":"`+srv.URL+`"}`))
	if got := okAs[UpdateStatus](t, h.do("POST", "/api/update/check", "")); !got.Available {
		t.Fatalf("check = %+v, want an update", got)
	}
	okAs[Settings](t, h.do("PUT", "/api/settings", `{"update_check":false}`))
	got := okAs[UpdateStatus](t, h.do("GET", "/api/update", ""))
	if want := (UpdateStatus{Current: "v1.0.0"}); got != want {
		t.Errorf("GET /api/update after off = %+v, want %+v", got, want)
	}
	if v := h.app.TrayView(); v.Update != "" {
		t.Errorf("tray line after off = %q, want none", v.Update)
	}
}

func TestUpdateFeedSetting(t *testing.T) {
	if got := DefaultSettings().UpdateFeedURL; got != update.DefaultFeed {
		t.Errorf("default feed = %q, want %q", got, update.DefaultFeed)
	}
	if DefaultSettings().UpdateCheck {
		t.Error("the update check is on by default")
	}
	cases := []struct {
		url string
		ok  bool
	}{
		{update.DefaultFeed, true},
		{"http://127.0.0.1:8080/releases", true},
		{"http://localhost/releases", true},
		{"http://example.com/releases", false},
		{"https://user:pw@example.com/releases", false},
		{"ftp://example.com/releases", false},
		{"", false},
		{"releases.json", false},
	}
	h := newHarness(t)
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			r := h.do("PUT", "/api/settings", `{"update_feed_url":"`+c.url+`"}`)
			if ok := r.status == http.StatusOK; ok != c.ok {
				t.Errorf("PUT update_feed_url %q = %d %s, want ok %v", c.url, r.status, r.body, c.ok)
			}
		})
	}
}
