package proxy

import (
	"fmt"
	"testing"
	"time"
)

// TestHedgeAfterEncoding: an endpoint's hedge delay means in the proxy
// what hedge_after_ms means in the admin API and the store
// (docs/BEHAVIOUR.md#hedging): -1 the setting's, 0 never raced, else its
// own delay; the setting's 0 is off. The app converts milliseconds with
// no other rule, so the rows are the API's numbers.
func TestHedgeAfterEncoding(t *testing.T) {
	for _, tc := range []struct {
		endpointMs, settingMs int64
		want                  time.Duration
	}{
		{-1, 300, 300 * time.Millisecond},
		{-1, 0, HedgeOff},
		{0, 300, HedgeOff},
		{0, 0, HedgeOff},
		{250, 0, 250 * time.Millisecond},
		{250, 300, 250 * time.Millisecond},
	} {
		t.Run(fmt.Sprintf("endpoint %d setting %d", tc.endpointMs, tc.settingMs), func(t *testing.T) {
			q := &request{snap: &snapshot{cfg: Config{HedgeAfter: time.Duration(tc.settingMs) * time.Millisecond}}}
			e := &endpoint{Endpoint: Endpoint{ID: 1, HedgeAfter: time.Duration(tc.endpointMs) * time.Millisecond}}
			if got := q.hedgeAfter(e); got != tc.want {
				t.Errorf("hedge after %v, want %v", got, tc.want)
			}
		})
	}
	if HedgeSetting >= 0 || HedgeOff != 0 {
		t.Errorf("HedgeSetting %v, HedgeOff %v: want -1 and 0 as the API spells them", HedgeSetting, HedgeOff)
	}
}
