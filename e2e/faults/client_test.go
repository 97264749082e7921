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
	"testing"
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

// clientProto is a protocol the matrix's client speaks (docs/BEHAVIOUR.md#inbound-api): how it
// asks and how it reads what ccmesh answers.
type clientProto interface {
	// protocol is the protocol's name as the request log's translation
	// names it ("anthropic", "openai-chat").
	protocol() string
	newRequest(ctx context.Context, base, model string, stream bool) (*http.Request, error)
	// text is the text of a non-streamed answer, or an error when the body
	// is not a complete answer of the protocol.
	text(body []byte) (string, error)
	// streamText joins the text deltas of a stream.
	streamText(evs []sseEvent) string
	// isContent says whether one line of a stream carries answer text.
	isContent(line string) bool
	// checkComplete checks a stream that must be endpoint name's whole
	// answer, once, and nothing else.
	checkComplete(t *testing.T, evs []sseEvent, body []byte, name string)
	// checkBroken checks a stream that broke after its first delta: it ends
	// with the protocol's error and nothing that looks complete
	// (docs/BEHAVIOUR.md#streaming).
	checkBroken(t *testing.T, evs []sseEvent, body []byte)
	// errorMessage is the message of an error ccmesh wrote itself, in the
	// protocol's shape (docs/BEHAVIOUR.md#inbound-api).
	errorMessage(body []byte) (string, error)
}

// claudeClient is Claude Code: Anthropic Messages.
type claudeClient struct{}

// chatClient is an OpenAI Chat Completions client that asks for usage in
// its streams, as the OpenAI SDKs do when told to.
type chatClient struct{}

// messageBody is a small Messages request as Claude Code would send it.
func messageBody(model string, stream bool) []byte {
	b, _ := json.Marshal(map[string]any{
		"model": model, "max_tokens": 64, "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": "say hello"}},
	})
	return b
}

func newMessageRequest(ctx context.Context, base, model string, stream bool) (*http.Request, error) {
	return claudeClient{}.newRequest(ctx, base, model, stream)
}

func (claudeClient) protocol() string { return "anthropic" }

