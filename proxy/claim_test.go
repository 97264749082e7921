package proxy

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// raceOf is the two sides of a race on rr, as tryHedged makes them, with
// the second side started.
func raceOf(t *testing.T, rr http.ResponseWriter) (gate *hedgeGate, a, b *raceSide) {
	t.Helper()
	r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "http://127.0.0.1:3457/v1/messages", nil)
	q := &request{w: rr, r: r, rec: &Record{AttemptCount: 0}, proto: ProtocolAnthropic}
	ea := &endpoint{Endpoint: Endpoint{ID: 1, Name: "a", Protocol: ProtocolAnthropic}}
	eb := &endpoint{Endpoint: Endpoint{ID: 2, Name: "b", Protocol: ProtocolAnthropic}}
	gate = &hedgeGate{winner: -1}
	a, b = q.side(gate, 0, ea), q.side(gate, 1, eb)
	t.Cleanup(func() { gate.cancel[0](nil); gate.cancel[1](nil) })
	if _, ok := gate.startSecond(func() (permit, error) { return permit{}, nil }); !ok {
		t.Fatal("startSecond: the second side did not start")
	}
	return gate, a, b
}

// TestRaceWriterClaims (item 1): a side's first write to the client claims
// the race by itself, whether it is the status, the body or a flush, with
// no claim called before it; the other side's context is stopped, the
// winner's count of attempts is the race's, and the loser's headers,
// status and body never reach the client.
func TestRaceWriterClaims(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first func(w http.ResponseWriter)
		code  int
		body  string
	}{
		{"status", func(w http.ResponseWriter) { w.WriteHeader(http.StatusCreated) }, http.StatusCreated, "!"},
		{"body", func(w http.ResponseWriter) { _, _ = w.Write([]byte("won")) }, http.StatusOK, "won!"},
		{"flush", func(w http.ResponseWriter) { _ = http.NewResponseController(w).Flush() }, http.StatusOK, "!"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rr := httptest.NewRecorder()
			gate, a, b := raceOf(t, rr)
			a.q.w.Header().Set("X-Side", "a")
			// As writeHeader does, before the race is decided: one attempt.
			setCCMeshHeaders(a.q.w.Header(), a.q.rec.Endpoint, a.q.rec.AttemptCount)
			b.q.w.Header().Set("X-Side", "b") // before a writes: its own copy
			tc.first(a.q.w)
			if got := gate.winner; got != 0 {
				t.Fatalf("winner after the first side's first write = %d, want 0", got)
			}
			if got := context.Cause(b.q.ctx()); !errors.Is(got, errHedgeLost) {
				t.Errorf("the other side's context cause = %v, want %v", got, errHedgeLost)
			}
			if got := a.q.rec.AttemptCount; got != 2 {
				t.Errorf("winner's attempt count = %d, want 2", got)
			}
			b.q.w.Header().Set("X-Loser", "1")
			b.q.w.WriteHeader(http.StatusTeapot)
			n, err := b.q.w.Write([]byte("lost"))
			if n != 0 || !errors.Is(err, errHedgeLost) {
				t.Errorf("loser's Write = %d, %v; want 0, %v", n, err, errHedgeLost)
			}
			if err := http.NewResponseController(b.q.w).Flush(); !errors.Is(err, errHedgeLost) {
				t.Errorf("loser's Flush = %v, want %v", err, errHedgeLost)
			}
			_, _ = a.q.w.Write([]byte("!"))
			if rr.Code != tc.code {
				t.Errorf("client's status = %d, want %d", rr.Code, tc.code)
			}
			h := rr.Result().Header
			for k, want := range map[string]string{"X-Side": "a", "X-Loser": "", "X-Ccmesh-Endpoint": "a", "X-Ccmesh-Attempts": "2"} {
				if got := h.Get(k); got != want {
					t.Errorf("client's header %s = %q, want %q", k, got, want)
				}
			}
			if got := rr.Body.String(); got != tc.body {
				t.Errorf("client's body = %q, want %q (the winner's only)", got, tc.body)
			}
		})
	}
}
