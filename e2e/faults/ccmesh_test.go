package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// buildCCMesh builds the ccmesh binary from this checkout into a temporary
// directory, the way a user builds it (plain `go build`, no tags).
func buildCCMesh(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatalf("find the module root: %v", err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	out := filepath.Join(t.TempDir(), "ccmesh")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, ".")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ccmesh: %v\n%s", err, msg)
	}
	return out
}

// lockedBuffer collects a child process's output for failure messages.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ccmesh is one running ccmesh process and an admin client for it.
type ccmesh struct {
	bin, data, token, addr string
	args                   []string // more flags, after the ones every run has
	cmd                    *exec.Cmd
	exited                 chan struct{}
	out                    *lockedBuffer
	http                   *http.Client
}

// freeAddr asks the kernel for a free loopback port. Another process could
// take it before ccmesh binds it; start fails loudly then.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startCCMesh starts bin on a fresh data dir and waits until it answers.
func startCCMesh(t *testing.T, bin string) *ccmesh {
	t.Helper()
	c := &ccmesh{bin: bin, data: t.TempDir(), token: "e2e-admin-token-0123456789", addr: freeAddr(t),
		http: &http.Client{Timeout: 30 * time.Second}}
	c.start(t)
	t.Cleanup(func() { c.kill(t) })
	return c
}

// start runs the process on c's data dir and address.
func (c *ccmesh) start(t *testing.T) {
	t.Helper()
	c.out = &lockedBuffer{}
	args := append([]string{"--headless", "--listen", c.addr, "--data", c.data,
		"--admin-token", c.token, "--log-level", "warn"}, c.args...)
	c.cmd = exec.Command(c.bin, args...)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	dieWithTest(c.cmd)
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start ccmesh: %v", err)
	}
	c.exited = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait() // the exit status is read through done and ProcessState
		close(done)
	}(c.cmd, c.exited)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := c.waitReady(ctx); err != nil {
		t.Fatalf("ccmesh did not come up: %v\noutput:\n%s", err, c.out)
	}
}

