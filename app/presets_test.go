package app

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/app/balance"
	"github.com/ccmesh/ccmesh/proxy"
)

// Every shipped preset is an endpoint ccmesh would accept, with its source.
func TestPresets(t *testing.T) {
	if len(presets) < 11 {
		t.Fatalf("%d presets", len(presets))
	}
	seen := map[string]bool{}
	for _, p := range presets {
		if seen[p.ID] {
			t.Errorf("duplicate id %s", p.ID)
		}
		seen[p.ID] = true
		if !proxy.Protocol(p.Protocol).Valid() || !proxy.AuthMode(p.Auth).Valid() || p.Name == "" || p.Date == "" {
			t.Errorf("%s: protocol %q auth %q name %q date %q", p.ID, p.Protocol, p.Auth, p.Name, p.Date)
		}
		if p.ID == "custom" {
			continue
		}
		if u, err := url.Parse(p.BaseURL); err != nil || u.Scheme != "https" || u.Host == "" {
			t.Errorf("%s: base_url %q", p.ID, p.BaseURL)
		}
		if !strings.HasPrefix(p.Source, "https://") {
			t.Errorf("%s: source %q", p.ID, p.Source)
		}
		if field, msg := (balance.Connector{Template: p.Balance}).Check(p.BaseURL); field != "" {
			t.Errorf("%s: balance template %q: %s", p.ID, p.Balance, msg)
		}
	}
	h := newHarness(t)
	// Each must be an endpoint the admin API takes as it is, with a key.
	for _, p := range presets {
		if p.ID == "custom" {
			continue
		}
		body, _ := json.Marshal(map[string]any{"name": p.ID, "protocol": p.Protocol, "base_url": p.BaseURL, "auth": p.Auth,
			"models": p.Models, "model_map": p.ModelMap, "api_key": "sk-test"})
		if r := h.do("POST", "/api/endpoints", string(body)); r.status != 201 && r.status != 200 {
			t.Errorf("%s: %d %s", p.ID, r.status, r.body)
		}
	}
	var got struct{ Presets []Preset }
	h.do("GET", "/api/presets", "").decode(t, &got)
	if len(got.Presets) != len(presets) {
		t.Errorf("API lists %d presets", len(got.Presets))
	}
}

// Gemini has a native preset (protocol gemini, Google's own base URL)
// besides the OpenAI-compatible one.
func TestPresetGeminiNative(t *testing.T) {
	want := map[string]string{"gemini-native": "gemini", "gemini": "openai-chat"}
	for _, p := range presets {
		if proto, ok := want[p.ID]; ok {
			if p.Protocol != proto || !strings.HasPrefix(p.BaseURL, "https://generativelanguage.googleapis.com") {
				t.Errorf("%s: protocol %q base %q, want %q on generativelanguage.googleapis.com", p.ID, p.Protocol, p.BaseURL, proto)
			}
			delete(want, p.ID)
		}
	}
	if len(want) > 0 {
		t.Errorf("presets missing: %v", want)
	}
}
