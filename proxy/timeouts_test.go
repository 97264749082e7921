package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// fakeRT answers by upstream host; it counts calls. Used inside synctest
// bubbles, where real sockets do not work.
type fakeRT struct {
	mu       sync.Mutex
	handlers map[string]func(*http.Request) (*http.Response, error)
	calls    map[string]int
}

func (f *fakeRT) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.calls[req.URL.Host]++
	h := f.handlers[req.URL.Host]
	f.mu.Unlock()
	return h(req)
}

func (f *fakeRT) count(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[host]
}

// hang never answers: the first-byte timeout must end it.
func hang(req *http.Request) (*http.Response, error) {
	<-req.Context().Done()
	return nil, req.Context().Err()
}

func jsonResp(status int, body string, hdr ...string) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		h := http.Header{"Content-Type": {"application/json"}}
		for i := 0; i+1 < len(hdr); i += 2 {
			h.Set(hdr[i], hdr[i+1])
		}
		return &http.Response{StatusCode: status, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
	}
}

// sse streams events, then stalls until the request is cancelled when
// stall is set, else ends.
func sse(events []proxytest.Event, stall bool) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		pr, pw := io.Pipe()
		go func() {
			for _, ev := range events {
				if _, err := io.WriteString(pw, proxytest.FormatEvent(ev)); err != nil {
					return
				}
			}
			if stall {
				<-req.Context().Done()
				pw.CloseWithError(req.Context().Err())
				return
			}
			pw.Close()
		}()
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: pr, Request: req}, nil
	}
}

type bubble struct {
	srv      *Server
	rt       *fakeRT
	breakers *breaker.Set
	sink     *memSink
}

// newBubble makes a Server on a fake transport; call inside synctest.
func newBubble(cfg Config, handlers map[string]func(*http.Request) (*http.Response, error)) *bubble {
	b := &bubble{rt: &fakeRT{handlers: handlers, calls: map[string]int{}}, breakers: breaker.NewSet(breaker.Config{}, nil), sink: &memSink{ch: make(chan *Record, 64)}}
	b.srv = New(Options{Breakers: b.breakers, Sink: b.sink, Logger: zerolog.Nop(), Transport: b.rt})
	b.srv.Update(cfg)
	return b
}

func (b *bubble) serve(ctx context.Context, body string) (*httptest.ResponseRecorder, *Record) {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:3457/v1/messages", strings.NewReader(body))
	req.Header.Set("anthropic-version", "2023-06-01")
	w := httptest.NewRecorder()
	b.srv.ServeHTTP(w, req)
	return w, <-b.sink.ch
}

func fakeEp(id int64, name string) Endpoint { return ep(id, name, "http://"+name+".test") }

// TestFirstByteTimeout: no headers in time is a failure, retried once on
// the same endpoint, then the next.
func TestFirstByteTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(Config{Endpoints: []Endpoint{fakeEp(1, "a"), fakeEp(2, "b")}, FirstByteTimeout: 10 * time.Second},
			map[string]func(*http.Request) (*http.Response, error){"a.test": hang, "b.test": jsonResp(200, `{"usage":{"input_tokens":1}}`)})
		start := time.Now()
		w, rec := b.serve(t.Context(), claudeBody)
		if w.Code != 200 || attemptsOn(rec) != "a,a,b" {
			t.Fatalf("status %d attempts %q, want 200 after a,a,b", w.Code, attemptsOn(rec))
		}
		if rec.Attempts[0].ErrorType != ErrFirstByte {
			t.Errorf("error type %q, want %q", rec.Attempts[0].ErrorType, ErrFirstByte)
		}
		// two timeouts plus one retry delay (300 ms default)
		if got, want := time.Since(start), 20*time.Second+DefaultRetryDelay; got != want {
			t.Errorf("took %v, want %v", got, want)
		}
	})
}

// TestRetryDelay: the same-endpoint retry waits RetryDelay, and a client
// leaving during that wait stops everything.
func TestRetryDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(Config{Endpoints: []Endpoint{fakeEp(1, "a")}},
			map[string]func(*http.Request) (*http.Response, error){"a.test": jsonResp(503, `{}`)})
		_, rec := b.serve(t.Context(), claudeBody)
		a0, a1 := rec.Attempts[0], rec.Attempts[1]
		if gap := a1.StartedAt.Sub(a0.StartedAt); gap != DefaultRetryDelay {
			t.Errorf("retry after %v, want %v", gap, DefaultRetryDelay)
		}
		// The client leaves 100 ms (fake time) in, during the retry delay.
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, rec = b.serve(ctx, claudeBody)
		if len(rec.Attempts) != 1 || rec.Status != StatusClientGone {
			t.Errorf("attempts %d status %d, want 1 attempt then 499", len(rec.Attempts), rec.Status)
		}
	})
}

