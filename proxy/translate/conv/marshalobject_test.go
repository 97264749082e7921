package conv

import (
	"encoding/json"
	"testing"
)

// MarshalObject writes what Marshal writes, whatever the members hold and
// however wrong the size hint is.
func TestMarshalObjectIsMarshal(t *testing.T) {
	type item struct {
		Role    string `json:"role"`
		Content any    `json:"content,omitempty"`
	}
	n := int64(7)
	objects := []map[string]any{
		{},
		{"model": "m", "messages": []item{{Role: "user", Content: "<b> & \u2028 é \"q\""}, {Role: "assistant"}}},
		{"tools": []any{map[string]any{"b": 1, "a": []string{"x"}}, nil, json.RawMessage(`{"z":1, "y":2}`)}},
		{"nil_slice": []item(nil), "empty": []item{}, "bytes": []byte("raw"), "raw": json.RawMessage(`[1, 2]`)},
		{"max_tokens": &n, "stop": []string{"a", "b"}, "stream_options": map[string]bool{"include_usage": true}, "Zeta": 1, "alpha": 2},
		// The members written without encoding/json: keys that need escapes,
		// strings, bools, ints, *int64 (nil too) and raw JSON with spaces.
		{"k\"<\u2028\xff": "v <&> \n", "stream": true, "parallel": false, "n": int64(-5), "m": -7, "nil_ptr": (*int64)(nil),
			"raw": json.RawMessage(" { \"a\" : [ 1 , \"<\" ] } "), "f": 0.000001},
		{"bad_raw": json.RawMessage(`{"a":`)},
		{"empty_raw": json.RawMessage{}, "x": 1},
	}
	for _, m := range objects {
		want := string(Marshal(m))
		for _, hint := range []int{0, 1, 4096} {
			if got := string(MarshalObject(m, hint)); got != want {
				t.Errorf("MarshalObject(hint %d) = %s\nMarshal gives          %s", hint, got, want)
			}
		}
	}
	if got := string(MarshalObject(map[string]any{"bad": func() {}}, 0)); got != "null" {
		t.Errorf("MarshalObject of a member that cannot be marshalled = %s, want null as Marshal", got)
	}
}
