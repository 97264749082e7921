package proxy

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
)

// marshalPlain is encoding/json as the appenders write: HTML unescaped,
// no trailing newline; ok false where it fails.
func marshalPlain(v any) ([]byte, bool) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return nil, false
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), true
}

// checkAppend holds a History's and a Routing's AppendJSON to
// encoding/json: the same bytes, and a refusal where it fails.
func checkAppend(t *testing.T, r Routing, h History) {
	t.Helper()
	for _, c := range []struct {
		name string
		v    any
		app  func([]byte) ([]byte, bool)
	}{
		{"routing", r, r.AppendJSON},
		{"history", []Attempt(h), h.AppendJSON},
	} {
		want, wantOK := marshalPlain(c.v)
		got, ok := c.app([]byte("prefix"))
		if ok != wantOK {
			t.Fatalf("%s: ok %v, encoding/json ok %v (%s)", c.name, ok, wantOK, want)
		}
		if !ok {
			if string(got) != "prefix" {
				t.Fatalf("%s: declined but wrote %q", c.name, got)
			}
			continue
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Fatalf("%s:\n got %s\nwant prefix%s", c.name, got, want)
		}
	}
}

func TestRecordAppendJSON(t *testing.T) {
	at := time.Date(2026, 12, 4, 12, 30, 1, 123456789, time.UTC)
	cost, free := &Cost{USD: 0.0123, Priced: true}, &Cost{}
	full := Attempt{EndpointID: 7, Endpoint: "relay <a&b>", ErrorType: ErrStatus, Status: 400,
		Message: "bad \"request\"\n\u2028", BodyHead: "{\"error\":\"\xff\"}", StartedAt: at.In(time.FixedZone("", 5*3600+1800)),
		DurationMs: 812, BreakerCounted: true, Outcome: breaker.Failure, Translation: TranslationOf(ProtocolAnthropic, ProtocolOpenAIChat),
		Model: "gpt-5", Usage: &Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Reasoning: 5, Estimated: true},
		Hedge: HedgeWon, KeyID: 3, Key: "main (sk-…abcd)", KeyFault: true, Cost: cost, Adjusted: AdjustDropRefused,
		Dropped: []string{"context_management", "betas"}, Refused: "400: nope", ModelAnswered: "gpt-5-mini"}
	tests := []struct {
		name string
		r    Routing
		h    History
	}{
		{"zero", Routing{}, nil},
		{"empty slices", Routing{Candidates: []Candidate{}, Excluded: []Excluded{}}, History{}},
		{"plain", Routing{Strategy: StrategySticky, Candidates: []Candidate{{EndpointID: 1, Endpoint: "up", State: breaker.Closed}}},
			History{{EndpointID: 1, Endpoint: "up", Status: 200, StartedAt: at, DurationMs: 3, Outcome: breaker.Success}}},
		{"full", Routing{Strategy: StrategySession, WaitedMs: 1500, Session: "ab12", Affinity: true,
			Candidates: []Candidate{{1, "a", breaker.HalfOpen}, {2, "b", breaker.Open}},
			Excluded: []Excluded{{EndpointID: 3, Endpoint: "c", Reason: ExcludedBreaker, State: breaker.Open,
				BreakerReason: breaker.RateLimited, ProbeInFlight: true, Until: at, Balance: true}, {EndpointID: 4, Reason: ExcludedModel}}},
			History{full, {Cost: free, Dropped: []string{}}}},
		{"tiny and huge costs", Routing{}, History{{Cost: &Cost{USD: 1e-7, Priced: true}}, {Cost: &Cost{USD: 1e21, Priced: true}}, {Cost: &Cost{USD: -0.5, Priced: true}}}},
		{"NaN cost", Routing{}, History{{Cost: &Cost{USD: math.NaN(), Priced: true}}}},
		{"year 10000", Routing{}, History{{StartedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}},
		{"until before year 0", Routing{Excluded: []Excluded{{Until: time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}}}, nil},
		{"zone of a day", Routing{}, History{{StartedAt: at.In(time.FixedZone("", 24*3600))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkAppend(t, tt.r, tt.h) })
	}
}

func FuzzRecordAppendJSON(f *testing.F) {
	f.Add("up", "relay <&>", "bad \"x\"\n", int64(200), int64(1_733_300_000_123), 0.0123, uint8(1), uint8(2), true)
	f.Add("\xff\u2028", "", "", int64(-1), int64(-70_000_000_000_000), 1e-9, uint8(9), uint8(0), false)
	f.Fuzz(func(t *testing.T, name, msg, head string, n, ms int64, usd float64, s1, s2 uint8, flag bool) {
		at := time.UnixMilli(ms).In(time.FixedZone("", int(n%100_000)))
		var usage *Usage
		if flag {
			usage = &Usage{Input: n, Output: -n, CacheRead: ms, Estimated: flag}
		}
		r := Routing{Strategy: Strategy(name), WaitedMs: n, Session: msg, Affinity: flag,
			Candidates: []Candidate{{EndpointID: n, Endpoint: name, State: breaker.State(s1)}},
			Excluded: []Excluded{{EndpointID: ms, Endpoint: head, Reason: Exclusion(msg), State: breaker.State(s1),
				BreakerReason: breaker.Reason(s2), ProbeInFlight: flag, Until: at, Balance: !flag}}}
		h := History{{EndpointID: n, Endpoint: name, ErrorType: ErrorType(head), Status: int(n), Message: msg, BodyHead: head,
			StartedAt: at, DurationMs: ms, BreakerCounted: flag, Outcome: breaker.Kind(s2), Translation: Translation(msg),
			Model: head, Usage: usage, Hedge: HedgePart(name), KeyID: ms, Key: msg, KeyFault: !flag,
			Cost: &Cost{USD: usd, Priced: flag}, Adjusted: Adjustment(head), Dropped: []string{name, msg}, Refused: msg, ModelAnswered: name}}
		checkAppend(t, r, h)
	})
}

// BenchmarkRecordJSON: a plain request's routing and history, as the log
// writer stores them, by encoding/json and by the appenders.
func BenchmarkRecordJSON(b *testing.B) {
	r := Routing{Strategy: StrategySticky, Candidates: []Candidate{{EndpointID: 1, Endpoint: "up", State: breaker.Closed}}}
	h := History{{EndpointID: 1, Endpoint: "up", Status: 200, StartedAt: time.Now(), DurationMs: 812,
		BreakerCounted: true, Outcome: breaker.Success, Model: "claude-sonnet-4-5",
		Usage: &Usage{Input: 1200, Output: 9, CacheRead: 5000}, Cost: &Cost{USD: 0.0123, Priced: true}}}
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(r)
			_, _ = json.Marshal([]Attempt(h))
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = r.AppendJSON(nil)
			_, _ = h.AppendJSON(nil)
		}
	})
}