// TestIdleTimeout: a stream that stops mid-way is ended with an error
// event after the idle timeout.
func TestIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		evs := proxytest.AnthropicStream(1, 2, "x")[:4]
		b := newBubble(Config{Endpoints: []Endpoint{fakeEp(1, "a")}, IdleTimeout: 30 * time.Second},
			map[string]func(*http.Request) (*http.Response, error){"a.test": sse(evs, true)})
		start := time.Now()
		w, rec := b.serve(t.Context(), claudeStreamBody)
		if time.Since(start) != 30*time.Second {
			t.Errorf("ended after %v, want 30s", time.Since(start))
		}
		if rec.StreamEnd != StreamIdleTimeout {
			t.Errorf("stream_end = %q, want idle_timeout", rec.StreamEnd)
		}
		if body := w.Body.String(); !strings.Contains(body, "event: error") || !strings.Contains(body, "idle timeout") {
			t.Errorf("no error event in %s", body)
		}
		if rec.Attempts[0].Outcome != breaker.Failure {
			t.Errorf("outcome = %q, want failure", rec.Attempts[0].Outcome)
		}
	})
}

// TestPreludeStall: an upstream stalling after message_start (before any
// content) fails over within the first-byte timeout, invisibly.
func TestPreludeStall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(Config{Endpoints: []Endpoint{fakeEp(1, "a"), fakeEp(2, "b")}, FirstByteTimeout: 5 * time.Second},
			map[string]func(*http.Request) (*http.Response, error){
				"a.test": sse(proxytest.AnthropicPrelude(3), true),
				"b.test": sse(proxytest.AnthropicStream(3, 4, "ok"), false),
			})
		w, rec := b.serve(t.Context(), claudeStreamBody)
		if w.Code != 200 || attemptsOn(rec) != "a,a,b" || rec.StreamEnd != StreamComplete {
			t.Fatalf("status %d attempts %q end %q, want 200 a,a,b complete", w.Code, attemptsOn(rec), rec.StreamEnd)
		}
		if n := strings.Count(w.Body.String(), "event: message_start"); n != 1 {
			t.Errorf("message_start sent %d times, want 1", n)
		}
		if rec.Attempts[0].ErrorType != ErrFirstByte {
			t.Errorf("error type = %q, want %q", rec.Attempts[0].ErrorType, ErrFirstByte)
		}
	})
}

