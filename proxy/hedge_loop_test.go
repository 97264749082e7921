package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// The attempt loop's races in fake time (docs/BEHAVIOUR.md#hedging): the
// upstreams are fake round trippers, so every start and duration is exact.

type handler = func(*http.Request) (*http.Response, error)

// after answers with h once d has passed, unless the request is cancelled
// first.
func after(d time.Duration, h handler) handler {
	return func(req *http.Request) (*http.Response, error) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return h(req)
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
}

func okStream() handler { return sse(proxytest.AnthropicStream(12, 34, "hel", "lo"), false) }

// serveHdr is bubble.serve with request headers, a streamed body.
func (b *bubble) serveHdr(t *testing.T, hdr ...string) (*httptest.ResponseRecorder, *Record) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "http://127.0.0.1:3457/v1/messages", strings.NewReader(claudeStreamBody))
	req.Header.Set("anthropic-version", "2023-06-01")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	b.srv.ServeHTTP(w, req)
	return w, <-b.sink.ch
}

const hedgeDelay = 20 * time.Millisecond

// TestHedgeRecordMatchesHeaders (item 20): after a race the client's
// x-ccmesh-attempts and x-fallback-triggered say what the record says,
// whichever side won, and each side's start and duration are its own.
func TestHedgeRecordMatchesHeaders(t *testing.T) {
	type span struct{ start, dur time.Duration }
	for _, tc := range []struct {
		name  string
		a, b  handler
		parts string
		spans []span // per attempt: start after the request's, duration
	}{
		// a answers 30 ms in, after the racer started at 20 ms; the racer
		// is stopped then, 10 ms into its attempt.
		{"first attempt wins", after(30*time.Millisecond, okStream()), hang, "a:won,b:cancelled",
			[]span{{0, 30 * time.Millisecond}, {hedgeDelay, 10 * time.Millisecond}}},
		// b starts at 20 ms and answers 30 ms into its own attempt.
		{"racer wins", hang, after(30*time.Millisecond, okStream()), "a:cancelled,b:won",
			[]span{{0, 50 * time.Millisecond}, {hedgeDelay, 30 * time.Millisecond}}},
		{"answered before the delay", after(10*time.Millisecond, okStream()), hang, "a:",
			[]span{{0, 10 * time.Millisecond}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBubble(Config{Endpoints: []Endpoint{fakeEp(1, "a"), fakeEp(2, "b")}, HedgeAfter: hedgeDelay, FirstByteTimeout: 10 * time.Second},
					map[string]handler{"a.test": tc.a, "b.test": tc.b})
				start := time.Now()
				w, rec := b.serveHdr(t)
				if w.Code != http.StatusOK || hedgeParts(rec) != tc.parts {
					t.Fatalf("status %d attempts %s, want 200 after %s", w.Code, hedgeParts(rec), tc.parts)
				}
				n := len(rec.Attempts)
				if got, want := w.Header().Get("X-Ccmesh-Attempts"), strconv.Itoa(n); got != want || rec.AttemptCount != n {
					t.Errorf("x-ccmesh-attempts %s, record's attempt_count %d; want both %s", got, rec.AttemptCount, want)
				}
				if got, want := w.Header().Get("X-Fallback-Triggered"), strconv.FormatBool(n > 1); got != want {
					t.Errorf("x-fallback-triggered %s, want %s", got, want)
				}
				for i, sp := range tc.spans {
					at := rec.Attempts[i]
					if got := at.StartedAt.Sub(start); got != sp.start {
						t.Errorf("attempt %d (%s) started %v in, want %v", i, at.Endpoint, got, sp.start)
					}
					if got := time.Duration(at.DurationMs) * time.Millisecond; got != sp.dur {
						t.Errorf("attempt %d (%s) took %v, want %v", i, at.Endpoint, got, sp.dur)
					}
				}
			})
		})
	}
}

// TestHedgeFailoverAttempt (item 19): the request's one race may start
// from a failover attempt that stalls, not only from its first attempt;
// it races the next candidate of the walk and counts in the budget.
func TestHedgeFailoverAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// a is rate limited (next at once), b stalls, c answers.
		b := newBubble(Config{Endpoints: []Endpoint{fakeEp(1, "a"), fakeEp(2, "b"), fakeEp(3, "c")}, HedgeAfter: hedgeDelay, FirstByteTimeout: 10 * time.Second},
			map[string]handler{"a.test": jsonResp(429, `{}`), "b.test": hang, "c.test": okStream()})
		start := time.Now()
		w, rec := b.serveHdr(t)
		if w.Code != http.StatusOK || w.Header().Get("X-Ccmesh-Endpoint") != "c" {
			t.Fatalf("status %d via %q, want 200 via c", w.Code, w.Header().Get("X-Ccmesh-Endpoint"))
		}
		if got, want := hedgeParts(rec), "a:,b:cancelled,c:won"; got != want {
			t.Errorf("attempts %s, want %s", got, want)
		}
		if got := time.Since(start); got != hedgeDelay {
			t.Errorf("took %v, want the hedge delay %v (not b's first-byte timeout)", got, hedgeDelay)
		}
		if got := w.Header().Get("X-Ccmesh-Attempts"); got != "3" || rec.AttemptCount != 3 {
			t.Errorf("x-ccmesh-attempts %s, attempt_count %d; want 3", got, rec.AttemptCount)
		}
		if b.rt.count("c.test") != 1 {
			t.Errorf("c got %d requests, want 1", b.rt.count("c.test"))
		}
	})
}

