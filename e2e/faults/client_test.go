package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// reply is what a client got from ccmesh.
type reply struct {
	status  int // 0 when no response arrived (the client cancelled)
	header  http.Header
	body    []byte
	readErr error // a body that broke off (not io.EOF)
	err     error // no response at all
}

// messageBody is a small Messages request as Claude Code would send it.
func messageBody(model string, stream bool) []byte {
	b, _ := json.Marshal(map[string]any{
		"model": model, "max_tokens": 64, "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": "say hello"}},
	})
	return b
}

func newMessageRequest(ctx context.Context, base, model string, stream bool) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/messages?beta=true",
		bytes.NewReader(messageBody(model, stream)))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	req.Header.Set("X-Api-Key", "client-key-ccmesh-replaces")
	// Claude Code's own; it also stops Go's client from decoding for us.
	req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
	return req, nil
}

// send posts one Messages request to ccmesh and reads the whole answer.
func send(ctx context.Context, hc *http.Client, base, model string, stream bool) reply {
	return sendWith(ctx, hc, base, model, stream, nil)
}

// sendWith is send with extra request headers.
func sendWith(ctx context.Context, hc *http.Client, base, model string, stream bool, header map[string]string) reply {
	req, err := newMessageRequest(ctx, base, model, stream)
	if err != nil {
		return reply{err: err}
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	body, rerr := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: body, readErr: rerr}
}

// sendAndCancel posts a request and goes away mid-request: once the
// upstream has it (non-stream) or after the first text delta (stream).
func sendAndCancel(ctx context.Context, hc *http.Client, base, model string, stream bool, arrived <-chan struct{}) reply {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := newMessageRequest(ctx, base, model, stream)
	if err != nil {
		return reply{err: err}
	}
	if !stream {
		go func() {
			select {
			case <-arrived:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var got bytes.Buffer
	for {
		line, err := br.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			return reply{status: resp.StatusCode, header: resp.Header, body: got.Bytes(), readErr: err}
		}
		if strings.Contains(line, "text_delta") {
			cancel()
			return reply{status: resp.StatusCode, header: resp.Header, body: got.Bytes(), readErr: context.Canceled}
		}
	}
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	name string
	data string
}

func parseSSE(body []byte) []sseEvent {
	var out []sseEvent
	for _, block := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n\n") {
		var ev sseEvent
		for _, line := range strings.Split(block, "\n") {
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				ev.name = value
			case "data":
				ev.data += value
			}
		}
		if ev.name != "" || ev.data != "" {
			out = append(out, ev)
		}
	}
	return out
}

// streamText joins the text deltas of a Messages stream.
func streamText(evs []sseEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.name != "content_block_delta" {
			continue
		}
		var d struct {
			Delta struct{ Text string } `json:"delta"`
		}
		if json.Unmarshal([]byte(ev.data), &d) == nil {
			b.WriteString(d.Delta.Text)
		}
	}
	return b.String()
}

// countEvents counts events named name.
func countEvents(evs []sseEvent, name string) int {
	n := 0
	for _, ev := range evs {
		if ev.name == name {
			n++
		}
	}
	return n
}

// messageText is the text of a non-streamed Messages answer, or an error.
func messageText(body []byte) (string, error) {
	var m struct {
		Type    string `json:"type"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return "", fmt.Errorf("decode message: %w", err)
	}
	if m.Type != "message" || len(m.Content) == 0 {
		return "", fmt.Errorf("not a message: %s", body)
	}
	return m.Content[0].Text, nil
}

// claudeError decodes ccmesh's Claude-shaped error body (docs/BEHAVIOUR.md#inbound-api).
func claudeError(body []byte) (typ, msg string, err error) {
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return "", "", fmt.Errorf("decode error body: %w", err)
	}
	if e.Type != "error" || e.Error.Type == "" || e.Error.Message == "" {
		return "", "", fmt.Errorf("not a Claude error shape: %s", body)
	}
	return e.Error.Type, e.Error.Message, nil
}

// clientTimeout bounds one request: every fault in the matrix must end
// well within it (timeouts are 500 ms).
const clientTimeout = 15 * time.Second
