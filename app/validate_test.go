package app

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/store"
)

// failures reports n Broken failures of Claude requests to b.
func failures(t *testing.T, b *breaker.Breaker, n int) breaker.View {
	t.Helper()
	for i := range n {
		p, err := b.Allow(breaker.Claude, time.Now().Add(time.Minute))
		if err != nil {
			t.Fatalf("allow %d: %v", i, err)
		}
		p.Done(breaker.Outcome{Kind: breaker.Failure, Reason: breaker.Broken})
	}
	return b.View(time.Now())
}

// apiErr is an admin API error reply.
type apiErr struct {
	Code, Field, Message string
}

func (r resp) apiErr(t *testing.T) apiErr {
	t.Helper()
	var body struct{ Error apiErr }
	r.decode(t, &body)
	return body.Error
}

// The protocol, auth mode and breaker overrides of an endpoint are checked
// by the admin API (the store keeps them as given): each rejection has its
// code, field and message, and changes nothing.
func TestEndpointAppFieldValidation(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"taken","base_url":"https://a.example","protocol":"anthropic"}`)
	before := h.do("GET", "/api/endpoints", "")
	with := func(extra string) string {
		return `{"name":"new","base_url":"https://new.example","protocol":"anthropic"` + extra + `}`
	}
	tests := []struct {
		name, body string
		want       apiErr
	}{
		{"no protocol", `{"name":"new","base_url":"https://new.example"}`,
			apiErr{"required", "protocol", "protocol is required: anthropic, openai-chat, openai-responses or gemini"}},
		{"empty protocol", with(`,"protocol":""`),
			apiErr{"required", "protocol", "protocol is required: anthropic, openai-chat, openai-responses or gemini"}},
		{"null protocol", with(`,"protocol":null`),
			apiErr{"required", "protocol", "protocol is required: anthropic, openai-chat, openai-responses or gemini"}},
		{"bad protocol", with(`,"protocol":"openai"`),
			apiErr{"invalid_protocol", "protocol", `protocol "openai" is not one of anthropic, openai-chat, openai-responses, gemini`}},
		{"bad auth", with(`,"auth":"basic"`),
			apiErr{"invalid_auth", "auth", `auth "basic" is not one of auto, x-api-key, bearer`}},
		{"empty auth", with(`,"auth":""`),
			apiErr{"invalid_auth", "auth", `auth "" is not one of auto, x-api-key, bearer`}},
		{"failure_threshold 0", with(`,"breaker_overrides":{"failure_threshold":0}`),
			apiErr{"invalid_breaker_override", "breaker_overrides.failure_threshold", "failure_threshold must be at least 1, got 0"}},
		{"success_threshold -1", with(`,"breaker_overrides":{"success_threshold":-1}`),
			apiErr{"invalid_breaker_override", "breaker_overrides.success_threshold", "success_threshold must be at least 1, got -1"}},
		{"min_requests 0", with(`,"breaker_overrides":{"min_requests":0}`),
			apiErr{"invalid_breaker_override", "breaker_overrides.min_requests", "min_requests must be at least 1, got 0"}},
		{"timeout 0", with(`,"breaker_overrides":{"timeout_ms":0}`),
			apiErr{"invalid_breaker_override", "breaker_overrides.timeout_ms", "timeout_ms must be more than 0 milliseconds, got 0"}},
		{"rate limit timeout -5", with(`,"breaker_overrides":{"rate_limit_timeout_ms":-5}`),
			apiErr{"invalid_breaker_override", "breaker_overrides.rate_limit_timeout_ms", "rate_limit_timeout_ms must be more than 0 milliseconds, got -5"}},
		{"max rate limit timeout 0", with(`,"breaker_overrides":{"max_rate_limit_timeout_ms":0}`),
			apiErr{"invalid_breaker_override", "breaker_overrides.max_rate_limit_timeout_ms", "max_rate_limit_timeout_ms must be more than 0 milliseconds, got 0"}},
		{"quota timeout 0", with(`,"breaker_overrides":{"quota_timeout_ms":0}`),
			apiErr{"invalid_breaker_override", "breaker_overrides.quota_timeout_ms", "quota_timeout_ms must be more than 0 milliseconds, got 0"}},
		{"error rate 0", with(`,"breaker_overrides":{"error_rate_threshold":0}`),
			apiErr{"invalid_breaker_override", "breaker_overrides.error_rate_threshold", "error_rate_threshold must be more than 0 and at most 1, got 0"}},
		{"error rate above 1", with(`,"breaker_overrides":{"error_rate_threshold":1.01}`),
			apiErr{"invalid_breaker_override", "breaker_overrides.error_rate_threshold", "error_rate_threshold must be more than 0 and at most 1, got 1.01"}},
		// Field checks come before the name's uniqueness.
		{"bad protocol on a taken name", `{"name":"taken","base_url":"https://a.example","protocol":"grpc"}`,
			apiErr{"invalid_protocol", "protocol", `protocol "grpc" is not one of anthropic, openai-chat, openai-responses, gemini`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", "/api/endpoints", tc.body)
			if r.status != 422 {
				t.Fatalf("status %d, want 422: %s", r.status, r.body)
			}
			if got := r.apiErr(t); got != tc.want {
				t.Errorf("error\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}

	taken := h.app.Snapshot().Endpoints[0].ID
	updates := []struct {
		name, body string
		want       apiErr
	}{
		{"empty protocol", `{"protocol":""}`,
			apiErr{"required", "protocol", "protocol is required: anthropic, openai-chat, openai-responses or gemini"}},
		{"bad protocol", `{"protocol":"grpc"}`,
			apiErr{"invalid_protocol", "protocol", `protocol "grpc" is not one of anthropic, openai-chat, openai-responses, gemini`}},
		{"bad auth", `{"auth":"basic","api_key":"sk-new"}`,
			apiErr{"invalid_auth", "auth", `auth "basic" is not one of auto, x-api-key, bearer`}},
		{"bad override", `{"breaker_overrides":{"timeout_ms":-1}}`,
			apiErr{"invalid_breaker_override", "breaker_overrides.timeout_ms", "timeout_ms must be more than 0 milliseconds, got -1"}},
	}
	for _, tc := range updates {
		t.Run("update "+tc.name, func(t *testing.T) {
			r := h.do("PUT", fmt.Sprintf("/api/endpoints/%d", taken), tc.body)
			if r.status != 422 {
				t.Fatalf("status %d, want 422: %s", r.status, r.body)
			}
			if got := r.apiErr(t); got != tc.want {
				t.Errorf("error\n got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	// An unknown id is 404 whatever the body says.
	if r := h.do("PUT", "/api/endpoints/999", `{"protocol":"grpc"}`); r.status != 404 || r.errCode() != "not_found" {
		t.Errorf("update of an unknown id with a bad body: %d %s, want 404 not_found", r.status, r.body)
	}
	if after := h.do("GET", "/api/endpoints", ""); string(after.body) != string(before.body) {
		t.Errorf("rejected calls changed the endpoints:\nbefore %s\nafter  %s", before.body, after.body)
	}
}

// Breaker overrides are stored with the parameters they set, as the API
// shows them: nulls are dropped, and the breaker uses them.
func TestEndpointOverridesStored(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic","auth":"bearer",` +
		`"breaker_overrides":{"failure_threshold":3, "timeout_ms":30000,"quota_timeout_ms":null,"disabled":false}}`)
	const want = `{"failure_threshold":3,"timeout_ms":30000,"disabled":false}`
	if string(e.BreakerOverrides) != want || e.Auth != "bearer" {
		t.Errorf("created breaker_overrides %s auth %q, want %s bearer", e.BreakerOverrides, e.Auth, want)
	}
	if v := failures(t, h.app.Breakers().Get(e.ID), 3); v.State != breaker.Open || v.Until.Sub(v.OpenedAt) != 30*time.Second {
		t.Errorf("after 3 failures: %v for %v, want open for the override's 30s", v.State, v.Until.Sub(v.OpenedAt))
	}
	steps := []struct{ body, want string }{
		{`{"enabled":false}`, want},
		{`{"breaker_overrides":null}`, want},
		{`{"breaker_overrides":{"min_requests":7}}`, `{"min_requests":7}`},
		{`{"breaker_overrides":{}}`, `{}`},
	}
	for _, st := range steps {
		r := h.do("PUT", fmt.Sprintf("/api/endpoints/%d", e.ID), st.body)
		var upd EndpointReply
		r.decode(t, &upd)
		if r.status != 200 || string(upd.BreakerOverrides) != st.want {
			t.Errorf("PUT %s: %d breaker_overrides %s, want 200 %s", st.body, r.status, upd.BreakerOverrides, st.want)
		}
	}
	// A reload decodes them from the database.
	h = h.restart()
	var list []EndpointReply
	h.do("GET", "/api/endpoints", "").decode(t, &list)
	if len(list) != 1 || string(list[0].BreakerOverrides) != `{}` || list[0].Auth != "bearer" {
		t.Errorf("after a restart: %+v", list)
	}
}

