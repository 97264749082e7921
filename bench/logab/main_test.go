package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/store"
)

func TestRunRejectsBadFlags(t *testing.T) {
	tests := []struct {
		name string
		c    config
	}{
		{"no upstream", config{mode: "off", listen: "127.0.0.1:0"}},
		{"on without data", config{mode: "on", upstream: "http://127.0.0.1:1", listen: "127.0.0.1:0"}},
		{"unknown mode", config{mode: "maybe", upstream: "http://127.0.0.1:1", listen: "127.0.0.1:0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := run(t.Context(), tt.c); err == nil {
				t.Errorf("run(%+v) = nil, want an error", tt.c)
			}
		})
	}
}

// TestWriterSink: a record handed to the sink ends up as a row, with the
// fields the app would store.
func TestWriterSink(t *testing.T) {
	ctx := t.Context()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w := store.NewLogWriter(db, store.LogWriterOptions{})
	rec := &proxy.Record{Time: time.UnixMilli(1_700_000_000_000), Protocol: anthropic.Protocol,
		Path: "/v1/messages", ModelAsked: "m", EndpointID: 1, Endpoint: "up", Status: 200,
		AttemptCount: 1, Stream: true, StreamEnd: proxy.StreamComplete}
	writerSink{w}.Log(rec)
	closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.Close(closeCtx); err != nil {
		t.Fatalf("close writer: %v", err)
	}
	rows, _, err := db.ListLogs(ctx, store.LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("got %d rows, want 1", len(rows))
	}
	got := rows[0]
	if got.Endpoint != "up" || got.Status != 200 || got.Path != "/v1/messages" || !got.Stream || got.StreamEnd != string(proxy.StreamComplete) {
		t.Errorf("row = %+v, want endpoint up, status 200, path /v1/messages, a complete stream", got)
	}
}
