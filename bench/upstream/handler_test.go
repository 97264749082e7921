package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

type sseEvent struct {
	Name string
	Seq  int   `json:"seq"`
	TS   int64 `json:"ts"`
}

func parseEvents(t *testing.T, body string) []sseEvent {
	t.Helper()
	var out []sseEvent
	for _, block := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		name, data, ok := strings.Cut(block, "\ndata: ")
		if !ok || !strings.HasPrefix(name, "event: ") {
			t.Fatalf("malformed event %q", block)
		}
		var e sseEvent
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatalf("event data %q: %v", data, err)
		}
		e.Name = strings.TrimPrefix(name, "event: ")
		out = append(out, e)
	}
	return out
}

func TestStream(t *testing.T) {
	tests := []struct {
		events    int
		wantNames []string
	}{
		{5, []string{"message_start", "content_block_start", "content_block_stop", "message_delta", "message_stop"}},
		{7, []string{"message_start", "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}},
	}
	for _, tt := range tests {
		t.Run(strings.Repeat("e", tt.events), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const interval = 20 * time.Millisecond
				h := &Handler{Events: tt.events, Interval: interval}
				start := time.Now()
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(`{"model":"m","stream":true}`))
				h.ServeHTTP(rec, req)
				if got := rec.Header().Get("Content-Type"); got != "text/event-stream" {
					t.Errorf("Content-Type = %q, want text/event-stream", got)
				}
				evs := parseEvents(t, rec.Body.String())
				if len(evs) != len(tt.wantNames) {
					t.Fatalf("got %d events, want %d", len(evs), len(tt.wantNames))
				}
				for i, e := range evs {
					if e.Name != tt.wantNames[i] || e.Seq != i {
						t.Errorf("event %d = %s seq %d, want %s seq %d", i, e.Name, e.Seq, tt.wantNames[i], i)
					}
					// The fake clock makes the schedule exact.
					if want := start.Add(time.Duration(i) * interval).UnixNano(); e.TS != want {
						t.Errorf("event %d ts = %d, want %d", i, e.TS, want)
					}
				}
			})
		})
	}
}

func TestNonStreamAndNotFound(t *testing.T) {
	tests := []struct {
		name, method, path, body string
		wantStatus               int
		wantType                 string
	}{
		{"message", http.MethodPost, "/v1/messages", `{"model":"m"}`, 200, "application/json"},
		{"stream false", http.MethodPost, "/v1/messages", `{"model":"m","stream":false}`, 200, "application/json"},
		{"wrong path", http.MethodPost, "/v1/other", `{}`, 404, "text/plain; charset=utf-8"},
		{"wrong method", http.MethodGet, "/v1/messages", ``, 404, "text/plain; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Handler{Events: 16, Interval: time.Millisecond}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, strings.NewReader(tt.body)))
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			if got := rec.Header().Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", got, tt.wantType)
			}
			if tt.wantStatus == 200 && !json.Valid(rec.Body.Bytes()) {
				t.Errorf("body is not JSON: %q", rec.Body.String())
			}
		})
	}
}

// chatData is the data of each event of a Chat Completions stream.
func chatData(t *testing.T, body string) []string {
	t.Helper()
	var out []string
	for _, block := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(block, "data: ")
		if !ok {
			t.Fatalf("malformed chunk %q", block)
		}
		out = append(out, data)
	}
	return out
}

func TestChatStream(t *testing.T) {
	for _, usage := range []bool{false, true} {
		t.Run(fmt.Sprintf("usage=%t", usage), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const interval = 20 * time.Millisecond
				const events = 7
				h := &Handler{Events: events, Interval: interval}
				start := time.Now()
				body := `{"model":"m","stream":true}`
				if usage {
					body = `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
				if got := rec.Header().Get("Content-Type"); got != "text/event-stream" {
					t.Errorf("Content-Type = %q, want text/event-stream", got)
				}
				data := chatData(t, rec.Body.String())
				want := events
				if !usage {
					want-- // no usage chunk
				}
				if len(data) != want {
					t.Fatalf("got %d chunks, want %d: %q", len(data), want, data)
				}
				if data[len(data)-1] != "[DONE]" {
					t.Errorf("last chunk %q, want [DONE]", data[len(data)-1])
				}
				type chunk struct {
					Choices []struct {
						Delta struct {
							Role    string  `json:"role"`
							Content *string `json:"content"`
						} `json:"delta"`
						FinishReason *string `json:"finish_reason"`
					} `json:"choices"`
					Usage *struct {
						CompletionTokens int `json:"completion_tokens"`
					} `json:"usage"`
				}
				var cs []chunk
				for _, d := range data[:len(data)-1] {
					var c chunk
					if err := json.Unmarshal([]byte(d), &c); err != nil {
						t.Fatalf("chunk %q: %v", d, err)
					}
					cs = append(cs, c)
				}
				if cs[0].Choices[0].Delta.Role != "assistant" {
					t.Errorf("first chunk %q has no role", data[0])
				}
				// Content chunks 1 … events−4 carry seq and their send time.
				for seq := 1; seq <= events-4; seq++ {
					want := fmt.Sprintf("seq=%d ts=%d ", seq, start.Add(time.Duration(seq)*interval).UnixNano())
					if got := cs[seq].Choices[0].Delta.Content; got == nil || *got != want {
						t.Errorf("chunk %d content = %v, want %q", seq, got, want)
					}
				}
				if f := cs[events-3].Choices[0].FinishReason; f == nil || *f != "stop" {
					t.Errorf("chunk %d = %q, want the finish", events-3, data[events-3])
				}
				if usage && (cs[events-2].Usage == nil || cs[events-2].Usage.CompletionTokens != events-4) {
					t.Errorf("chunk %d = %q, want the usage", events-2, data[events-2])
				}
			})
		})
	}
}

func TestChatNonStream(t *testing.T) {
	h := &Handler{Events: 16, Interval: time.Millisecond}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{"model":"m","stream":false}`)))
	var got struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
		t.Fatalf("status %d, body %q: %v", rec.Code, rec.Body.String(), err)
	}
	if got.Object != "chat.completion" || len(got.Choices) != 1 || got.Choices[0].Message.Content == "" {
		t.Errorf("answer %q is no chat completion", rec.Body.String())
	}
}
