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
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/ccmesh/ccmesh/bench/internal/proc"
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
	c, err := proc.Start(bin, token)
	if err != nil {
		return err
	}
	defer c.Stop()
	cmd, base := c.Cmd, c.Base
	if err := c.Admin(http.MethodPost, "/api/endpoints", fmt.Sprintf(
		`{"name":"flood","base_url":%q,"protocol":"anthropic","api_key":"sk-flood-0123456789"}`, up.URL)); err != nil {
		return err
	}
	before, err := proc.PeakRSS(cmd.Process.Pid)
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
	after, err := proc.PeakRSS(cmd.Process.Pid)
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
