package faults

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the same SQLite ccmesh uses, to check its file after the kill
)

// crashEndpoint is one endpoint set up before the kill, with the breaker
// state the traffic (or the force action) leaves it in.
type crashEndpoint struct {
	name      string
	fault     fault
	model     string
	status    int  // what the client gets from the request that sets the state
	forceOpen bool // POST force-open instead of traffic
	state     string
	reason    string
}

// testKillUnderLoad kills ccmesh with SIGKILL while requests
// and an endpoint edit are in flight, then restarts it on the same data
// dir: the database must open cleanly and every endpoint edit and breaker
// state made before the kill must be back (docs/BEHAVIOUR.md#breaker-persistence, docs/BEHAVIOUR.md#bad-input-and-faults).
func testKillUnderLoad(t *testing.T, bin string) {
	c := startCCMesh(t, bin)
	c.setTimeouts(t, firstByteTimeout, idleTimeout)
	eps := []crashEndpoint{
		{name: "steady", fault: healthy, model: "claude-load", status: 200, state: "closed"},
		{name: "limited", fault: status429RetryAfter, model: "claude-limited", status: 429, state: "open", reason: "rate_limited"},
		{name: "dry", fault: quota429, model: "claude-dry", status: 429, state: "open", reason: "quota_exhausted"},
		{name: "broken", fault: status500, model: "claude-broken", status: 500, state: "open", reason: "broken"},
		{name: "held", fault: healthy, model: "claude-held", forceOpen: true, state: "open", reason: "manual"},
	}
	ids := map[string]int64{}
	for _, e := range eps {
		u := newUpstream(t, e.name, e.fault)
		spec := map[string]any{"name": e.name, "base_url": u.url, "protocol": "anthropic",
			"api_key": "sk-ant-" + e.name + "-secret", "models": []string{e.model},
			// One failure opens it, so one request sets the state.
			"breaker_overrides": map[string]any{"failure_threshold": 1}}
		var row endpointRow
		c.mustAdmin(t, http.MethodPost, "/api/endpoints", spec, &row)
		ids[e.name] = row.ID
		switch {
		case e.forceOpen:
			c.mustAdmin(t, http.MethodPost, "/api/endpoints/"+strconv.FormatInt(row.ID, 10)+"/force-open", nil, nil)
		default:
			if r := send(t.Context(), c.http, c.url(""), e.model, false); r.status != e.status {
				t.Fatalf("set-up request to %s: status %d, want %d (%s)", e.name, r.status, e.status, r.body)
			}
		}
		if h := c.health(t, e.name); h.State != e.state || h.Reason != e.reason {
			t.Fatalf("before the kill, %s is %s/%s, want %s/%s", e.name, h.State, h.Reason, e.state, e.reason)
		}
	}
	edited := c.addEndpoint(t, endpointSpec{Name: "edited", BaseURL: "http://127.0.0.1:9/v1", Protocol: "anthropic", APIKey: "sk-ant-edited-1", Models: []string{"claude-edited-0"}})

	load := startLoad(t, c, "claude-load", 4)
	load.waitDone(t, 60) // the kill comes with requests surely in flight
	// The last edit returns while requests are in flight; the kill follows at once.
	c.mustAdmin(t, http.MethodPut, "/api/endpoints/"+strconv.FormatInt(edited.ID, 10), map[string]any{
		"name": "edited-renamed", "models": []string{"claude-edited"}, "enabled": false, "base_url": "http://127.0.0.1:9/v4",
		"api_key": "sk-ant-edited-2", "model_map": map[string]string{"claude-edited": "glm-4.5-air"},
	}, nil)
	var endpointsBefore []endpointRow
	c.mustAdmin(t, http.MethodGet, "/api/endpoints", nil, &endpointsBefore)
	var healthBefore []healthRow
	c.mustAdmin(t, http.MethodGet, "/api/health", nil, &healthBefore)
	c.kill(t)
	load.stop()
	t.Logf("killed ccmesh after %d completed requests under load", load.done.Load())

	checkDatabase(t, filepath.Join(c.data, "ccmesh.db"))
	c.start(t)
	var endpointsAfter []endpointRow
	c.mustAdmin(t, http.MethodGet, "/api/endpoints", nil, &endpointsAfter)
	compareEndpoints(t, endpointsBefore, endpointsAfter)
	var healthAfter []healthRow
	c.mustAdmin(t, http.MethodGet, "/api/health", nil, &healthAfter)
	compareHealth(t, healthBefore, healthAfter)
	if r := send(t.Context(), c.http, c.url(""), "claude-load", true); r.status != 200 || r.readErr != nil {
		t.Errorf("after the restart a request to steady: status %d, body error %v", r.status, r.readErr)
	}
}

