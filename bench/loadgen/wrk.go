package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// wrkScript makes wrk POST body and, when done, print one line
// "WRKJSON {…}" with the figures runWrk reads (latency in µs).
const wrkScript = `wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["anthropic-version"] = "2023-06-01"
wrk.headers["x-api-key"] = "bench-client-key"
wrk.body = [==[%s]==]
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%%d,"duration_us":%%d,"connect":%%d,"read":%%d,"write":%%d,"status":%%d,"timeout":%%d,"p50_us":%%d,"p99_us":%%d,"max_us":%%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`

// wrkSummary is the line wrkScript prints.
type wrkSummary struct {
	Requests   int   `json:"requests"`
	DurationUs int64 `json:"duration_us"`
	Connect    int   `json:"connect"`
	Read       int   `json:"read"`
	Write      int   `json:"write"`
	Status     int   `json:"status"`
	Timeout    int   `json:"timeout"`
	P50Us      int64 `json:"p50_us"`
	P99Us      int64 `json:"p99_us"`
	MaxUs      int64 `json:"max_us"`
}

// runWrk measures throughput with wrk (one thread, c.conns connections,
// c.duration): a C load generator leaves more of the load core to the
// upstream than Go's client does, so the target's core is what saturates.
// The result is reported as mode "max".
func runWrk(ctx context.Context, c config, res *Result) error {
	dir, err := os.MkdirTemp("", "loadgen-wrk")
	if err != nil {
		return fmt.Errorf("wrk script dir: %w", err)
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "post.lua")
	body := requestBody(c, false)
	if bytes.Contains(body, []byte("]==]")) {
		return fmt.Errorf("request body cannot be quoted for wrk")
	}
	if err := os.WriteFile(script, fmt.Appendf(nil, wrkScript, body), 0o600); err != nil {
		return fmt.Errorf("write wrk script: %w", err)
	}
	secs := strconv.Itoa(max(1, int(c.duration.Seconds())))
	cmd := exec.CommandContext(ctx, "wrk", "-t1", "-c"+strconv.Itoa(c.conns), "-d"+secs+"s", "--timeout", "10s", "-s", script, c.url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("run wrk: %w: %s", err, out)
	}
	s, err := parseWrk(out)
	if err != nil {
		return err
	}
	res.Mode = "max"
	failed := s.Connect + s.Read + s.Write + s.Status + s.Timeout
	res.Requests = s.Requests
	res.Errors = failed
	if failed > 0 {
		res.ErrorEg = fmt.Sprintf("wrk: connect %d, read %d, write %d, non-2xx %d, timeout %d", s.Connect, s.Read, s.Write, s.Status, s.Timeout)
	}
	if s.DurationUs > 0 {
		res.RPS = float64(s.Requests-failed) / (float64(s.DurationUs) / 1e6)
	}
	res.P50Us, res.P99Us, res.MaxUs = float64(s.P50Us), float64(s.P99Us), float64(s.MaxUs)
	return nil
}

func parseWrk(out []byte) (wrkSummary, error) {
	var s wrkSummary
	for line := range strings.Lines(string(out)) {
		if rest, ok := strings.CutPrefix(line, "WRKJSON "); ok {
			if err := json.Unmarshal([]byte(rest), &s); err != nil {
				return s, fmt.Errorf("parse wrk summary %q: %w", rest, err)
			}
			return s, nil
		}
	}
	return s, fmt.Errorf("no summary in wrk output: %s", out)
}