func (c *ccmesh) waitReady(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var info map[string]any
		err := c.admin(ctx, http.MethodGet, "/api/info", nil, &info)
		if err == nil {
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("ccmesh exited (%v): %w", c.cmd.ProcessState, err)
		case <-ctx.Done():
			return fmt.Errorf("wait for /api/info: %w (last error: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// kill sends SIGKILL to the process this test started and waits for it.
func (c *ccmesh) kill(t *testing.T) {
	t.Helper()
	if c.cmd == nil || c.cmd.Process == nil {
		return
	}
	select {
	case <-c.exited:
		return
	default:
	}
	if err := c.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("kill ccmesh pid %d: %v", c.cmd.Process.Pid, err)
	}
	<-c.exited
}

func (c *ccmesh) url(path string) string { return "http://" + c.addr + path }

// admin calls the admin API; a non-2xx answer is an error with its body.
func (c *ccmesh) admin(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url(path), body)
	if err != nil {
		return fmt.Errorf("build %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("read %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("decode %s %s: %w (body %s)", method, path, err, b)
		}
	}
	return nil
}

// mustAdmin is admin for set-up steps that cannot fail in a working ccmesh.
func (c *ccmesh) mustAdmin(t *testing.T, method, path string, in, out any) {
	t.Helper()
	if err := c.admin(t.Context(), method, path, in, out); err != nil {
		t.Fatalf("admin API: %v", err)
	}
}

// endpointSpec is the body of POST /api/endpoints.
type endpointSpec struct {
	Name     string   `json:"name"`
	BaseURL  string   `json:"base_url"`
	Protocol string   `json:"protocol"`
	APIKey   string   `json:"api_key,omitempty"`
	Models   []string `json:"models,omitempty"`
}

// endpointRow is an endpoint as GET /api/endpoints shows it.
type endpointRow struct {
	ID               int64             `json:"id"`
	Name             string            `json:"name"`
	BaseURL          string            `json:"base_url"`
	Protocol         string            `json:"protocol"`
	Auth             string            `json:"auth"`
	Models           []string          `json:"models"`
	ModelMap         map[string]string `json:"model_map"`
	Enabled          bool              `json:"enabled"`
	Fast             bool              `json:"fast"`
	FastSortOrder    int               `json:"fast_sort_order"`
	SortOrder        int               `json:"sort_order"`
	BreakerOverrides map[string]any    `json:"breaker_overrides"`
	APIKeyMasked     string            `json:"api_key_masked"`
}

func (c *ccmesh) addEndpoint(t *testing.T, e endpointSpec) endpointRow {
	t.Helper()
	var row endpointRow
	c.mustAdmin(t, http.MethodPost, "/api/endpoints", e, &row)
	return row
}

// healthRow is one endpoint of GET /api/health (docs/BEHAVIOUR.md#health).
type healthRow struct {
	ID                  int64  `json:"id"`
	Name                string `json:"name"`
	Status              string `json:"status"`
	State               string `json:"state"`
	Reason              string `json:"reason"`
	ConsecutiveFailures int    `json:"consecutive_failures"`
	RetryInMs           int64  `json:"retry_in_ms"`
}

func (c *ccmesh) health(t *testing.T, name string) healthRow {
	t.Helper()
	var rows []healthRow
	c.mustAdmin(t, http.MethodGet, "/api/health", nil, &rows)
	for _, h := range rows {
		if h.Name == name {
			return h
		}
	}
	t.Fatalf("GET /api/health has no endpoint %q", name)
	return healthRow{}
}

// logRow is a request log row with its failover history (docs/BEHAVIOUR.md#request-log).
type logRow struct {
	ID         int64        `json:"id"`
	ModelAsked string       `json:"model_asked"`
	Endpoint   string       `json:"endpoint"`
	Status     int          `json:"status"`
	Attempts   int          `json:"attempts"`
	Stream     bool         `json:"stream"`
	StreamEnd  string       `json:"stream_end"`
	ClientGone bool         `json:"client_gone"`
	DurationMs int64        `json:"duration_ms"`
	TokensIn   int64        `json:"tokens_in"`
	TokensOut  int64        `json:"tokens_out"`
	Error      string       `json:"error"`
	History    []attemptRow `json:"history"`
}

type attemptRow struct {
	Endpoint       string `json:"endpoint"`
	Outcome        string `json:"outcome"`
	Status         int    `json:"status"`
	ErrorType      string `json:"error_type"`
	Message        string `json:"message"`
	BreakerCounted bool   `json:"breaker_counted"`
	Translation    string `json:"translation"`
}

// waitLogs polls until n log rows for model exist (the writer is
// asynchronous, docs/BEHAVIOUR.md#request-log) and returns them newest first, with history.
func (c *ccmesh) waitLogs(t *testing.T, model string, n int) []logRow {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	path := "/api/logs?limit=" + strconv.Itoa(max(n, 1)) + "&model=" + url.QueryEscape(model)
	for {
		var page struct {
			Items []logRow `json:"items"`
		}
		err := c.admin(ctx, http.MethodGet, path, nil, &page)
		if err == nil && len(page.Items) >= n {
			rows := page.Items[:n]
			for i := range rows {
				c.mustAdmin(t, http.MethodGet, "/api/logs/"+strconv.FormatInt(rows[i].ID, 10), nil, &rows[i])
			}
			return rows
		}
		select {
		case <-ctx.Done():
			t.Fatalf("request log for model %q: want %d row(s), have %d after 10 s (last error %v)", model, n, len(page.Items), err)
		case <-tick.C:
		}
	}
}

// setTimeouts makes the stream timeouts short so the matrix runs fast.
func (c *ccmesh) setTimeouts(t *testing.T, firstByte, idle time.Duration) {
	t.Helper()
	c.mustAdmin(t, http.MethodPut, "/api/settings", map[string]any{
		"first_byte_timeout_ms": firstByte.Milliseconds(),
		"idle_timeout_ms":       idle.Milliseconds(),
	}, nil)
}
