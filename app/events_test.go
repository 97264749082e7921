package app

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The live stream sends the lists at once and a change within a second.
func TestEventStream(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	req, _ := http.NewRequest("GET", h.srv.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("content-type"); ct != "text/event-stream" {
		t.Fatalf("content-type %q", ct)
	}
	events := make(chan [2]string, 64)
	go func() {
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				events <- [2]string{name, v}
			}
		}
		close(events)
	}()
	next := func(want string) string {
		t.Helper()
		timeout := time.After(3 * time.Second)
		for {
			select {
			case ev, ok := <-events:
				if !ok {
					t.Fatalf("stream ended before %q", want)
				}
				if ev[0] == want {
					return ev[1]
				}
			case <-timeout:
				t.Fatalf("no %q event", want)
			}
		}
	}
	if d := next("endpoints"); !strings.Contains(d, `"name":"a"`) {
		t.Errorf("first endpoints event = %s", d)
	}
	next("health")
	h.do("POST", fmt.Sprintf("/api/endpoints/%d/force-open", e.ID), "")
	if d := next("health"); !strings.Contains(d, `"status":"unhealthy"`) {
		t.Errorf("health after force-open = %s", d)
	}
}

// Shutting the server down ends open event streams at once, so an open UI
// does not hold the shutdown for the whole grace period.
func TestShutdownEndsEventStreams(t *testing.T) {
	h := newHarness(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- h.app.Serve(ctx, ln) }()
	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	stop()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(ShutdownGrace / 2):
		t.Fatal("shutdown waited on the open event stream")
	}
}

// A browser's stream gets keep-alive comments; the desktop window's, served
// in-process through TrustedHandler, none: an idle window wakes nothing.
func TestKeepAliveOnlyOverTheNetwork(t *testing.T) {
	was := keepAliveEvery
	keepAliveEvery = 5 * time.Millisecond
	t.Cleanup(func() { keepAliveEvery = was }) // after the harness has stopped
	h := newHarness(t)
	window := httptest.NewServer(h.app.TrustedHandler())
	defer window.Close()

	count := func(url string, auth bool) (*atomic.Int64, func()) {
		req, _ := http.NewRequest("GET", url+"/api/events", nil)
		if auth {
			req.Header.Set("Authorization", "Bearer "+testToken)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s/api/events: %v %v", url, err, res)
		}
		var n atomic.Int64
		go func() {
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				if sc.Text() == ": keep-alive" {
					n.Add(1)
				}
			}
		}()
		return &n, func() { res.Body.Close() }
	}
	inWindow, closeWindow := count(window.URL, false)
	defer closeWindow()
	inBrowser, closeBrowser := count(h.srv.URL, true)
	defer closeBrowser()
	deadline := time.After(10 * time.Second)
	for inBrowser.Load() < 3 {
		select {
		case <-deadline:
			t.Fatalf("the browser's stream got %d keep-alives", inBrowser.Load())
		case <-time.After(time.Millisecond):
		}
	}
	if n := inWindow.Load(); n != 0 {
		t.Errorf("the window's in-process stream got %d keep-alives while the browser's got %d", n, inBrowser.Load())
	}
}