func (claudeClient) newRequest(ctx context.Context, base, model string, stream bool) (*http.Request, error) {
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

func (chatClient) protocol() string { return "openai-chat" }

func (chatClient) newRequest(ctx context.Context, base, model string, stream bool) (*http.Request, error) {
	doc := map[string]any{
		"model": model, "max_tokens": 64, "stream": stream,
		"messages": []map[string]string{{"role": "user", "content": "say hello"}},
	}
	if stream {
		doc["stream_options"] = map[string]bool{"include_usage": true}
	}
	body, _ := json.Marshal(doc)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer client-key-ccmesh-replaces")
	// The OpenAI SDKs' own; it also stops Go's client from decoding for us.
	req.Header.Set("Accept-Encoding", "gzip, deflate")
	return req, nil
}

// send posts one Messages request to ccmesh and reads the whole answer.
func send(ctx context.Context, hc *http.Client, base, model string, stream bool) reply {
	return sendAs(ctx, hc, claudeClient{}, base, model, stream, nil)
}

// sendWith is send with extra request headers.
func sendWith(ctx context.Context, hc *http.Client, base, model string, stream bool, header map[string]string) reply {
	return sendAs(ctx, hc, claudeClient{}, base, model, stream, header)
}

// sendAs posts one request in cp's protocol, with extra request headers,
// and reads the whole answer.
func sendAs(ctx context.Context, hc *http.Client, cp clientProto, base, model string, stream bool, header map[string]string) reply {
	req, err := cp.newRequest(ctx, base, model, stream)
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

// sendAndCancel posts a request in cp's protocol and goes away
// mid-request: once the upstream has it (non-stream) or after the first
// line carrying text (stream).
func sendAndCancel(ctx context.Context, hc *http.Client, cp clientProto, base, model string, stream bool, arrived <-chan struct{}) reply {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := cp.newRequest(ctx, base, model, stream)
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
		if cp.isContent(line) {
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

// openAIError decodes an OpenAI-shaped error, {"error":{"message","type","code"}}: ccmesh's own
// answer (docs/BEHAVIOUR.md#inbound-api) or the chunk that ends a broken Chat stream
// (docs/BEHAVIOUR.md#streaming).
func openAIError(body []byte) (typ, code, msg string, err error) {
	var e struct {
		Error *struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return "", "", "", fmt.Errorf("decode error body: %w (body %s)", err, body)
	}
	if e.Error == nil || e.Error.Message == "" || e.Error.Type == "" || json.Unmarshal(e.Error.Code, &code) != nil || code == "" {
		return "", "", "", fmt.Errorf("not an OpenAI error shape with message, type and code: %s", body)
	}
	return e.Error.Type, code, e.Error.Message, nil
}

func (claudeClient) text(body []byte) (string, error) { return messageText(body) }

func (claudeClient) streamText(evs []sseEvent) string { return streamText(evs) }

func (claudeClient) isContent(line string) bool { return strings.Contains(line, "text_delta") }

func (claudeClient) checkComplete(t *testing.T, evs []sseEvent, body []byte, name string) {
	t.Helper()
	if got := countEvents(evs, "message_start"); got != 1 {
		t.Errorf("message_start events = %d, want 1 (a held prelude of another endpoint must not reach the client)", got)
	}
	if !strings.Contains(string(body), "msg_"+name) {
		t.Errorf("stream does not carry %s's message id msg_%s: %s", name, name, body)
	}
	if got := countEvents(evs, "message_stop"); got != 1 {
		t.Errorf("message_stop events = %d, want 1", got)
	}
}

func (claudeClient) checkBroken(t *testing.T, evs []sseEvent, body []byte) {
	t.Helper()
	if countEvents(evs, "message_stop") != 0 {
		t.Errorf("a broken stream ended with message_stop, as if complete: %s", body)
	}
	last := evs[len(evs)-1]
	if last.name != "error" {
		t.Fatalf("last event = %q, want an `event: error` (docs/BEHAVIOUR.md#streaming); body:\n%s", last.name, body)
	}
	typ, _, err := claudeError([]byte(last.data))
	if err != nil {
		t.Fatalf("error event: %v", err)
	}
	if typ != "overloaded_error" && typ != "api_error" {
		t.Errorf("error event type = %q, want overloaded_error or api_error", typ)
	}
}

func (claudeClient) errorMessage(body []byte) (string, error) {
	_, msg, err := claudeError(body)
	return msg, err
}

// chatChunk is the part of a Chat stream chunk the matrix reads.
type chatChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Choices []struct {
		Delta struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// chatChunks decodes a Chat stream's data chunks, [DONE] left out; an
// event that is not a chunk is an error.
func chatChunks(evs []sseEvent) ([]chatChunk, error) {
	var out []chatChunk
	for _, ev := range evs {
		if ev.data == "[DONE]" {
			continue
		}
		if ev.name != "" {
			return nil, fmt.Errorf("a Chat stream has no named events, got `event: %s`", ev.name)
		}
		var c chatChunk
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
			return nil, fmt.Errorf("chunk %q: %w", ev.data, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func countDone(evs []sseEvent) int {
	n := 0
	for _, ev := range evs {
		if ev.data == "[DONE]" {
			n++
		}
	}
	return n
}

func (chatClient) text(body []byte) (string, error) {
	var m struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return "", fmt.Errorf("decode chat.completion: %w", err)
	}
	if m.Object != "chat.completion" || len(m.Choices) == 0 || m.Choices[0].Message.Content == nil || m.Choices[0].FinishReason == "" {
		return "", fmt.Errorf("not a complete chat.completion: %s", body)
	}
	return *m.Choices[0].Message.Content, nil
}

func (chatClient) streamText(evs []sseEvent) string {
	var b strings.Builder
	chunks, _ := chatChunks(evs)
	for _, c := range chunks {
		for _, ch := range c.Choices {
			b.WriteString(ch.Delta.Content)
		}
	}
	return b.String()
}

func (chatClient) isContent(line string) bool {
	data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
	if !ok {
		return false
	}
	var c chatChunk
	if json.Unmarshal([]byte(strings.TrimSpace(data)), &c) != nil {
		return false
	}
	for _, ch := range c.Choices {
		if ch.Delta.Content != "" {
			return true
		}
	}
	return false
}

func (chatClient) checkComplete(t *testing.T, evs []sseEvent, body []byte, name string) {
	t.Helper()
	chunks, err := chatChunks(evs)
	if err != nil {
		t.Fatalf("stream: %v; body:\n%s", err, body)
	}
	var roles, finishes int
	var usage bool
	for i, c := range chunks {
		if c.ID != "chatcmpl-"+name || c.Object != "chat.completion.chunk" {
			t.Errorf("chunk %d is id %q object %q, want %s's chatcmpl-%s chat.completion.chunk (nothing of another endpoint may reach the client)", i, c.ID, c.Object, name, name)
		}
		if c.Error != nil {
			t.Errorf("chunk %d of a complete stream carries an error: %s", i, c.Error)
		}
		for _, ch := range c.Choices {
			if ch.Delta.Role != "" {
				roles++
			}
			if ch.FinishReason != nil {
				finishes++
			}
		}
		if c.Usage != nil && c.Usage.PromptTokens == 7 && c.Usage.CompletionTokens == 4 {
			usage = true
		}
	}
	if roles != 1 {
		t.Errorf("chunks with a role = %d, want 1 (a held prelude of another endpoint must not reach the client)", roles)
	}
	if finishes != 1 {
		t.Errorf("chunks with a finish_reason = %d, want 1", finishes)
	}
	if !usage {
		t.Errorf("no usage chunk with 7/4 tokens, which the client asked for: %s", body)
	}
	if got := countDone(evs); got != 1 || evs[len(evs)-1].data != "[DONE]" {
		t.Errorf("the stream has %d [DONE], want exactly one, last; body:\n%s", got, body)
	}
}

func (chatClient) checkBroken(t *testing.T, evs []sseEvent, body []byte) {
	t.Helper()
	if countDone(evs) != 0 {
		t.Errorf("a broken stream ended with [DONE], as if complete: %s", body)
	}
	last := evs[len(evs)-1]
	if last.name != "" {
		t.Errorf("last event is named %q; a Chat stream's error is a plain data chunk", last.name)
	}
	typ, code, _, err := openAIError([]byte(last.data))
	if err != nil {
		t.Fatalf("last chunk: %v; want a chunk with an error object (docs/BEHAVIOUR.md#streaming); body:\n%s", err, body)
	}
	if typ != "server_error" || code != "upstream_error" {
		t.Errorf("error chunk type/code = %s/%s, want server_error/upstream_error (docs/BEHAVIOUR.md#streaming)", typ, code)
	}
	chunks, err := chatChunks(evs)
	if err != nil {
		t.Fatalf("stream: %v; body:\n%s", err, body)
	}
	for i, c := range chunks {
		for _, ch := range c.Choices {
			if ch.FinishReason != nil {
				t.Errorf("chunk %d of a broken stream has finish_reason %q, as if complete: %s", i, *ch.FinishReason, body)
			}
		}
	}
}

func (chatClient) errorMessage(body []byte) (string, error) {
	_, _, msg, err := openAIError(body)
	return msg, err
}

// clientTimeout bounds one request: every fault in the matrix must end
// well within it (timeouts are 500 ms).
const clientTimeout = 15 * time.Second
