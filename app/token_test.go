package app

import (
	"fmt"
	"strings"
	"testing"
)

// A client token is 16 to 256 printable ASCII characters without spaces or
// quotes (docs/BEHAVIOUR.md#safety); the refusal never shows the token.
func TestClientTokenForm(t *testing.T) {
	h := newHarness(t)
	before := h.do("GET", "/api/settings", "")
	bad := []struct{ token, says string }{
		{"short-token-123", "must be 16 to 256 characters long, not 15"},
		{strings.Repeat("x", 257), "must be 16 to 256 characters long, not 257"},
		{"has a space-0123456789", "character 4 is not one"},
		{`double"quote-0123456789`, "character 7 is not one"},
		{"single'quote-0123456789", "character 7 is not one"},
		{"back`tick-0123456789", "character 5 is not one"},
		{"tab\tinside-0123456789", "character 4 is not one"},
		{"non-ascii-é-0123456789", "character 11 is not one"},
	}
	for _, tc := range bad {
		r := h.do("PUT", "/api/settings", fmt.Sprintf(`{"client_token":%q}`, tc.token))
		got := r.apiErr(t)
		if r.status != 422 || got.Code != "invalid_setting" || got.Field != "client_token" || !strings.Contains(got.Message, tc.says) {
			t.Errorf("token %q: %d %s, want 422 invalid_setting at client_token saying %q", tc.token, r.status, r.body, tc.says)
		}
		if strings.Contains(got.Message, tc.token) {
			t.Errorf("the refusal shows the token: %s", got.Message)
		}
	}
	if now := h.do("GET", "/api/settings", ""); string(now.body) != string(before.body) {
		t.Errorf("refused tokens changed the settings:\nbefore %s\nafter  %s", before.body, now.body)
	}
	for _, ok := range []string{"0123456789abcdef", strings.Repeat("~", 256), "tok-$(x){y}!#%&*+,./:;<=>?@[]^_|-"} {
		if r := h.do("PUT", "/api/settings", fmt.Sprintf(`{"client_token":%q}`, ok)); r.status != 200 {
			t.Errorf("token %q: %d %s, want 200", ok, r.status, r.body)
		}
	}
	// Bound to loopback, the token may go.
	if r := h.do("PUT", "/api/settings", `{"client_token":""}`); r.status != 200 {
		t.Errorf("clearing the token on loopback: %d %s", r.status, r.body)
	}
}

// While ccmesh is bound to a non-loopback address the client token cannot
// be cleared, whatever the listen setting says: it applies at the next
// start, the address in use is what matters now.
func TestClientTokenKeptWhileBoundOffLoopback(t *testing.T) {
	const token = "lan-client-token-0123456789"
	h := newHarness(t)
	if r := h.do("PUT", "/api/settings", `{"client_token":"`+token+`"}`); r.status != 200 {
		t.Fatalf("set token: %d %s", r.status, r.body)
	}
	h.stop()
	h = startHarness(t, h.dir, func(o *Options) { o.Listen, o.ListenIsFlag = "0.0.0.0:3457", true })
	doc := h.exportWithKeys()
	for _, tc := range []struct{ method, path, body string }{
		{"PUT", "/api/settings", `{"client_token":""}`},
		// The saved listen setting is loopback (empty), but that is the next start's.
		{"PUT", "/api/settings", `{"listen":"127.0.0.1:3457","client_token":""}`},
		{"POST", "/api/import", strings.Replace(string(doc), `"`+token+`"`, `""`, 1)},
	} {
		r := h.do(tc.method, tc.path, tc.body)
		got := r.apiErr(t)
		if r.status != 422 || got.Field != "client_token" ||
			!strings.Contains(got.Message, "cannot be cleared while ccmesh listens on 0.0.0.0:3457, which is not a loopback address") {
			t.Errorf("%s %s %s: %d %s, want 422 at client_token saying why", tc.method, tc.path, tc.body, r.status, r.body)
		}
	}
	if got := h.app.Snapshot().Settings.ClientToken; got != token {
		t.Errorf("client token after the refusals = %q, want it kept", got)
	}
}