// TestRateLimitWait: docs/BEHAVIOUR.md#rate-limit-wait when every candidate is Open(RateLimited).
func TestRateLimitWait(t *testing.T) {
	limited := jsonResp(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`, "Retry-After", "2")
	tests := []struct {
		name       string
		retryAfter string // of endpoint a's 429
		broken     bool   // force b open too
		cancel     bool
		wantCode   int
		wantRA     string
		wantWaited time.Duration
	}{
		{name: "wait then success", retryAfter: "2", wantCode: 200, wantWaited: 2 * time.Second},
		{name: "budget exhausted", retryAfter: "9", wantCode: 429, wantRA: "9"},
		{name: "mixed with broken", retryAfter: "2", broken: true, wantCode: 502},
		{name: "client cancels during the wait", retryAfter: "2", cancel: true, wantCode: StatusClientGone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				eb := fakeEp(2, "b")
				eb.Models = []string{"claude-opus-*"} // only reachable explicitly
				b := newBubble(Config{Endpoints: []Endpoint{fakeEp(1, "a"), eb}},
					map[string]func(*http.Request) (*http.Response, error){"a.test": jsonResp(200, `{}`), "b.test": limited})
				// Open a's breaker as RateLimited, as a 429 with tc.retryAfter would.
				ra, _ := time.ParseDuration(tc.retryAfter + "s")
				rateLimit(t, b.breakers.Get(1), ra)
				if tc.broken {
					eb.Models = nil
					b.srv.Update(Config{Endpoints: []Endpoint{fakeEp(1, "a"), eb}})
					b.breakers.Get(2).ForceOpen()
				}
				ctx, cancel := context.WithCancel(t.Context())
				if tc.cancel { // the client leaves 1 s (fake time) into the wait
					ctx, cancel = context.WithTimeout(t.Context(), time.Second)
				}
				defer cancel()
				start := time.Now()
				w, rec := b.serve(ctx, claudeBody)
				if rec.Status != tc.wantCode {
					t.Fatalf("status = %d, want %d: %s", rec.Status, tc.wantCode, w.Body)
				}
				if ra := w.Header().Get("Retry-After"); ra != tc.wantRA {
					t.Errorf("Retry-After = %q, want %q", ra, tc.wantRA)
				}
				if tc.wantWaited > 0 && time.Since(start) != tc.wantWaited {
					t.Errorf("waited %v, want %v", time.Since(start), tc.wantWaited)
				}
				if tc.cancel && (b.rt.count("a.test") != 0 || len(rec.Attempts) != 0) {
					t.Errorf("calls to a = %d attempts %d, want no new call", b.rt.count("a.test"), len(rec.Attempts))
				}
				if tc.cancel && b.breakers.Get(1).View(time.Now()).State != breaker.Open {
					t.Error("the cancelled wait changed the breaker")
				}
			})
		})
	}
}

// TestPriorityFailback: with priority, traffic returns to the first
// endpoint as soon as its breaker lets a probe through and it succeeds.
func TestPriorityFailback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		a := func(req *http.Request) (*http.Response, error) {
			calls++
			if calls == 1 {
				return jsonResp(429, `{}`, "Retry-After", "3")(req)
			}
			return jsonResp(200, `{}`)(req)
		}
		b := newBubble(Config{Strategy: StrategyPriority, Endpoints: []Endpoint{fakeEp(1, "a"), fakeEp(2, "b")}},
			map[string]func(*http.Request) (*http.Response, error){"a.test": a, "b.test": jsonResp(200, `{}`)})
		var got []string
		for i := range 4 {
			if i == 2 {
				time.Sleep(3 * time.Second) // inside the bubble this only moves the fake clock: a's rate limit ends
			}
			_, rec := b.serve(t.Context(), claudeBody)
			got = append(got, attemptsOn(rec))
		}
		if s := strings.Join(got, " "); s != "a,b b a a" {
			t.Errorf("attempts per request = %q, want %q", s, "a,b b a a")
		}
	})
}

// TestBreakerOutcomes: what each kind of attempt reports to the breaker.
func TestBreakerOutcomes(t *testing.T) {
	tests := []struct {
		name       string
		handler    func(*http.Request) (*http.Response, error)
		wantState  breaker.State
		wantReason breaker.Reason
		wantUntil  time.Duration
		wantFails  int
	}{
		{name: "429 with retry-after opens at once", handler: jsonResp(429, `{}`, "Retry-After", "30"),
			wantState: breaker.Open, wantReason: breaker.RateLimited, wantUntil: 30 * time.Second, wantFails: 1},
		{name: "quota opens at once", handler: jsonResp(400, `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low"}}`),
			wantState: breaker.Open, wantReason: breaker.QuotaExhausted, wantUntil: time.Hour, wantFails: 1},
		{name: "5xx counts failures", handler: jsonResp(500, `{}`), wantState: breaker.Closed, wantFails: 2},
		{name: "neutral 400 counts nothing", handler: jsonResp(400, `{"error":{"message":"bad"}}`), wantState: breaker.Closed},
		{name: "success", handler: jsonResp(200, `{}`), wantState: breaker.Closed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBubble(Config{Endpoints: []Endpoint{fakeEp(1, "a")}},
					map[string]func(*http.Request) (*http.Response, error){"a.test": tc.handler})
				start := time.Now()
				b.serve(t.Context(), claudeBody)
				v := b.breakers.Get(1).View(time.Now())
				if v.State != tc.wantState || v.Reason != tc.wantReason || v.Counts.ConsecutiveFailures != tc.wantFails {
					t.Errorf("breaker %v/%v fails %d, want %v/%v fails %d", v.State, v.Reason, v.Counts.ConsecutiveFailures, tc.wantState, tc.wantReason, tc.wantFails)
				}
				if tc.wantUntil > 0 && v.Until.Sub(start) < tc.wantUntil {
					t.Errorf("open until +%v, want ≥ +%v", v.Until.Sub(start), tc.wantUntil)
				}
			})
		})
	}
}