// A wrong JSON type is 400 bad_json, naming the field by its JSON path and
// the type as these messages always have.
func TestBadJSONMessages(t *testing.T) {
	h := newHarness(t)
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	ep := `{"name":"x","base_url":"https://a.example","protocol":"anthropic",`
	tests := []struct {
		method, path, body string
		want               apiErr
	}{
		{"POST", "/api/endpoints", ep + `"protocol":5}`, apiErr{"bad_json", "protocol", `field "protocol" must be a string, not a JSON number`}},
		{"POST", "/api/endpoints", ep + `"auth":true}`, apiErr{"bad_json", "auth", `field "auth" must be a string, not a JSON bool`}},
		{"POST", "/api/endpoints", ep + `"models":5}`, apiErr{"bad_json", "models", `field "models" must be an array, not a JSON number`}},
		{"POST", "/api/endpoints", ep + `"breaker_overrides":"x"}`,
			apiErr{"bad_json", "breaker_overrides", `field "breaker_overrides" must be an object, not a JSON string`}},
		{"POST", "/api/endpoints", ep + `"breaker_overrides":{"timeout_ms":1.5}}`,
			apiErr{"bad_json", "breaker_overrides.timeout_ms", `field "breaker_overrides.timeout_ms" must be a whole number, not a JSON number 1.5`}},
		{"POST", "/api/endpoints", ep + `"breaker_overrides":{"failure_threshold":"x"}}`,
			apiErr{"bad_json", "breaker_overrides.failure_threshold", `field "breaker_overrides.failure_threshold" must be a whole number, not a JSON string`}},
		// The first wrong type in the document is the one reported.
		{"POST", "/api/endpoints", ep + `"breaker_overrides":{"timeout_ms":"x"},"models":5}`,
			apiErr{"bad_json", "breaker_overrides.timeout_ms", `field "breaker_overrides.timeout_ms" must be a whole number, not a JSON string`}},
		{"POST", "/api/endpoints", `"x"`,
			apiErr{"bad_json", "", `the request body must be an object, not a JSON string`}},
		{"PUT", fmt.Sprintf("/api/endpoints/%d", e.ID), `{"sort_order":"1"}`,
			apiErr{"bad_json", "sort_order", `field "sort_order" must be a whole number, not a JSON string`}},
		{"PUT", "/api/settings", `{"strategy":5}`, apiErr{"bad_json", "strategy", `field "strategy" must be a string, not a JSON number`}},
		{"PUT", "/api/settings", `{"breaker":"x"}`,
			apiErr{"bad_json", "breaker", `field "breaker" must be an object, not a JSON string`}},
		{"PUT", "/api/settings", `{"breaker":{"openai":[]}}`,
			apiErr{"bad_json", "breaker.openai", `field "breaker.openai" must be an object, not a JSON array`}},
		{"PUT", "/api/settings", `{"breaker":{"claude":{"quota_timeout_ms":"1h"}}}`,
			apiErr{"bad_json", "breaker.claude.quota_timeout_ms", `field "breaker.claude.quota_timeout_ms" must be a whole number, not a JSON string`}},
		{"PUT", "/api/settings", `[]`,
			apiErr{"bad_json", "", `the request body must be an object, not a JSON array`}},
		{"POST", "/api/import", `{"version":1,"settings":"x","endpoints":[]}`,
			apiErr{"bad_json", "settings", `field "settings" must be an object, not a JSON string`}},
		{"POST", "/api/import", `{"version":1,"endpoints":[{"name":"n","models":{}}]}`,
			apiErr{"bad_json", "endpoints.models", `field "endpoints.models" must be an array, not a JSON object`}},
		{"POST", "/api/import", `{"version":1,"endpoints":[{"name":"n","breaker_overrides":7}]}`,
			apiErr{"bad_json", "endpoints.breaker_overrides", `field "endpoints.breaker_overrides" must be an object, not a JSON number`}},
		{"POST", "/api/import", `"x"`,
			apiErr{"bad_json", "", `the request body must be an object, not a JSON string`}},
	}
	for _, tc := range tests {
		r := h.do(tc.method, tc.path, tc.body)
		if r.status != 400 {
			t.Errorf("%s %s %s: status %d, want 400: %s", tc.method, tc.path, tc.body, r.status, r.body)
			continue
		}
		if got := r.apiErr(t); got != tc.want {
			t.Errorf("%s %s %s\n got %+v\nwant %+v", tc.method, tc.path, tc.body, got, tc.want)
		}
	}
}

