package main

import (
	"bytes"
	"net/http"
	"strings"
)

// holdPrelude makes the baseline hold a stream's first event back, with
// the response header, until the second event has come, then send all of
// it at once, as ccmesh's prelude hold does (docs/BEHAVIOUR.md#streaming)
// but with nothing else of ccmesh. Run side by side with the plain
// baseline, it shows what holding costs the client by itself: the first
// content event then also carries the response header, which the client
// has to read and hand over before the event (bench/NOTES.md).
func holdPrelude(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hw := &holdWriter{ResponseWriter: w}
		h.ServeHTTP(hw, r)
		hw.release() // a stream shorter than two events, or not a stream
	})
}

type holdWriter struct {
	http.ResponseWriter
	status   int
	held     []byte
	released bool
}

func (h *holdWriter) WriteHeader(status int) {
	if h.status == 0 {
		h.status = status
	}
	if !strings.HasPrefix(h.Header().Get("Content-Type"), "text/event-stream") {
		h.release()
	}
}

func (h *holdWriter) Write(p []byte) (int, error) {
	if h.released {
		return h.ResponseWriter.Write(p)
	}
	if h.status == 0 {
		h.WriteHeader(http.StatusOK)
		if h.released {
			return h.ResponseWriter.Write(p)
		}
	}
	h.held = append(h.held, p...)
	if bytes.Count(h.held, []byte("\n\n")) >= 2 {
		h.release()
		if f, ok := h.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
	}
	return len(p), nil
}

// Flush passes only once the hold is over.
func (h *holdWriter) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok && h.released {
		f.Flush()
	}
}

func (h *holdWriter) release() {
	if h.released {
		return
	}
	h.released = true
	if h.status != 0 {
		h.ResponseWriter.WriteHeader(h.status)
	}
	if len(h.held) > 0 {
		_, _ = h.ResponseWriter.Write(h.held)
		h.held = nil
	}
}
