package app

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/ccmesh/ccmesh/store"
)

// FuzzEndpointInput feeds bytes through the path POST /api/endpoints takes
// before it writes — decodeBody, validate, patch (endpointCreate), then the
// store's checks (store.CheckEndpoint) — and PUT's decode and validate. It
// never panics, and an endpoint it accepts round-trips: written out as an
// export writes it and taken in again, it is accepted and is the same
// endpoint.
func FuzzEndpointInput(f *testing.F) {
	for _, seed := range []string{
		`{"name":"main","base_url":"https://api.anthropic.com/","protocol":"anthropic","api_key":"sk-ant-0123456789"}`,
		`{"name":"relay.v2","base_url":" http://127.0.0.1:8080/api/v4// ","protocol":"openai-chat","auth":"bearer",` +
			`"models":["gpt-*","o3"],"model_map":{"gpt-4*":"gpt-4.1"},"enabled":false,"fast":true,"fast_sort_order":3,` +
			`"sort_order":7,"breaker_overrides":{"failure_threshold":3,"timeout_ms":30000,"error_rate_threshold":0.5,"disabled":false}}`,
		`{"name":"r","base_url":"https://r.example","protocol":"openai-responses","breaker_overrides":null,"models":null}`,
		`{"name":"s","base_url":"https://s.example/ / ","protocol":"anthropic","models":[" x "]}`,
		`{"name":"..","base_url":"https://r.example:99999","protocol":"anthropic"}`,
		`{"name":"x","base_url":"https://x.example","protocol":"anthropic","enabeld":true}`,
		`{"name":"x","base_url":"https://x.example","protocol":"anthropic","api_key":"sk-\ud800"}`,
		"{\"name\":\"x\",\"base_url\":\"https://x.example\",\"protocol\":\"anthropic\",\"api_key\":\"\xff\"}",
		`{"name":"x","base_url":"https://x.example","protocol":"anthropic","sort_order":9223372036854775807}`,
		`[]`, `null`, `{`, `{"name":1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var upd endpointInput
		if decodeBody(body, &upd) == nil {
			_ = upd.Validate(false) // PUT's checks: must not panic
		}
		p, err := endpointCreate(body)
		if err != nil {
			return
		}
		e, err := store.CheckEndpoint(p)
		if err != nil {
			return
		}
		again, err := json.Marshal(store.PatchOf(e))
		if err != nil {
			t.Fatalf("encode %+v: %v", e, err)
		}
		p2, err := endpointCreate(again)
		if err != nil {
			t.Fatalf("accepted %q as %+v, but not its export %s: %v", body, e, again, err)
		}
		e2, err := store.CheckEndpoint(p2)
		if err != nil {
			t.Fatalf("accepted %q as %+v, but the store refuses its export %s: %v", body, e, again, err)
		}
		if !reflect.DeepEqual(e, e2) {
			t.Fatalf("%q round-trips through %s\nfrom %+v\n  to %+v", body, again, e, e2)
		}
	})
}
