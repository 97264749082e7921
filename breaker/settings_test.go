package breaker

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

func TestOverridesValidate(t *testing.T) {
	tests := []struct {
		name      string
		o         Overrides
		field     string // where o sits
		wantField string // "" = valid
		wantMsg   string
	}{
		{"empty", Overrides{}, "breaker.claude", "", ""},
		{"all valid at the edges", Overrides{
			FailureThreshold: ptr(1), SuccessThreshold: ptr(1), MinRequests: ptr(1),
			Timeout: ptr(Millis(1)), RateLimitTimeout: ptr(Millis(1)), MaxRateLimitTimeout: ptr(Millis(1)),
			QuotaTimeout: ptr(Millis(1)), ErrorRateThreshold: ptr(1.0), Disabled: ptr(false),
		}, "breaker.claude", "", ""},
		{"tiny rate", Overrides{ErrorRateThreshold: ptr(1e-9)}, "breaker.claude", "", ""},
		{"bad timeout", Overrides{Timeout: ptr(Millis(-1))}, "breaker.claude",
			"breaker.claude.timeout_ms", "timeout_ms must be more than 0 milliseconds, got -1"},
		{"failure_threshold 0", Overrides{FailureThreshold: ptr(0)}, "breaker_overrides",
			"breaker_overrides.failure_threshold", "failure_threshold must be at least 1, got 0"},
		{"success_threshold -1", Overrides{SuccessThreshold: ptr(-1)}, "breaker_overrides",
			"breaker_overrides.success_threshold", "success_threshold must be at least 1, got -1"},
		{"min_requests 0", Overrides{MinRequests: ptr(0)}, "breaker_overrides",
			"breaker_overrides.min_requests", "min_requests must be at least 1, got 0"},
		{"timeout 0", Overrides{Timeout: ptr(Millis(0))}, "breaker_overrides",
			"breaker_overrides.timeout_ms", "timeout_ms must be more than 0 milliseconds, got 0"},
		{"rate limit timeout -5", Overrides{RateLimitTimeout: ptr(Millis(-5))}, "breaker_overrides",
			"breaker_overrides.rate_limit_timeout_ms", "rate_limit_timeout_ms must be more than 0 milliseconds, got -5"},
		{"max rate limit timeout 0", Overrides{MaxRateLimitTimeout: ptr(Millis(0))}, "breaker_overrides",
			"breaker_overrides.max_rate_limit_timeout_ms", "max_rate_limit_timeout_ms must be more than 0 milliseconds, got 0"},
		{"quota timeout 0", Overrides{QuotaTimeout: ptr(Millis(0))}, "breaker_overrides",
			"breaker_overrides.quota_timeout_ms", "quota_timeout_ms must be more than 0 milliseconds, got 0"},
		{"error rate 0", Overrides{ErrorRateThreshold: ptr(0.0)}, "breaker_overrides",
			"breaker_overrides.error_rate_threshold", "error_rate_threshold must be more than 0 and at most 1, got 0"},
		{"error rate above 1", Overrides{ErrorRateThreshold: ptr(1.01)}, "breaker_overrides",
			"breaker_overrides.error_rate_threshold", "error_rate_threshold must be more than 0 and at most 1, got 1.01"},
		{"error rate NaN", Overrides{ErrorRateThreshold: ptr(math.NaN())}, "breaker_overrides",
			"breaker_overrides.error_rate_threshold", "error_rate_threshold must be more than 0 and at most 1, got NaN"},
		{"thresholds before durations before the rate", Overrides{
			ErrorRateThreshold: ptr(2.0), Timeout: ptr(Millis(0)), MinRequests: ptr(0),
		}, "breaker.openai", "breaker.openai.min_requests", "min_requests must be at least 1, got 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate(tc.field)
			if tc.wantField == "" {
				if err != nil {
					t.Errorf("Validate = %v, want nil", err)
				}
				return
			}
			var oe *OverrideError
			if !errors.As(err, &oe) {
				t.Fatalf("Validate = %v (%T), want *OverrideError", err, err)
			}
			if oe.Field != tc.wantField || oe.Code != CodeInvalidOverride || oe.Message != tc.wantMsg {
				t.Errorf("Validate = field %q code %q message %q, want %q %q %q",
					oe.Field, oe.Code, oe.Message, tc.wantField, CodeInvalidOverride, tc.wantMsg)
			}
		})
	}
}

// TestOverridesJSON pins the names and units of the admin API and the
// database: docs/BEHAVIOUR.md#breaker-defaults's names, durations in
// milliseconds, unset parameters left out.
func TestOverridesJSON(t *testing.T) {
	all := Overrides{
		FailureThreshold: ptr(1), SuccessThreshold: ptr(2), Timeout: ptr(Millis(3)),
		ErrorRateThreshold: ptr(0.5), MinRequests: ptr(4), RateLimitTimeout: ptr(Millis(5)),
		MaxRateLimitTimeout: ptr(Millis(6)), QuotaTimeout: ptr(Millis(7)), Disabled: ptr(false),
	}
	const want = `{"failure_threshold":1,"success_threshold":2,"timeout_ms":3,"error_rate_threshold":0.5,` +
		`"min_requests":4,"rate_limit_timeout_ms":5,"max_rate_limit_timeout_ms":6,"quota_timeout_ms":7,"disabled":false}`
	for _, tc := range []struct {
		o    Overrides
		want string
	}{{Overrides{}, `{}`}, {all, want}} {
		b, err := json.Marshal(tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("Marshal = %s, want %s", b, tc.want)
		}
		var back Overrides
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, tc.o) {
			t.Errorf("round trip = %+v, want %+v", back, tc.o)
		}
	}
	// Unknown names are ignored, as they always were.
	var o Overrides
	if err := json.Unmarshal([]byte(`{"timeout_ms":30000,"later":1}`), &o); err != nil || o.Timeout == nil || o.Timeout.Duration() != 30*time.Second {
		t.Errorf("Unmarshal with an unknown name = %+v, %v; want timeout 30s", o, err)
	}
}

func TestMillisDuration(t *testing.T) {
	for _, tc := range []struct {
		m    Millis
		want time.Duration
	}{{0, 0}, {1, time.Millisecond}, {90_000, 90 * time.Second}, {-5, -5 * time.Millisecond}} {
		if got := tc.m.Duration(); got != tc.want {
			t.Errorf("Millis(%d).Duration() = %v, want %v", tc.m, got, tc.want)
		}
	}
}

func TestOverridesClone(t *testing.T) {
	o := Overrides{FailureThreshold: ptr(3), Timeout: ptr(Millis(1000)), ErrorRateThreshold: ptr(0.5), Disabled: ptr(true)}
	c := o.Clone()
	if !reflect.DeepEqual(c, o) {
		t.Fatalf("Clone = %+v, want %+v", c, o)
	}
	// Decoding onto the clone, as a settings merge does, leaves o alone.
	if err := json.Unmarshal([]byte(`{"failure_threshold":0,"timeout_ms":5,"disabled":false}`), &c); err != nil {
		t.Fatal(err)
	}
	if *o.FailureThreshold != 3 || *o.Timeout != 1000 || !*o.Disabled {
		t.Errorf("the original changed through its clone: %d %d %v", *o.FailureThreshold, *o.Timeout, *o.Disabled)
	}
	if got := (Overrides{}).Clone(); got != (Overrides{}) {
		t.Errorf("Clone of the zero Overrides = %+v, want zero", got)
	}
}
