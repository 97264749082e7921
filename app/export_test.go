package app

import (
	"slices"
	"testing"
)

func TestExportImportRoundTrip(t *testing.T) {
	h := newHarness(t)
	h.mustCreate(`{"name":"one","base_url":"https://a.example","protocol":"anthropic","api_key":"k1-abcdefghijkl","models":["claude-*"]}`)
	exp := h.do("GET", "/api/export?keys=1", "")
	other := newHarness(t)
	if r := other.do("POST", "/api/import", string(exp.body)); r.status != 200 {
		t.Fatalf("import: %d %s", r.status, r.body)
	}
	var list []EndpointReply
	other.do("GET", "/api/endpoints", "").decode(t, &list)
	if len(list) != 1 || list[0].Name != "one" || !list[0].HasKey || !slices.Equal(list[0].Models, []string{"claude-*"}) {
		t.Errorf("imported = %+v", list)
	}
	bad := `{"version":1,"endpoints":[{"name":"ok","base_url":"https://a.example","protocol":"anthropic"},{"name":"bad name","base_url":"https://a.example","protocol":"anthropic"}]}`
	if r := other.do("POST", "/api/import", bad); r.status != 422 {
		t.Errorf("bad import: got %d, want 422", r.status)
	}
	other.do("GET", "/api/endpoints", "").decode(t, &list)
	if len(list) != 1 {
		t.Errorf("a rejected import changed the endpoints: %d now", len(list))
	}
}
