package faults

import (
	"context"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// testMetricsListener: --metrics-listen on loopback serves /metrics without
// the admin token while the main port's /metrics wants it; a non-loopback
// address stops the start with an error naming loopback
// (docs/BEHAVIOUR.md#metrics).
func testMetricsListener(t *testing.T, bin string) {
	t.Run("non-loopback refused", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--headless", "--listen", freeAddr(t), "--data", t.TempDir(),
			"--admin-token", "e2e-admin-token-0123456789", "--metrics-listen", "0.0.0.0:9464")
		out, err := cmd.CombinedOutput()
		if err == nil || ctx.Err() != nil || !strings.Contains(string(out), "loopback") {
			t.Errorf("ccmesh --metrics-listen 0.0.0.0:9464: err %v (timed out: %v), output:\n%s\nwant a failed start naming loopback", err, ctx.Err() != nil, out)
		}
	})
	metricsAddr := freeAddr(t)
	c := &ccmesh{bin: bin, data: t.TempDir(), token: "e2e-admin-token-0123456789", addr: freeAddr(t),
		args: []string{"--metrics-listen", metricsAddr}, http: &http.Client{Timeout: 30 * time.Second}}
	c.start(t)
	t.Cleanup(func() { c.kill(t) })
	_, port, _ := net.SplitHostPort(metricsAddr)
	for _, tc := range []struct {
		name, url string
		token     bool
		status    int
	}{
		{"metrics listener, no token", "http://" + metricsAddr + "/metrics", false, 200},
		{"metrics listener by localhost", "http://localhost:" + port + "/metrics", false, 200},
		{"main port, no token", "http://" + c.addr + "/metrics", false, 401},
		{"main port, admin token", "http://" + c.addr + "/metrics", true, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, tc.url, nil)
			if tc.token {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			resp, err := c.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if tc.status == 200 && !strings.Contains(string(body), "ccmesh_build_info") {
				t.Errorf("no ccmesh_build_info in:\n%s", body)
			}
		})
	}
}
