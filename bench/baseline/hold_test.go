package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHoldPrelude: a stream's header and first event go out only with its
// second event; anything else passes at once.
func TestHoldPrelude(t *testing.T) {
	rec := httptest.NewRecorder()
	hw := &holdWriter{ResponseWriter: rec}
	hw.Header().Set("Content-Type", "text/event-stream")
	hw.WriteHeader(http.StatusOK)
	_, _ = hw.Write([]byte("event: message_start\ndata: {}\n\n"))
	hw.Flush()
	if rec.Body.Len() != 0 || rec.Flushed {
		t.Fatalf("after the first event the client got %q (flushed %v), want nothing", rec.Body.String(), rec.Flushed)
	}
	_, _ = hw.Write([]byte("event: content_block_start\ndata: {}\n\n"))
	want := "event: message_start\ndata: {}\n\nevent: content_block_start\ndata: {}\n\n"
	if rec.Code != http.StatusOK || rec.Body.String() != want || !rec.Flushed {
		t.Fatalf("after the second event: %d %q flushed %v, want 200 %q flushed", rec.Code, rec.Body.String(), rec.Flushed, want)
	}
	_, _ = hw.Write([]byte("event: ping\n\n"))
	if got := rec.Body.String(); got != want+"event: ping\n\n" {
		t.Fatalf("after the hold: %q", got)
	}

	rec = httptest.NewRecorder()
	hw = &holdWriter{ResponseWriter: rec}
	hw.Header().Set("Content-Type", "application/json")
	hw.WriteHeader(http.StatusTeapot)
	_, _ = hw.Write([]byte(`{"a":1}`))
	if rec.Code != http.StatusTeapot || rec.Body.String() != `{"a":1}` {
		t.Fatalf("a JSON answer: %d %q, want it passed at once", rec.Code, rec.Body.String())
	}
}
