package app

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// POST /api/pause and /api/resume drive the pause without the tray
// (docs/BEHAVIOUR.md#pause), answering Info.
func TestPauseAPI(t *testing.T) {
	h := newHarness(t)
	up, _ := fakeAnthropic(t)
	h.mustCreate(`{"name":"up","base_url":"` + up.URL + `","protocol":"anthropic","api_key":"k"}`)
	proxyStatus := func() int {
		res, err := http.Post(h.srv.URL+"/v1/messages", "application/json",
			strings.NewReader(`{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}

	before := time.Now()
	got := okAs[Info](t, h.do("POST", "/api/pause", `{"minutes":15}`))
	if !got.Paused || got.PausedUntil == nil || got.PausedUntil.Before(before.Add(15*time.Minute)) || got.PausedUntil.After(time.Now().Add(15*time.Minute)) {
		t.Errorf("pause for 15 min answered %+v", got)
	}
	if st := proxyStatus(); st != http.StatusServiceUnavailable {
		t.Errorf("paused proxy answered %d, want 503", st)
	}
	var fromGet Info
	h.do("GET", "/api/info", "").decode(t, &fromGet)
	if !fromGet.Paused || fromGet.PausedUntil == nil || !fromGet.PausedUntil.Equal(*got.PausedUntil) {
		t.Errorf("GET /api/info: %+v, want paused until %v", fromGet, got.PausedUntil)
	}

	got = okAs[Info](t, h.do("POST", "/api/resume", ""))
	if got.Paused || got.PausedUntil != nil {
		t.Errorf("resume answered %+v", got)
	}
	if h.app.pause.Armed() {
		t.Error("the timed pause's timer is still armed after Resume")
	}
	if st := proxyStatus(); st != http.StatusOK {
		t.Errorf("resumed proxy answered %d, want 200", st)
	}

	// No minutes, or 0: until resumed.
	for _, body := range []string{"", "{}", `{"minutes":0}`} {
		got = okAs[Info](t, h.do("POST", "/api/pause", body))
		if !got.Paused || got.PausedUntil != nil {
			t.Errorf("pause with %q answered %+v, want paused until resumed", body, got)
		}
		okAs[Info](t, h.do("POST", "/api/resume", ""))
	}
	// paused_until is in the JSON as null when there is no end.
	if r := h.do("GET", "/api/info", ""); !strings.Contains(string(r.body), `"paused_until":null`) {
		t.Errorf("info without a timed pause: %s", r.body)
	}

	bad := []struct{ body, code, field string }{
		{`{"minutes":-1}`, "out_of_range", "minutes"},
		{`{"minutes":1441}`, "out_of_range", "minutes"},
		{`{"minutes":"15"}`, "bad_json", "minutes"},
		{`{"minutes":1.5}`, "bad_json", "minutes"},
		{`{"minute":15}`, "unknown_field", "minute"},
	}
	for _, b := range bad {
		r := h.do("POST", "/api/pause", b.body)
		var e struct{ Error apiError }
		json.Unmarshal(r.body, &e)
		if r.status/100 != 4 || e.Error.Code != b.code || e.Error.Field != b.field {
			t.Errorf("%s: %d %s, want %s at %s", b.body, r.status, r.body, b.code, b.field)
		}
	}
	if h.app.Paused() {
		t.Error("a refused pause paused the proxy")
	}
}

// A pause of N minutes through the API ends by itself after exactly N
// minutes, with an "info" event for the window and the tray.
func TestPauseAPIEnds(t *testing.T) {
	h := newHarness(t)
	events, unsubscribe := h.app.Events().Subscribe() // read only after synctest.Wait
	defer unsubscribe()
	synctest.Test(t, func(t *testing.T) {
		ln := newPipeListener()
		srv := &http.Server{Handler: h.app.Handler()}
		go srv.Serve(ln) //nolint:errcheck // ends with Close
		defer srv.Close()
		conn := ln.dial()
		defer conn.Close()
		body := `{"minutes":2}`
		if _, err := io.WriteString(conn, "POST /api/pause HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+testToken+
			"\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !h.app.Paused() {
			t.Fatalf("pause: %d, paused %v", res.StatusCode, h.app.Paused())
		}
		for len(events) > 0 {
			<-events
		}
		time.Sleep(2*time.Minute - time.Nanosecond)
		synctest.Wait()
		if !h.app.Paused() {
			t.Fatal("resumed before 2 minutes")
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if h.app.Paused() {
			t.Fatal("still paused after 2 minutes")
		}
		var info Info
		select {
		case ev := <-events:
			if ev.Name != "info" || json.Unmarshal(ev.Data, &info) != nil || info.Paused || info.PausedUntil != nil {
				t.Errorf("event %s %s, want info with paused false", ev.Name, ev.Data)
			}
		default:
			t.Error("no event when the pause ended")
		}
	})
}
