package health

import (
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
)

// An endpoint's figures: the success rate of the last hour's attempts,
// the p50 of the successful ones, the last failure, and the answers from
// another model of the last 24 hours (docs/BEHAVIOUR.md#health); a key's
// last failure (docs/BEHAVIOUR.md#key-pools).
func TestFigures(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := NewStats()
	var keys KeyFailures
	rec := &proxy.Record{Attempts: []proxy.Attempt{
		{EndpointID: 1, StartedAt: now.Add(-2 * time.Hour), Outcome: breaker.Failure, Message: "too old to count"},
		{EndpointID: 1, StartedAt: now.Add(-time.Minute), Outcome: breaker.Success, DurationMs: 300, ModelAnswered: "other"},
		{EndpointID: 1, StartedAt: now.Add(-time.Minute), Outcome: breaker.Success, DurationMs: 100},
		{EndpointID: 1, StartedAt: now.Add(-time.Minute), Outcome: breaker.Success, DurationMs: 200},
		{EndpointID: 1, KeyID: 7, StartedAt: now.Add(-30 * time.Second), Outcome: breaker.Failure, Message: "500 down"},
		{EndpointID: 1, StartedAt: now, Outcome: breaker.Neutral, Message: "not counted"},
		{EndpointID: 0, StartedAt: now, Outcome: breaker.Failure, Message: "no endpoint"},
	}}
	s.Observe(rec)
	keys.Observe(rec)
	s.OtherModel(1, now.Add(-30*time.Hour), 5) // outside the 24 hours

	f := s.Endpoint(1, now)
	if f.SuccessRate == nil || *f.SuccessRate != 0.75 {
		t.Errorf("success rate %v, want 0.75 (3 of the last hour's 4)", f.SuccessRate)
	}
	if f.P50Ms == nil || *f.P50Ms != 200 {
		t.Errorf("p50 %v, want 200", f.P50Ms)
	}
	if f.LastError != "500 down" || f.LastFailureAt == nil || !f.LastFailureAt.Equal(now.Add(-30*time.Second)) {
		t.Errorf("last failure %q at %v, want the key's 500", f.LastError, f.LastFailureAt)
	}
	if f.OtherModel24h != 1 {
		t.Errorf("other model 24h %d, want 1", f.OtherModel24h)
	}
	if msg, at := keys.Last(7); msg != "500 down" || at == nil {
		t.Errorf("key 7's last failure %q at %v", msg, at)
	}
	if msg, at := keys.Last(8); msg != "" || at != nil {
		t.Errorf("key 8 never failed: got %q at %v", msg, at)
	}
	if f := s.Endpoint(2, now); f.SuccessRate != nil || f.P50Ms != nil || f.LastFailureAt != nil {
		t.Errorf("an endpoint with no attempts: %+v", f)
	}
}
