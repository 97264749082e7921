// Command preludeflood measures what an upstream that floods a stream with
// opening events before any content costs ccmesh in memory: it starts the
// ccmesh binary named by its argument, points one endpoint at a fake
// upstream that sends 500 ping events of 1 MiB after message_start, sends
// one streaming request and prints the process's peak resident memory
// (VmHWM, Linux) before and after. See bench/NOTES.md.
//
//	go build -o /tmp/ccmesh . && go run ./bench/preludeflood /tmp/ccmesh
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"time"
)

const (
	events    = 500
	eventSize = 1 << 20
	token     = "preludeflood-admin-token"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: preludeflood <ccmesh binary>")
	}
	if err := run(os.Args[1]); err != nil {
		log.Fatal(err)
	}
}

func run(bin string) error {
	up := httptest.NewServer(http.HandlerFunc(flood))
	defer up.Close()
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "preludeflood")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(bin, "--headless", "--listen", addr, "--data", dir, "--admin-token", token, "--log-level", "error")
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	base := "http://" + addr
	if err := waitReady(base); err != nil {
		return err
	}
	if err := addEndpoint(base, up.URL); err != nil {
		return err
	}
	before, err := peakRSS(cmd.Process.Pid)
	if err != nil {
		return err
	}
	resp, err := http.Post(base+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"claude-flood","stream":true,"max_tokens":1,"messages":[]}`))
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	body, _ := io.ReadAll(resp.Body) // what arrived is printed either way
	resp.Body.Close()
	after, err := peakRSS(cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("client got %d (%d bytes): %.160s\n", resp.StatusCode, len(body), body)
	fmt.Printf("peak RSS before %d KiB, after %d KiB\n", before, after)
	return nil
}

// flood is the hostile upstream: message_start, then only big pings.
func flood(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n")
	pad := strings.Repeat("x", eventSize)
	rc := http.NewResponseController(w)
	for range events {
		if _, err := fmt.Fprintf(w, "event: ping\ndata: {\"type\":\"ping\",\"pad\":\"%s\"}\n\n", pad); err != nil {
			return // ccmesh gave up on us, as it should
		}
		_ = rc.Flush()
	}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitReady(base string) error {
	for range 200 {
		if resp, err := http.Get(base + "/api/info"); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	return errors.New("ccmesh did not come up within 5 s")
}

func addEndpoint(base, upstream string) error {
	req, err := http.NewRequest(http.MethodPost, base+"/api/endpoints", bytes.NewReader(fmt.Appendf(nil,
		`{"name":"flood","base_url":%q,"protocol":"anthropic","api_key":"sk-flood-0123456789"}`, upstream)))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("add endpoint: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("add endpoint: status %d", resp.StatusCode)
	}
	return nil
}

// peakRSS reads VmHWM (KiB) from /proc.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read peak RSS: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int64
			_, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kib)
			return kib, err
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}
