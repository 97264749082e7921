package app

import (
	"context"
	"testing"
)

func TestSettingsMerge(t *testing.T) {
	h := newHarness(t)
	r := h.do("PUT", "/api/settings", `{"strategy":"priority","breaker":{"openai":{"failure_threshold":9}}}`)
	if r.status != 200 {
		t.Fatalf("put settings: %d %s", r.status, r.body)
	}
	r = h.do("PUT", "/api/settings", `{"idle_timeout_ms":1234}`)
	var s map[string]any
	h.do("GET", "/api/settings", "").decode(t, &s)
	if s["strategy"] != "priority" || s["idle_timeout_ms"] != float64(1234) || s["first_byte_timeout_ms"] != float64(60000) {
		t.Errorf("settings after two merges = %v", s)
	}
	ft := s["breaker"].(map[string]any)["openai"].(map[string]any)["failure_threshold"]
	if ft != float64(9) {
		t.Errorf("breaker.openai.failure_threshold = %v, want 9", ft)
	}
}

// The listen setting applies at the next start, unless --listen is given.
func TestListenSetting(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ body, code string }{
		{`{"listen":"3457"}`, "invalid_setting"},
		{`{"listen":"127.0.0.1:99999"}`, "invalid_setting"},
		{`{"listen":"0.0.0.0:3457"}`, "invalid_setting"}, // no client token
	} {
		if r := h.do("PUT", "/api/settings", tc.body); r.status != 422 || r.errCode() != tc.code {
			t.Errorf("%s: got %d %q, want 422 %q", tc.body, r.status, r.errCode(), tc.code)
		}
	}
	if r := h.do("PUT", "/api/settings", `{"listen":"127.0.0.1:4999"}`); r.status != 200 {
		t.Fatalf("put listen: %d %s", r.status, r.body)
	}
	if got := h.app.Info().Listen; got != "127.0.0.1:3457" {
		t.Errorf("before a restart Info().Listen = %q, want the running address", got)
	}
	h = h.restart()
	if got := h.app.Info().Listen; got != "127.0.0.1:4999" {
		t.Errorf("after a restart Info().Listen = %q, want the setting", got)
	}
	dir := h.dir
	h.stop()
	a, err := New(context.Background(), Options{DataDir: dir, Listen: "127.0.0.1:5001", ListenIsFlag: true, AdminToken: testToken})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	if got := a.Info().Listen; got != "127.0.0.1:5001" {
		t.Errorf("with --listen Info().Listen = %q, want the flag's", got)
	}
}

// The session strategy is accepted and kept like the others.
func TestSessionStrategySetting(t *testing.T) {
	h := newHarness(t)
	if r := h.do("PUT", "/api/settings", `{"strategy":"session"}`); r.status != 200 {
		t.Fatalf("put strategy session: %d %s", r.status, r.body)
	}
	var s map[string]any
	h.do("GET", "/api/settings", "").decode(t, &s)
	if s["strategy"] != "session" {
		t.Errorf("strategy = %v, want session", s["strategy"])
	}
}
