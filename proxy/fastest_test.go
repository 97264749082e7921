package proxy

import (
	"math"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

const okMessage = `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}],"model":"claude-sonnet-4-5","stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":2}}`

// scripted answers 200 after the latency *lat holds at the time of the
// request.
func scripted(lat *atomic.Int64) handler {
	return func(req *http.Request) (*http.Response, error) {
		return after(time.Duration(lat.Load()), jsonResp(200, okMessage))(req)
	}
}

// TestFastestLeansToQuick (item 3): under the fastest strategy, with
// endpoints answering in 200 ms and 800 ms, at least 80% of 1 000
// sequential requests go to the quick one; once the slow one answers in
// 200 ms too, it is tried within a bounded number of requests and gets its
// share back.
func TestFastestLeansToQuick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var quick, slow atomic.Int64
		quick.Store(int64(200 * time.Millisecond))
		slow.Store(int64(800 * time.Millisecond))
		b := newBubble(Config{Endpoints: []Endpoint{fakeEp(1, "slow"), fakeEp(2, "quick")}, Strategy: StrategyFastest},
			map[string]handler{"quick.test": scripted(&quick), "slow.test": scripted(&slow)})
		b.srv.speeds.intN = rand.New(rand.NewPCG(1, 2)).IntN
		run := func(n int) []string {
			var on []string
			for range n {
				w, rec := b.serve(t.Context(), claudeBody)
				if w.Code != http.StatusOK {
					t.Fatalf("status %d: %s", w.Code, w.Body)
				}
				on = append(on, rec.Endpoint)
			}
			return on
		}
		count := func(on []string, name string) int {
			n := 0
			for _, e := range on {
				if e == name {
					n++
				}
			}
			return n
		}
		first := run(1000)
		if got := count(first, "quick"); got < 800 {
			t.Errorf("quick got %d of 1000 requests, want ≥ 800", got)
		}
		if got := count(first, "slow"); got == 0 {
			t.Errorf("slow got no request in 1000: a slow endpoint must be tried again as its figure decays")
		}
		// Dry run: the quick one first, each candidate's figure shown.
		x := b.srv.Explain(ProtocolAnthropic, "claude-sonnet-4-5")
		if len(x.Candidates) != 2 || x.Candidates[0].Endpoint != "quick" || x.Candidates[0].LoadMs <= 0 || x.Candidates[1].LoadMs <= 0 {
			t.Errorf("dry run %+v, want quick first and both figures", x.Candidates)
		}

		slow.Store(int64(200 * time.Millisecond))
		// Its figure falls below 200 ms within ln(800/200) × 10 s of fake
		// time, ~70 requests of 200 ms: 100 is the bound.
		second := run(400)
		back := -1
		for i, e := range second {
			if e == "slow" {
				back = i
				break
			}
		}
		t.Logf("quick %d of 1000; after the change slow first at request %d, %d of the last 200", count(first, "quick"), back, count(second[200:], "slow"))
		if back < 0 || back >= 100 {
			t.Errorf("the recovered endpoint was first tried at request %d after it got quick, want within 100", back)
		}
		if got := count(second[200:], "slow"); got < 80 {
			t.Errorf("the recovered endpoint got %d of the last 200 requests, want ≥ 80 (its share back)", got)
		}
	})
}

// TestSpeedFigure: the peak-EWMA's rules, in fake time.
func TestSpeedFigure(t *testing.T) {
	ms := func(v float64) float64 { return math.Round(v/1e4) / 100 }
	tests := []struct {
		name string
		do   func(s *speed, now time.Time) time.Time
		want float64 // load in ms after do
	}{
		{"no answers yet", func(_ *speed, now time.Time) time.Time { return now }, 0},
		{"an answer sets it", func(s *speed, now time.Time) time.Time {
			s.observe(200*time.Millisecond, now)
			return now
		}, 200},
		{"a slower answer replaces it at once", func(s *speed, now time.Time) time.Time {
			s.observe(200*time.Millisecond, now)
			s.observe(800*time.Millisecond, now.Add(time.Second))
			return now.Add(time.Second)
		}, 800},
		{"a quicker answer is averaged in", func(s *speed, now time.Time) time.Time {
			s.observe(800*time.Millisecond, now)
			s.observe(200*time.Millisecond, now.Add(fastestDecay))
			return now.Add(fastestDecay)
		}, ms(800e6/math.E + 200e6*(1-1/math.E))},
		{"it decays while idle", func(s *speed, now time.Time) time.Time {
			s.observe(800*time.Millisecond, now)
			return now.Add(fastestDecay)
		}, ms(800e6 / math.E)},
		{"a failure counts as the penalty", func(s *speed, now time.Time) time.Time {
			s.observe(200*time.Millisecond, now)
			s.observe(fastestPenalty, now)
			return now
		}, ms(float64(fastestPenalty))},
		{"attempts in flight multiply it", func(s *speed, now time.Time) time.Time {
			s.observe(200*time.Millisecond, now)
			s.add(2)
			return now
		}, 600},
		{"in flight without a figure counts as slow", func(s *speed, now time.Time) time.Time {
			s.add(1)
			return now
		}, ms(float64(fastestPenalty))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &speed{}
				at := tc.do(s, time.Now())
				if got := ms(s.load(at)); got != tc.want {
					t.Errorf("load %v ms, want %v ms", got, tc.want)
				}
			})
		})
	}
}

// TestFastestFailurePenalty: a failing endpoint loses the start to one
// that answers, though it answered quicker before.
func TestFastestFailurePenalty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fast atomic.Int64
		fast.Store(int64(100 * time.Millisecond))
		var failing atomic.Bool
		flaky := func(req *http.Request) (*http.Response, error) {
			if failing.Load() {
				return jsonResp(500, `{"type":"error","error":{"type":"api_error","message":"boom"}}`)(req)
			}
			return scripted(&fast)(req)
		}
		var steady atomic.Int64
		steady.Store(int64(300 * time.Millisecond))
		b := newBubble(Config{Endpoints: []Endpoint{fakeEp(1, "flaky"), fakeEp(2, "steady")}, Strategy: StrategyFastest, RetryDelay: time.Millisecond},
			map[string]handler{"flaky.test": flaky, "steady.test": scripted(&steady)})
		b.srv.speeds.intN = rand.New(rand.NewPCG(3, 4)).IntN
		for range 5 {
			b.serve(t.Context(), claudeBody)
		}
		failing.Store(true)
		_, rec := b.serve(t.Context(), claudeBody) // flaky fails over to steady
		if x := b.srv.Explain(ProtocolAnthropic, "claude-sonnet-4-5"); len(x.Candidates) == 0 || x.Candidates[0].Endpoint != "steady" {
			t.Errorf("after flaky failed (%s) the dry run starts at %+v, want steady", attemptsOn(rec), x.Candidates)
		}
	})
}
