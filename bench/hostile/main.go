// Command hostile measures what hostile upstream answers and inputs cost
// the ccmesh binary named by its argument: its CPU time (utime + stime)
// and its peak resident memory (VmHWM) over one scenario, each in a fresh
// process with one endpoint pointed at a fake upstream in this process.
//
//	bomb   8 concurrent Chat requests translated to an Anthropic endpoint
//	       that answers a few KB of brotli standing for a 60 MiB message
//	flood  one Chat stream translated from an Anthropic endpoint that sends
//	       message_start and then pings, never content (first-byte
//	       timeout 20 s)
//	count  3 concurrent count_tokens requests of 30 MB of one word, which
//	       the endpoint does not serve (ccmesh answers its local estimate)
//
//	go build -o /tmp/ccmesh . && go run ./bench/hostile /tmp/ccmesh bomb
package main

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/ccmesh/ccmesh/bench/internal/proc"
)

const token = "hostile-admin-token"

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: hostile <ccmesh binary> bomb|flood|count")
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		log.Fatal(err)
	}
}

// scenario is a fake upstream, the endpoint's protocol and what the
// client sends.
type scenario struct {
	upstream http.HandlerFunc
	protocol string
	settings string // a PUT /api/settings body, or ""
	requests int
	path     string
	body     []byte
}

func scenarios(name string) (scenario, error) {
	switch name {
	case "bomb":
		return scenario{upstream: bomb(60 << 20), protocol: "anthropic", requests: 8, path: "/v1/chat/completions",
			body: []byte(`{"model":"claude-bomb","messages":[{"role":"user","content":"hi"}]}`)}, nil
	case "flood":
		return scenario{upstream: flood, protocol: "anthropic", settings: `{"first_byte_timeout_ms":20000}`, requests: 1,
			path: "/v1/chat/completions", body: []byte(`{"model":"claude-flood","stream":true,"messages":[{"role":"user","content":"hi"}]}`)}, nil
	case "count":
		word := strings.Repeat("a", 30<<20)
		return scenario{upstream: notFound, protocol: "anthropic", requests: 3, path: "/v1/messages/count_tokens",
			body: []byte(`{"model":"claude-count","messages":[{"role":"user","content":"` + word + `"}]}`)}, nil
	}
	return scenario{}, fmt.Errorf("unknown scenario %q", name)
}

func run(bin, name string) error {
	sc, err := scenarios(name)
	if err != nil {
		return err
	}
	up := httptest.NewServer(sc.upstream)
	defer up.Close()
	c, err := proc.Start(bin, token)
	if err != nil {
		return err
	}
	defer c.Stop()
	cmd, base := c.Cmd, c.Base
	if err := c.Admin(http.MethodPost, "/api/endpoints", fmt.Sprintf(
		`{"name":"hostile","base_url":%q,"protocol":%q,"api_key":"sk-hostile-0123456789","models":["claude-*"]}`, up.URL, sc.protocol)); err != nil {
		return err
	}
	if sc.settings != "" {
		if err := c.Admin(http.MethodPut, "/api/settings", sc.settings); err != nil {
			return err
		}
	}
	cpu0, hwm0, err := proc.Usage(cmd.Process.Pid)
	if err != nil {
		return err
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range sc.requests {
		wg.Go(func() {
			resp, err := http.Post(base+sc.path, "application/json", bytes.NewReader(sc.body))
			if err != nil {
				fmt.Println("request:", err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Printf("client got %d (%d bytes): %.160s\n", resp.StatusCode, len(b), b)
		})
	}
	wg.Wait()
	cpu1, hwm, err := proc.Usage(cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("%s: wall %.2f s, ccmesh CPU %.2f s, peak RSS %d KiB (%d KiB before the requests)\n",
		name, time.Since(start).Seconds(), cpu1-cpu0, hwm, hwm0)
	return nil
}

// bomb answers a Messages body of size bytes of text, brotli-coded.
func bomb(size int) http.HandlerFunc {
	var buf bytes.Buffer
	bw := brotli.NewWriterLevel(&buf, brotli.BestCompression)
	fmt.Fprint(bw, `{"id":"msg_bomb","type":"message","role":"assistant","model":"claude-bomb","content":[{"type":"text","text":"`)
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for range size >> 20 {
		_, _ = bw.Write(chunk)
	}
	fmt.Fprint(bw, `"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	_ = bw.Close()
	body := buf.Bytes()
	log.Printf("bomb: %d bytes of brotli for %d MiB", len(body), size>>20)
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "br")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	}
}

// flood sends message_start, then pings until ccmesh hangs up.
func flood(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"c\",\"usage\":{\"input_tokens\":1}}}\n\n")
	pings := bytes.Repeat([]byte("event: ping\ndata: {\"type\": \"ping\"}\n\n"), 256)
	rc := http.NewResponseController(w)
	for {
		if _, err := w.Write(pings); err != nil {
			return
		}
		_ = rc.Flush()
	}
}

func notFound(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"no such route"}}`, http.StatusNotFound)
}
