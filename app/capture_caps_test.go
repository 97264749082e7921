package app

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCaptureCapsDefaultsAndRanges: the caps are settings with the
// defaults docs/BEHAVIOUR.md#capture-and-resend states and a range each.
func TestCaptureCapsDefaultsAndRanges(t *testing.T) {
	h := newHarness(t)
	var s Settings
	h.do("GET", "/api/settings", "").decode(t, &s)
	if s.CaptureBodyBytes != 1<<20 || s.CaptureTotalBytes != 256<<20 {
		t.Errorf("defaults %d / %d, want 1 MiB / 256 MiB", s.CaptureBodyBytes, s.CaptureTotalBytes)
	}
	tests := []struct {
		body, field string
		status      int
	}{
		{`{"capture_body_bytes":1023}`, "capture_body_bytes", 422},
		{`{"capture_body_bytes":16777217}`, "capture_body_bytes", 422},
		{`{"capture_total_bytes":1048575}`, "capture_total_bytes", 422},
		{`{"capture_total_bytes":17179869185}`, "capture_total_bytes", 422},
		{`{"capture_body_bytes":1024,"capture_total_bytes":17179869184}`, "", 200},
	}
	for _, tc := range tests {
		t.Run(tc.body, func(t *testing.T) {
			r := h.do("PUT", "/api/settings", tc.body)
			if r.status != tc.status {
				t.Fatalf("got %d %s, want %d", r.status, r.body, tc.status)
			}
			if tc.status == 422 && (r.errCode() != "invalid_setting" || !strings.Contains(string(r.body), `"field":"`+tc.field+`"`)) {
				t.Errorf("got %s, want invalid_setting at %s", r.body, tc.field)
			}
		})
	}
}

// TestCaptureCapsAreUsed: capture_body_bytes cuts the captured bodies and
// capture_total_bytes is the total the oldest captures are dropped for.
func TestCaptureCapsAreUsed(t *testing.T) {
	t.Run("body", func(t *testing.T) {
		h, _, _ := captureHarness(t, "all", `,"capture_body_bytes":2048`)
		big := strings.Replace(capBody, `"hi"`, `"`+strings.Repeat("x", 3000)+`"`, 1)
		id, _ := h.send("/v1/messages", big)
		c, r := h.capture(id)
		if r.status != 200 || len(c.Request.Body) != 2048 || !c.Request.Truncated {
			t.Errorf("capture %d: request body %d bytes, truncated %v; want 2048, true", r.status, len(c.Request.Body), c.Request.Truncated)
		}
	})
	t.Run("total", func(t *testing.T) {
		const total = 1 << 20
		h, _, _ := captureHarness(t, "all", fmt.Sprintf(`,"capture_total_bytes":%d`, total))
		rnd := rand.New(rand.NewPCG(1, 2))
		var ids []int64
		for range 4 {
			// Random text: compressed, each capture still stores about 300 KB.
			noise := make([]byte, 300<<10)
			for i := range noise {
				noise[i] = byte(rnd.Uint32())
			}
			body := strings.Replace(capBody, `"hi"`, `"`+base64.StdEncoding.EncodeToString(noise)+`"`, 1)
			id, _ := h.send("/v1/messages", body)
			ids = append(ids, id)
		}
		stored, err := h.app.db.CaptureBytes(t.Context())
		if err != nil || stored > total {
			t.Errorf("captures store %d bytes (%v), want at most %d", stored, err, total)
		}
		if _, r := h.capture(ids[0]); r.status != 404 || r.errCode() != "no_capture" {
			t.Errorf("the oldest capture: %d %s, want it dropped", r.status, r.body)
		}
		if _, r := h.capture(ids[len(ids)-1]); r.status != 200 {
			t.Errorf("the newest capture: %d %s, want it kept", r.status, r.body)
		}
	})
}