// TestHalfOpenProbeTaken: while another request holds a recovering
// endpoint's single probe, a request waits (docs/BEHAVIOUR.md#rate-limit-wait) instead of failing,
// and is served once the probe is free again.
func TestHalfOpenProbeTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		calls := 0
		a := func(req *http.Request) (*http.Response, error) {
			calls++
			if calls == 1 {
				<-release // the probe is slow
			}
			return jsonResp(200, `{}`)(req)
		}
		b := newBubble(Config{Endpoints: []Endpoint{fakeEp(1, "a")}},
			map[string]func(*http.Request) (*http.Response, error){"a.test": a})
		rateLimit(t, b.breakers.Get(1), 2*time.Second)
		time.Sleep(2 * time.Second) // inside the bubble this only moves the fake clock: a turns HalfOpen
		type res struct {
			w   *httptest.ResponseRecorder
			rec *Record
		}
		results := make(chan res, 2)
		serve := func() { w, rec := b.serve(t.Context(), claudeBody); results <- res{w, rec} }
		go serve()
		synctest.Wait() // the probe is out
		go serve()
		synctest.Wait() // the second request waits for the probe
		close(release)
		waited := 0
		for range 2 {
			r := <-results
			if r.w.Code != 200 {
				t.Errorf("status %d: %s", r.w.Code, r.w.Body)
			}
			if r.rec.Routing.WaitedMs > 0 {
				waited++
			}
		}
		if waited != 1 {
			t.Errorf("%d requests waited, want 1", waited)
		}
		if calls != 2 {
			t.Errorf("upstream calls = %d, want 2", calls)
		}
	})
}

// rateLimit opens br as a 429 carrying a retry time d would.
func rateLimit(t *testing.T, br *breaker.Breaker, d time.Duration) {
	t.Helper()
	p, err := br.Allow(breaker.Claude, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	p.Done(breaker.Outcome{Kind: breaker.Failure, Reason: breaker.RateLimited, RetryAfter: d})
}

// TestEveryEndpointRateLimited: when every attempt ends in a 429 whose
// retry time falls inside the rate-limit wait, the request waits for the
// first endpoint to be free and is served, instead of answering 429
// (docs/BEHAVIOUR.md#rate-limit-wait). Past the wait, or when the budget
// is spent, the answer is 429 with Retry-After.
func TestEveryEndpointRateLimited(t *testing.T) {
	for _, tc := range []struct {
		name       string
		retryAfter string
		explicit   bool
		wantCode   int
		wantWaited time.Duration
		wantCalls  int // in all, over both endpoints
	}{
		{name: "one second is waited", retryAfter: "1", wantCode: 200, wantWaited: time.Second, wantCalls: 3},
		{name: "explicit endpoint waits too", retryAfter: "1", explicit: true, wantCode: 200, wantWaited: time.Second, wantCalls: 2},
		{name: "beyond the wait: 429 at once", retryAfter: "9", wantCode: 429, wantCalls: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				limitedOnce := func(req *http.Request) (*http.Response, error) {
					calls++
					if calls <= 2 && !(tc.explicit && calls == 2) {
						return jsonResp(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`, "Retry-After", tc.retryAfter)(req)
					}
					return jsonResp(200, `{}`)(req)
				}
				b := newBubble(Config{Endpoints: []Endpoint{fakeEp(1, "a"), fakeEp(2, "b")}},
					map[string]func(*http.Request) (*http.Response, error){"a.test": limitedOnce, "b.test": limitedOnce})
				body := claudeBody
				if tc.explicit {
					body = strings.Replace(claudeBody, `"claude-sonnet-4-5"`, `"@a/claude-sonnet-4-5"`, 1)
				}
				start := time.Now()
				w, rec := b.serve(t.Context(), body)
				if w.Code != tc.wantCode {
					t.Fatalf("status %d, want %d: %s", w.Code, tc.wantCode, w.Body)
				}
				if got := time.Since(start); tc.wantWaited > 0 && got != tc.wantWaited {
					t.Errorf("took %v, want %v", got, tc.wantWaited)
				}
				if calls != tc.wantCalls {
					t.Errorf("upstream calls %d, want %d (attempts %q)", calls, tc.wantCalls, attemptsOn(rec))
				}
				if tc.wantCode == 429 && w.Header().Get("Retry-After") != tc.retryAfter {
					t.Errorf("Retry-After %q, want %q", w.Header().Get("Retry-After"), tc.retryAfter)
				}
			})
		})
	}
}
