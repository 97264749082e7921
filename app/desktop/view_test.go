package desktop

import (
	"bytes"
	"fmt"
	"image/png"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/store"
)

func TestTrayIconColours(t *testing.T) {
	seen := map[string]string{}
	for _, o := range []string{HealthAll, HealthSome, HealthNone, HealthPaused} {
		img, err := png.Decode(bytes.NewReader(TrayIcon(o)))
		if err != nil {
			t.Fatalf("%s: %v", o, err)
		}
		r, g, b, _ := img.At(16, 16).RGBA()
		c := fmt.Sprintf("%02x%02x%02x", r>>8, g>>8, b>>8)
		if prev, dup := seen[c]; dup {
			t.Errorf("%s and %s share the colour %s", o, prev, c)
		}
		seen[c] = o
		if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
			t.Errorf("%s: corner is not transparent", o)
		}
	}
}

// Breaker changes read as the UI words them, never as the API's words.
func TestTrayChangeWords(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 30, 0, 0, time.Local)
	at := time.Date(2026, 12, 1, 15, 4, 0, 0, time.Local)
	ev := func(cause, from, to, reason string) store.BreakerEvent {
		return store.BreakerEvent{At: at, Endpoint: "relay-a", Cause: cause, From: from, To: to, Reason: reason}
	}
	tests := []struct {
		name, lang string
		ev         store.BreakerEvent
		now        time.Time
		want       string
	}{
		{"opened by requests", "en", ev("request", "closed", "open", "rate_limited"), now, "15:04 relay-a: closed → open (rate limited)"},
		{"half-open", "en", ev("request", "open", "half_open", "quota_exhausted"), now, "15:04 relay-a: open → half-open (quota exhausted)"},
		{"closed again", "en", ev("request", "half_open", "closed", ""), now, "15:04 relay-a: half-open → closed"},
		{"forced open", "en", ev("force_open", "closed", "open", "manual"), now, "15:04 relay-a: closed → open (forced open)"},
		{"forced closed", "en", ev("force_close", "open", "closed", ""), now, "15:04 relay-a: open → closed (forced closed)"},
		{"another day", "en", ev("request", "closed", "open", "broken"), now.Add(24 * time.Hour), "Dec 1 15:04 relay-a: closed → open (broken)"},
		{"a word not known yet", "en", ev("request", "closed", "open", "some_new_reason"), now, "15:04 relay-a: closed → open (some new reason)"},
		{"chinese", "zh-CN", ev("request", "closed", "open", "broken"), now, "15:04 relay-a：闭合 → 熔断（故障）"},
		{"chinese forced closed", "zh-CN", ev("force_close", "open", "closed", ""), now, "15:04 relay-a：熔断 → 闭合（手动恢复）"},
		{"chinese another day", "zh-CN", ev("request", "open", "half_open", ""), now.Add(48 * time.Hour), "12月1日 15:04 relay-a：熔断 → 半开"},
		{"unknown language", "fr", ev("request", "half_open", "open", "broken"), now, "15:04 relay-a: half-open → open (broken)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ChangeWords(tc.lang, tc.ev, tc.now); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
