package update

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestRunning(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"v1.2.3", "v1.2.3", true},
		{"1.2", "v1.2.0", true},
		{"v1.2.3-4-gabc1234", "v1.2.3", true},
		{"v1.2.3-4-gabc1234-dirty", "v1.2.3", true},
		{"v1.2.3-dirty", "v1.2.3", true},
		{"v2.0.0-rc.1", "v2.0.0-rc.1", true},
		{"dev", "", false},
		{"abc1234", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, ok := Running(c.in)
			if got != c.want || ok != c.ok {
				t.Errorf("Running(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestNewest(t *testing.T) {
	cases := []struct {
		name  string
		rs    []Release
		want  Latest
		found bool
	}{
		{"highest by semver, not by order", []Release{
			{TagName: "v1.9.0", HTMLURL: "https://x/1.9"},
			{TagName: "v1.10.0", HTMLURL: "https://x/1.10", Body: "\n## Faster failover\nmore"},
			{TagName: "v1.2.0"},
		}, Latest{Version: "v1.10.0", URL: "https://x/1.10", Notes: "Faster failover"}, true},
		{"drafts and prereleases left out", []Release{
			{TagName: "v3.0.0", Draft: true},
			{TagName: "v2.5.0", Prerelease: true},
			{TagName: "v2.4.0-rc.1"},
			{TagName: "v2.0.0", Name: "Two"},
		}, Latest{Version: "v2.0.0", Notes: "Two"}, true},
		{"only prereleases", []Release{{TagName: "v2.0.0", Prerelease: true}}, Latest{}, false},
		{"not semver", []Release{{TagName: "nightly"}}, Latest{}, false},
		{"a javascript: page is no link", []Release{{TagName: "v1.0.0", HTMLURL: "javascript:alert(1)"}},
			Latest{Version: "v1.0.0"}, true},
		{"empty", nil, Latest{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, found := Newest(c.rs)
			if got != c.want || found != c.found {
				t.Errorf("Newest = %+v, %v; want %+v, %v", got, found, c.want, c.found)
			}
		})
	}
}

func TestSummaryCut(t *testing.T) {
	got := summary(strings.Repeat("é", NotesRunes+5), "")
	if want := strings.Repeat("é", NotesRunes) + "…"; got != want {
		t.Errorf("summary = %q, want %q", got, want)
	}
}

// feed is a fake releases API: it answers body with an ETag, and 304 to
// a request that sends that ETag back.
type feed struct {
	body     string
	status   int
	etag     string
	requests atomic.Int32
	last     atomic.Pointer[http.Request]
}

func (f *feed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	f.last.Store(r)
	if f.etag != "" && r.Header.Get("If-None-Match") == f.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if f.etag != "" {
		w.Header().Set("ETag", f.etag)
	}
	if f.status != 0 {
		w.WriteHeader(f.status)
	}
	_, _ = io.WriteString(w, f.body)
}

func TestCheck(t *testing.T) {
	const rel = `[{"tag_name":"v1.4.0","name":"","html_url":"https://example.test/r/v1.4.0","body":"Quicker","draft":false,"prerelease":false,"published_at":"2026-11-30T10:00:00Z"}]`
	cases := []struct {
		name    string
		feed    *feed
		found   bool
		latest  string
		wantErr string
	}{
		{"a release", &feed{body: rel}, true, "v1.4.0", ""},
		{"only drafts and prereleases", &feed{body: `[{"tag_name":"v9.0.0","draft":true},{"tag_name":"v8.0.0","prerelease":true}]`}, false, "", ""},
		{"malformed", &feed{body: `{"message":"Not Found"`}, false, "", "decode the feed"},
		{"an object, not a list", &feed{body: `{"message":"Not Found"}`}, false, "", "decode the feed"},
		{"an error status", &feed{status: http.StatusForbidden, body: `{"message":"rate limit"}`}, false, "", "answered 403"},
		{"a redirect is not followed", &feed{status: http.StatusFound}, false, "", "answered 302"},
		{"over 1 MiB", &feed{body: "[" + strings.Repeat(" ", MaxBytes) + "]"}, false, "", "over 1 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.feed)
			defer srv.Close()
			got, found, err := NewClient(srv.Client().Transport, "ccmesh/v1.0.0").Check(context.Background(), srv.URL)
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
			}
			if found != c.found || got.Version != c.latest {
				t.Errorf("got %+v, %v; want %s, %v", got, found, c.latest, c.found)
			}
		})
	}
}

