package app

import "testing"

func TestEndpointBadInputs(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"taken","base_url":"https://a.example","protocol":"anthropic"}`)
	cases := []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"bad name", "POST", "/api/endpoints", `{"name":"has space","base_url":"https://a.example","protocol":"anthropic"}`, 422, "invalid_name"},
		{"duplicate name", "POST", "/api/endpoints", `{"name":"taken","base_url":"https://b.example","protocol":"anthropic"}`, 409, "duplicate_name"},
		{"non-http url", "POST", "/api/endpoints", `{"name":"x","base_url":"ftp://a.example","protocol":"anthropic"}`, 422, "invalid_url"},
		{"unknown protocol", "POST", "/api/endpoints", `{"name":"x","base_url":"https://a.example","protocol":"grpc"}`, 422, "invalid_protocol"},
		{"missing name", "POST", "/api/endpoints", `{"base_url":"https://a.example","protocol":"anthropic"}`, 422, "required"},
		{"malformed json", "POST", "/api/endpoints", `{"name":`, 400, "bad_json"},
		{"wrong type", "POST", "/api/endpoints", `{"name":7}`, 400, "bad_json"},
		{"unknown id get", "GET", "/api/endpoints/999", "", 404, "not_found"},
		{"unknown id put", "PUT", "/api/endpoints/999", `{"enabled":false}`, 404, "not_found"},
		{"unknown id delete", "DELETE", "/api/endpoints/999", "", 404, "not_found"},
		{"unknown id force-open", "POST", "/api/endpoints/999/force-open", "", 404, "not_found"},
		{"bad id", "GET", "/api/endpoints/abc", "", 400, "bad_id"},
		{"fast queue unknown id", "PUT", "/api/fast-queue", `{"ids":[999]}`, 422, "unknown_id"},
		{"fast queue no ids", "PUT", "/api/fast-queue", `{}`, 400, "required"},
		{"order not permutation", "PUT", "/api/order", `{"ids":[]}`, 422, "not_permutation"},
		{"bad strategy", "PUT", "/api/settings", `{"strategy":"random"}`, 422, "invalid_setting"},
		{"bad breaker default", "PUT", "/api/settings", `{"breaker":{"claude":{"failure_threshold":0}}}`, 422, "invalid_breaker_override"},
		{"bad log limit", "GET", "/api/logs?limit=0", "", 400, "bad_query"},
		{"unknown route", "GET", "/api/nope", "", 404, "not_found"},
	}
	before := h.do("GET", "/api/endpoints", "")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do(tc.method, tc.path, tc.body)
			if r.status != tc.status || r.errCode() != tc.code {
				t.Errorf("got %d %q, want %d %q (body %s)", r.status, r.errCode(), tc.status, tc.code, r.body)
			}
		})
	}
	if after := h.do("GET", "/api/endpoints", ""); string(after.body) != string(before.body) {
		t.Errorf("rejected calls changed the endpoints:\nbefore %s\nafter  %s", before.body, after.body)
	}
}
