package main

import (
	"encoding/json"
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