// A redirect is the feed's answer: the place it points to is never asked.
func TestCheckRedirectNotFollowed(t *testing.T) {
	elsewhere := &feed{body: `[{"tag_name":"v9.0.0"}]`}
	target := httptest.NewServer(elsewhere)
	defer target.Close()
	srv := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusFound))
	defer srv.Close()
	_, found, err := NewClient(srv.Client().Transport, "ccmesh/v1.0.0").Check(context.Background(), srv.URL)
	if err == nil || !strings.Contains(err.Error(), "answered 302") || found {
		t.Errorf("check = %v, %v; want the 302 as an error", found, err)
	}
	if got := elsewhere.requests.Load(); got != 0 {
		t.Errorf("the redirect's target got %d requests, want 0", got)
	}
}

// The ETag of the first answer goes back as If-None-Match; a 304 keeps the
// release the first answer listed. No credential is ever sent.
func TestCheckNotModified(t *testing.T) {
	f := &feed{etag: `"abc"`, body: `[{"tag_name":"v1.4.0","html_url":"https://example.test/r"}]`}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c := NewClient(srv.Client().Transport, "ccmesh/v1.0.0")
	for i := range 2 {
		got, found, err := c.Check(context.Background(), srv.URL)
		if err != nil || !found || got.Version != "v1.4.0" {
			t.Fatalf("check %d = %+v, %v, %v; want v1.4.0", i, got, found, err)
		}
		r := f.last.Load()
		wantINM := map[int]string{0: "", 1: `"abc"`}[i]
		if got := r.Header.Get("If-None-Match"); got != wantINM {
			t.Errorf("check %d: If-None-Match = %q, want %q", i, got, wantINM)
		}
		if got := r.Header.Get("User-Agent"); got != "ccmesh/v1.0.0" {
			t.Errorf("User-Agent = %q, want ccmesh/v1.0.0", got)
		}
		for _, h := range []string{"Authorization", "X-Api-Key", "Cookie"} {
			if r.Header.Get(h) != "" {
				t.Errorf("check %d sent %s", i, h)
			}
		}
	}
	// Another feed starts afresh: no ETag of the first one.
	f2 := &feed{etag: `"abc"`, body: `[]`}
	srv2 := httptest.NewServer(f2)
	defer srv2.Close()
	if _, found, err := c.Check(context.Background(), srv2.URL); err != nil || found {
		t.Errorf("other feed = %v, %v; want nothing found, no error", found, err)
	}
	if got := f2.last.Load().Header.Get("If-None-Match"); got != "" {
		t.Errorf("other feed got If-None-Match %q, want none", got)
	}
}

// roundTripper is a fake transport for synctest bubbles, where real
// sockets do not work.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A feed that never answers is given up after Timeout.
func TestCheckSlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := roundTripper(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		start := time.Now()
		_, _, err := NewClient(rt, "ccmesh/dev").Check(context.Background(), DefaultFeed+"?token=s3cret")
		if err == nil {
			t.Fatal("err = nil, want a timeout")
		}
		var te interface{ Timeout() bool }
		if !errors.As(err, &te) || !te.Timeout() {
			t.Errorf("err = %v, want a timeout", err)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("err = %v, names the feed's query", err)
		}
		if got := time.Since(start); got != Timeout {
			t.Errorf("gave up after %v, want %v", got, Timeout)
		}
	})
}

// Switched on, the schedule checks at once and then daily; switched off it
// never checks and holds no timer; turning it on checks at once.
func TestSchedule(t *testing.T) {
	cases := []struct {
		name   string
		on     bool
		wait   time.Duration
		checks int32
		armed  bool
	}{
		{"on: at start and daily", true, 49 * time.Hour, 3, true},
		{"off: never", false, 72 * time.Hour, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var checks atomic.Int32
				s := NewSchedule(func(context.Context) { checks.Add(1) })
				s.Set(c.on)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { s.Run(ctx); close(done) }()
				time.Sleep(c.wait)
				synctest.Wait()
				if got := checks.Load(); got != c.checks {
					t.Errorf("checks after %v = %d, want %d", c.wait, got, c.checks)
				}
				if s.Armed() != c.armed {
					t.Errorf("armed = %v, want %v", s.Armed(), c.armed)
				}
				cancel()
				<-done
			})
		})
	}
}

func TestScheduleSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var checks atomic.Int32
		s := NewSchedule(func(context.Context) { checks.Add(1) })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go s.Run(ctx)
		synctest.Wait()
		s.Set(true)
		synctest.Wait()
		if got := checks.Load(); got != 1 || !s.Armed() {
			t.Fatalf("after on: checks = %d, armed = %v; want 1, true", got, s.Armed())
		}
		s.Set(false)
		synctest.Wait()
		if s.Armed() {
			t.Errorf("after off: armed = true, want false")
		}
		time.Sleep(3 * Every)
		synctest.Wait()
		if got := checks.Load(); got != 1 {
			t.Errorf("checks while off = %d, want 1", got)
		}
	})
}