// An import validates its endpoints as the store applies them: an
// endpoint whose name exists is an update and needs no protocol; any other
// is a create and gets auth auto. A name may appear once in an import.
func TestImportValidation(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"old","base_url":"https://old.example","protocol":"openai-chat","auth":"bearer"}`)
	before := h.do("GET", "/api/endpoints", "")
	bad := []struct {
		body string
		want apiErr
	}{
		{`{"version":1,"endpoints":[{"name":"new1","base_url":"https://a.example"}]}`,
			apiErr{"required", "endpoints[0].protocol", "endpoint 1 (new1): protocol is required: anthropic, openai-chat, openai-responses or gemini"}},
		{`{"version":1,"endpoints":[{"name":"old"},{"name":"new1","base_url":"https://a.example","protocol":"grpc"}]}`,
			apiErr{"invalid_protocol", "endpoints[1].protocol", `endpoint 2 (new1): protocol "grpc" is not one of anthropic, openai-chat, openai-responses, gemini`}},
		{`{"version":1,"endpoints":[{"name":"new1","base_url":"https://a.example","protocol":"anthropic","auth":"basic"}]}`,
			apiErr{"invalid_auth", "endpoints[0].auth", `endpoint 1 (new1): auth "basic" is not one of auto, x-api-key, bearer`}},
		{`{"version":1,"endpoints":[{"name":"ok","base_url":"https://a.example","protocol":"anthropic"},{"name":"new2","base_url":"https://a.example","protocol":"anthropic","breaker_overrides":{"timeout_ms":-1}}]}`,
			apiErr{"invalid_breaker_override", "endpoints[1].breaker_overrides.timeout_ms", "endpoint 2 (new2): timeout_ms must be more than 0 milliseconds, got -1"}},
		{`{"version":1,"endpoints":[{"name":"ok","base_url":"https://a.example","protocol":"anthropic"},{"name":"bad name","base_url":"https://a.example","protocol":"anthropic"}]}`,
			apiErr{"invalid_name", "endpoints[1].name", `endpoint 2 (bad name): name "bad name" must be 1 to 64 characters of letters, digits, '.', '_' or '-' (it is used in @name/model)`}},
		{`{"version":1,"settings":{"strategy":"nope"},"endpoints":[]}`,
			apiErr{"invalid_setting", "strategy", `strategy must be sticky, priority, round-robin, session, fastest or weighted, not "nope"`}},
	}
	for _, tc := range bad {
		r := h.do("POST", "/api/import", tc.body)
		if r.status != 422 {
			t.Errorf("import %s: status %d, want 422: %s", tc.body, r.status, r.body)
			continue
		}
		if got := r.apiErr(t); got != tc.want {
			t.Errorf("import %s\n got %+v\nwant %+v", tc.body, got, tc.want)
		}
	}
	if after := h.do("GET", "/api/endpoints", ""); string(after.body) != string(before.body) {
		t.Errorf("rejected imports changed the endpoints:\nbefore %s\nafter  %s", before.body, after.body)
	}

	good := `{"version":1,"endpoints":[` +
		`{"name":"old","base_url":"https://old2.example","breaker_overrides":{"success_threshold":4}},` +
		`{"name":"new","base_url":"https://n2.example","protocol":"anthropic"}]}`
	if r := h.do("POST", "/api/import", good); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	var list []EndpointReply
	h.do("GET", "/api/endpoints", "").decode(t, &list)
	if len(list) != 2 {
		t.Fatalf("endpoints after the import: %+v", list)
	}
	if o := list[0]; o.Protocol != "openai-chat" || o.Auth != "bearer" || o.BaseURL != "https://old2.example" || string(o.BreakerOverrides) != `{"success_threshold":4}` {
		t.Errorf("updated endpoint: %+v", o)
	}
	if n := list[1]; n.Protocol != "anthropic" || n.Auth != "auto" || n.BaseURL != "https://n2.example" || string(n.BreakerOverrides) != `{}` {
		t.Errorf("created endpoint: %+v", n)
	}
}

// The settings document is the app's: the stored one is laid over the
// defaults, a rejected PUT changes nothing (not even the snapshot that
// later PUTs merge onto), and the breaker profiles reach the breakers.
func TestSettingsDocument(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(t.Context(), filepath.Join(dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	// A database written before most settings existed.
	if err := db.PutSettings(t.Context(), json.RawMessage(`{"strategy":"round-robin","idle_timeout_ms":5,"notifications":false}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	h := startHarness(t, dir)
	want := DefaultSettings()
	want.Strategy, want.IdleTimeoutMs, want.Notifications = "round-robin", 5, false
	if got := h.app.Snapshot().Settings; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("settings laid over the defaults\n got %+v\nwant %+v", got, want)
	}

	ok := `{"breaker":{"claude":{"failure_threshold":5,"timeout_ms":1000},"openai":{"disabled":true}}}`
	if r := h.do("PUT", "/api/settings", ok); r.status != 200 {
		t.Fatalf("put settings: %d %s", r.status, r.body)
	}
	good := h.do("GET", "/api/settings", "")
	for _, body := range []string{
		`{"breaker":{"claude":{"failure_threshold":0}}}`,
		`{"breaker":{"openai":{"error_rate_threshold":2}}}`,
		`{"breaker":{"claude":{"timeout_ms":"x"}}}`,
		`{"strategy":"bad","breaker":{"claude":{"failure_threshold":0}}}`,
	} {
		if r := h.do("PUT", "/api/settings", body); r.status/100 != 4 {
			t.Errorf("PUT %s: %d, want a rejection", body, r.status)
		}
		if now := h.do("GET", "/api/settings", ""); string(now.body) != string(good.body) {
			t.Errorf("a rejected PUT %s changed the settings:\nbefore %s\nafter  %s", body, good.body, now.body)
		}
	}
	if r := h.do("PUT", "/api/settings", `{"breaker":{"claude":{"success_threshold":2}}}`); r.status != 200 ||
		!strings.Contains(string(r.body), `"claude":{"failure_threshold":5,"success_threshold":2,"timeout_ms":1000}`) {
		t.Errorf("merge after rejected PUTs: %d %s", r.status, r.body)
	}
	e := h.mustCreate(`{"name":"a","base_url":"https://a.example","protocol":"anthropic"}`)
	b := h.app.Breakers().Get(e.ID)
	if v := failures(t, b, 4); v.State != breaker.Closed {
		t.Errorf("after 4 failures: %v, want closed below the profile's threshold of 5", v.State)
	}
	if v := failures(t, b, 1); v.State != breaker.Open || v.Until.Sub(v.OpenedAt) != time.Second {
		t.Errorf("after 5 failures: %v for %v, want open for the profile's 1s", v.State, v.Until.Sub(v.OpenedAt))
	}
	h = h.restart()
	if again := h.do("GET", "/api/settings", ""); !strings.Contains(string(again.body), `"success_threshold":2`) {
		t.Errorf("settings after a restart: %s", again.body)
	}
}
