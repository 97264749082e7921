package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// geminiClient is Gemini CLI's side of the Gemini API (docs/BEHAVIOUR.md#inbound-api): the model
// and the stream flag in the path, streams as SSE (?alt=sse), the key in
// x-goog-api-key.
type geminiClient struct{}

// The Gemini run: a Gemini client, A reached through the
// gemini→anthropic translation, B an Anthropic endpoint, so every
// attempt translates (docs/BEHAVIOUR.md#translation).
var geminiMatrix = variant{client: geminiClient{}, bProtocol: "anthropic", tag: "gem-"}

// testGeminiFaultMatrix runs the matrix's rows with a Gemini client.
func testGeminiFaultMatrix(t *testing.T, bin string) { runMatrix(t, bin, geminiMatrix) }

func (geminiClient) protocol() string { return "gemini" }

func (geminiClient) newRequest(ctx context.Context, base, model string, stream bool) (*http.Request, error) {
	body, _ := json.Marshal(map[string]any{
		"contents":         []any{map[string]any{"role": "user", "parts": []any{map[string]string{"text": "say hello"}}}},
		"generationConfig": map[string]any{"maxOutputTokens": 64},
	})
	url := base + "/v1beta/models/" + model + ":generateContent"
	if stream {
		url = base + "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Goog-Api-Key", "gemini-client-key-ccmesh-replaces")
	// Gemini CLI's own; it also stops Go's client from decoding for us.
	req.Header.Set("Accept-Encoding", "gzip, deflate")
	return req, nil
}

// geminiChunk is the part of a GenerateContentResponse (an answer or one
// stream chunk) the matrix reads.
type geminiChunk struct {
	Candidates []struct {
		Content struct {
			Role  string `json:"role"`
			Parts []struct {
				Text    *string `json:"text"`
				Thought bool    `json:"thought"`
			} `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount     int `json:"promptTokenCount"`
		CandidatesTokenCount int `json:"candidatesTokenCount"`
	} `json:"usageMetadata"`
	ResponseID string          `json:"responseId"`
	Error      json.RawMessage `json:"error"`
}

func (c geminiChunk) text() string {
	var b strings.Builder
	for _, cand := range c.Candidates {
		for _, p := range cand.Content.Parts {
			if p.Text != nil && !p.Thought {
				b.WriteString(*p.Text)
			}
		}
	}
	return b.String()
}

func geminiChunks(evs []sseEvent) ([]geminiChunk, error) {
	out := make([]geminiChunk, 0, len(evs))
	for i, ev := range evs {
		var c geminiChunk
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil {
			return nil, fmt.Errorf("decode chunk %d: %w", i, err)
		}
		out = append(out, c)
	}
	return out, nil
}

func (geminiClient) text(body []byte) (string, error) {
	var c geminiChunk
	if err := json.Unmarshal(body, &c); err != nil {
		return "", fmt.Errorf("decode GenerateContentResponse: %w", err)
	}
	if len(c.Candidates) == 0 || c.Candidates[0].FinishReason == "" || len(c.Error) > 0 {
		return "", fmt.Errorf("not a complete GenerateContentResponse: %s", body)
	}
	return c.text(), nil
}

func (geminiClient) streamText(evs []sseEvent) string {
	var b strings.Builder
	chunks, _ := geminiChunks(evs)
	for _, c := range chunks {
		b.WriteString(c.text())
	}
	return b.String()
}

func (geminiClient) isContent(line string) bool {
	data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:")
	if !ok {
		return false
	}
	var c geminiChunk
	return json.Unmarshal([]byte(strings.TrimSpace(data)), &c) == nil && c.text() != ""
}

func (geminiClient) checkComplete(t *testing.T, evs []sseEvent, body []byte, name string) {
	t.Helper()
	chunks, err := geminiChunks(evs)
	if err != nil {
		t.Fatalf("stream: %v; body:\n%s", err, body)
	}
	var finishes int
	var usage bool
	for i, c := range chunks {
		if evs[i].name != "" {
			t.Errorf("chunk %d is named %q; Gemini's chunks are plain data events", i, evs[i].name)
		}
		if c.ResponseID != "msg_"+name {
			t.Errorf("chunk %d has responseId %q, want %s's msg_%s (nothing of another endpoint may reach the client)", i, c.ResponseID, name, name)
		}
		if len(c.Error) > 0 {
			t.Errorf("chunk %d of a complete stream carries an error: %s", i, c.Error)
		}
		for _, cand := range c.Candidates {
			if cand.FinishReason != "" {
				finishes++
			}
		}
		if u := c.UsageMetadata; u != nil && u.PromptTokenCount == 7 && u.CandidatesTokenCount == 4 {
			usage = true
		}
	}
	if finishes != 1 {
		t.Errorf("chunks with a finishReason = %d, want 1, the last; body:\n%s", finishes, body)
	}
	if !usage {
		t.Errorf("no usageMetadata with 7/4 tokens, the upstream's usage: %s", body)
	}
}

func (geminiClient) checkBroken(t *testing.T, evs []sseEvent, body []byte) {
	t.Helper()
	last := evs[len(evs)-1]
	msg, err := geminiError([]byte(last.data))
	if err != nil {
		t.Fatalf("last chunk: %v; want a chunk with a Gemini error object (docs/BEHAVIOUR.md#streaming); body:\n%s", err, body)
	}
	if msg == "" {
		t.Errorf("the error chunk has no message: %s", last.data)
	}
	chunks, err := geminiChunks(evs[:len(evs)-1])
	if err != nil {
		t.Fatalf("stream: %v; body:\n%s", err, body)
	}
	for i, c := range chunks {
		for _, cand := range c.Candidates {
			if cand.FinishReason != "" {
				t.Errorf("chunk %d of a broken stream has finishReason %q, as if complete: %s", i, cand.FinishReason, body)
			}
		}
	}
}

func (geminiClient) errorMessage(body []byte) (string, error) { return geminiError(body) }

// geminiError reads a Gemini error body: {"error": {code, message, status}}.
func geminiError(body []byte) (string, error) {
	var e struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return "", fmt.Errorf("decode Gemini error: %w", err)
	}
	if e.Error == nil || e.Error.Code < 400 || e.Error.Status == "" {
		return "", fmt.Errorf("not a Gemini error (code, message, status): %s", body)
	}
	return e.Error.Message, nil
}