// load sends requests from workers until stopped or the first error.
type load struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   atomic.Int64
	tick   chan struct{} // one value per completed request
}

func startLoad(t *testing.T, c *ccmesh, model string, workers int) *load {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	l := &load{cancel: cancel, tick: make(chan struct{}, 1024)}
	hc := &http.Client{Timeout: 10 * time.Second}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; i < 5000 && ctx.Err() == nil; i++ {
				r := send(ctx, hc, c.url(""), model, (w+i)%2 == 0)
				if r.err != nil || r.status != 200 || r.readErr != nil {
					return // the kill ends the load
				}
				l.done.Add(1)
				select {
				case l.tick <- struct{}{}:
				default:
				}
			}
		}()
	}
	t.Cleanup(l.stop)
	return l
}

// waitDone waits until n requests have completed.
func (l *load) waitDone(t *testing.T, n int64) {
	t.Helper()
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for l.done.Load() < n {
		select {
		case <-l.tick:
		case <-timeout.C:
			t.Fatalf("load: %d of %d requests completed in 30 s", l.done.Load(), n)
		}
	}
}

func (l *load) stop() {
	l.cancel()
	l.wg.Wait()
}

// checkDatabase runs SQLite's full integrity check on a copy of the
// database as the kill left it (main file and WAL), so that ccmesh's own
// start-up sees the untouched files.
func checkDatabase(t *testing.T, path string) {
	t.Helper()
	dir := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(path+suffix, filepath.Join(dir, "copy.db"+suffix)); err != nil && !(suffix != "" && errors.Is(err, os.ErrNotExist)) {
			t.Fatalf("copy the database: %v", err)
		}
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "copy.db"))
	if err != nil {
		t.Fatalf("open the killed database: %v", err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRowContext(t.Context(), "PRAGMA integrity_check").Scan(&check); err != nil {
		t.Fatalf("integrity_check: %v", err)
	}
	if check != "ok" {
		t.Fatalf("integrity_check after kill -9 = %q, want ok", check)
	}
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("open %s: %w", from, err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return fmt.Errorf("create %s: %w", to, err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return fmt.Errorf("copy %s: %w", from, err)
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("close %s: %w", to, err)
	}
	return nil
}

func compareEndpoints(t *testing.T, before, after []endpointRow) {
	t.Helper()
	if len(after) != len(before) {
		t.Fatalf("after the restart %d endpoints, before the kill %d", len(after), len(before))
	}
	for i := range before {
		b, a := before[i], after[i]
		// A 15-character key shows its last 4 only (docs/BEHAVIOUR.md#safety).
		if b.Name == "edited-renamed" && b.APIKeyMasked != "…ed-2" {
			t.Errorf("the edited key shows as %q before the kill, want …ed-2", b.APIKeyMasked)
		}
		if fmt.Sprint(b) != fmt.Sprint(a) {
			t.Errorf("endpoint %d after the restart = %+v, want %+v", b.ID, a, b)
		}
	}
}

// compareHealth: every breaker has the state and reason it had, and no
// cooldown is longer than before the kill (docs/BEHAVIOUR.md#breaker-persistence: a restart neither
// forgets a broken endpoint nor extends its cooldown).
func compareHealth(t *testing.T, before, after []healthRow) {
	t.Helper()
	byID := map[int64]healthRow{}
	for _, h := range after {
		byID[h.ID] = h
	}
	for _, b := range before {
		a, ok := byID[b.ID]
		if !ok {
			t.Errorf("endpoint %s has no health after the restart", b.Name)
			continue
		}
		if a.State != b.State || a.Reason != b.Reason || a.Status != b.Status {
			t.Errorf("%s after the restart: %s/%s (%s), before the kill %s/%s (%s)", b.Name,
				a.State, a.Reason, a.Status, b.State, b.Reason, b.Status)
		}
		if b.State == "open" && b.Reason != "manual" && (a.RetryInMs <= 0 || a.RetryInMs > b.RetryInMs) {
			t.Errorf("%s: retry_in_ms %d after the restart, %d before: the cooldown must go on, not restart or vanish",
				b.Name, a.RetryInMs, b.RetryInMs)
		}
	}
}
