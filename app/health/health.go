// Package health is what GET /api/health shows besides the breakers'
// own state (docs/BEHAVIOUR.md#health): the words for a breaker's view,
// the figures the request log feeds in memory (per endpoint: the success
// rate over the last hour, the p50 latency, the answers from another
// model over the last 24 hours, the last failure; per pool key: the last
// failure), and the publisher that sends the health list to the live
// stream when something shaped it. The app assembles its Health rows
// from them; it is the publisher's Host and the store's other-model
// counts come through Counter.
package health

import (
	"time"

	"github.com/ccmesh/ccmesh/breaker"
)

// Status maps a breaker view to docs/BEHAVIOUR.md#health's words.
func Status(enabled bool, v breaker.View) string {
	switch {
	case !enabled:
		return "disabled"
	case v.State == breaker.Open:
		return "unhealthy"
	case v.State == breaker.HalfOpen:
		return "recovering"
	}
	return "healthy"
}

// RetryIn is how long an Open breaker of view v stays open after now, in
// milliseconds; 0 when it is not Open or opens with no end.
func RetryIn(v breaker.View, now time.Time) int64 {
	if v.State == breaker.Open && !v.Until.IsZero() {
		return max(0, v.Until.Sub(now).Milliseconds())
	}
	return 0
}