// TestHedgeCandidate (item 19): which attempt is raced, and with what.
func TestHedgeCandidate(t *testing.T) {
	a, b, c := &endpoint{Endpoint: Endpoint{ID: 1, HedgeAfter: HedgeSetting}}, &endpoint{Endpoint: Endpoint{ID: 2, HedgeAfter: HedgeSetting}}, &endpoint{Endpoint: Endpoint{ID: 3, HedgeAfter: HedgeSetting}}
	failed := func(e *endpoint, n int) []attempt {
		var out []attempt
		for range n {
			out = append(out, attempt{e: e})
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		e        *endpoint
		attempts []attempt
		budget   int
		hedged   bool
		explicit bool
		path     string
		want     *endpoint
	}{
		{"first attempt", a, nil, 6, false, false, "", b},
		{"failover attempt", b, failed(a, 2), 6, false, false, "", c},
		{"retry on the same endpoint", a, failed(a, 1), 6, false, false, "", b},
		{"last in the walk", c, failed(b, 2), 6, false, false, "", nil},
		{"budget has room for one", b, failed(a, 5), 6, false, false, "", nil},
		{"budget has room for two", b, failed(a, 4), 6, false, false, "", c},
		{"already raced once", b, failed(a, 2), 6, true, false, "", nil},
		{"explicit endpoint", a, nil, 3, false, true, "", nil},
		{"count_tokens", a, nil, 6, false, false, countTokensPath, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/v1/messages"
			if tc.path != "" {
				path = tc.path
			}
			q := &request{
				r:        httptest.NewRequestWithContext(context.Background(), http.MethodPost, path, nil),
				snap:     &snapshot{cfg: Config{HedgeAfter: hedgeDelay}},
				attempts: tc.attempts, budget: tc.budget, hedged: tc.hedged,
				order:   []*endpoint{a, b, c},
				inbound: conv.Inbound{Count: tc.path == countTokensPath},
			}
			if tc.explicit {
				q.explicit = a
			}
			if got := q.hedgeCandidate(tc.e); got != tc.want {
				t.Errorf("raced with %v, want %v", epID(got), epID(tc.want))
			}
		})
	}
}

func epID(e *endpoint) any {
	if e == nil {
		return nil
	}
	return e.ID
}

// TestSessionAffinityAfterRace (item 18): under the session strategy the
// affinity table records the endpoint that won a race, also when it was
// the first attempt (the cancelled racer comes after it in the history),
// and a conversation that keeps using its endpoint keeps it past an hour.
func TestSessionAffinityAfterRace(t *testing.T) {
	onA := keyFirstOn(t, 1, 1, 2)
	cfg := Config{Strategy: StrategySession, Endpoints: []Endpoint{fakeEp(1, "a"), fakeEp(2, "b")}, HedgeAfter: hedgeDelay, FirstByteTimeout: 10 * time.Second}

	t.Run("first attempt wins", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBubble(cfg, map[string]handler{"a.test": after(30*time.Millisecond, okStream()), "b.test": hang})
			_, rec := b.serveHdr(t, "X-Claude-Code-Session-Id", onA)
			if got := hedgeParts(rec); got != "a:won,b:cancelled" {
				t.Fatalf("attempts %s, want a:won,b:cancelled", got)
			}
			if id, ok := b.srv.affinity.get(newSession(onA).hash, time.Now()); !ok || id != 1 {
				t.Errorf("affinity %d (%v), want a (1)", id, ok)
			}
		})
	})

	// The conversation moved to b; every turn b is slow to start, is
	// raced with a and still wins, one turn every 20 minutes for 2 hours.
	t.Run("kept while in use", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBubble(cfg, map[string]handler{"a.test": hang, "b.test": after(30*time.Millisecond, okStream())})
			b.srv.affinity.set(newSession(onA).hash, 2, time.Now())
			for turn := range 6 {
				time.Sleep(20 * time.Minute)
				_, rec := b.serveHdr(t, "X-Claude-Code-Session-Id", onA)
				if got := hedgeParts(rec); got != "b:won,a:cancelled" || !rec.Routing.Affinity {
					t.Fatalf("turn %d: attempts %s (affinity %v), want b:won,a:cancelled by affinity", turn, got, rec.Routing.Affinity)
				}
			}
		})
	})
}

// TestAffinityRefreshedOnUse (item 18): a lookup is a use; the entry lives
// an hour after the last one.
func TestAffinityRefreshedOnUse(t *testing.T) {
	var a affinities
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	a.set(7, 2, t0)
	for _, tc := range []struct {
		at     time.Duration
		wantOK bool
	}{
		{50 * time.Minute, true},
		{100 * time.Minute, true}, // 50 min after the last lookup
		{100*time.Minute + affinityIdle, false},
	} {
		if id, ok := a.get(7, t0.Add(tc.at)); ok != tc.wantOK || ok && id != 2 {
			t.Errorf("at +%v: %d %v, want %v", tc.at, id, ok, tc.wantOK)
		}
	}
}
