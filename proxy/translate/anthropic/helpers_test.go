package anthropic

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// jsonEqual fails t unless got and want are the same JSON value.
func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", got, compact(want))
	}
}

func compact(s string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(s)) != nil {
		return s
	}
	return b.String()
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func i64(v int64) *int64 { return &v }

func f64(v float64) *float64 { return &v }

// sse is one event of a stream: its name and its data as a JSON value.
type sse struct {
	name string
	data any
}

var generated = regexp.MustCompile(`^(msg|toolu)_[0-9a-f]{24}$`)

// parseSSE splits encoder output into events. An id the encoder made up
// reads as "<generated>".
func parseSSE(t *testing.T, b []byte) []sse {
	t.Helper()
	var out []sse
	s := string(b)
	if s != "" && !strings.HasSuffix(s, "\n\n") {
		t.Fatalf("stream does not end with a blank line: %q", s)
	}
	for _, chunk := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
		if chunk == "" {
			continue
		}
		lines := strings.Split(chunk, "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "event: ") || !strings.HasPrefix(lines[1], "data: ") {
			t.Fatalf("malformed SSE event %q", chunk)
		}
		var v any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "data: ")), &v); err != nil {
			t.Fatalf("event data is not JSON: %q", lines[1])
		}
		out = append(out, sse{name: strings.TrimPrefix(lines[0], "event: "), data: markGenerated(v)})
	}
	return out
}

func markGenerated(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "id" && generated.MatchString(s) {
				x[k] = "<generated>"
			} else {
				x[k] = markGenerated(e)
			}
		}
	case []any:
		for i := range x {
			x[i] = markGenerated(x[i])
		}
	}
	return v
}

// events builds the expected stream from name, JSON pairs.
func events(t *testing.T, pairs ...string) []sse {
	t.Helper()
	var out []sse
	for i := 0; i+1 < len(pairs); i += 2 {
		var v any
		if err := json.Unmarshal([]byte(pairs[i+1]), &v); err != nil {
			t.Fatalf("bad expected data %q: %v", pairs[i+1], err)
		}
		out = append(out, sse{name: pairs[i], data: v})
	}
	return out
}

func sameSSE(t *testing.T, got []byte, want []sse) {
	t.Helper()
	g := parseSSE(t, got)
	n := max(len(g), len(want))
	for i := range n {
		switch {
		case i >= len(g):
			t.Errorf("event %d missing, want %s %s", i, want[i].name, conv.Marshal(want[i].data))
		case i >= len(want):
			t.Errorf("event %d extra: %s %s", i, g[i].name, conv.Marshal(g[i].data))
		case g[i].name != want[i].name || !reflect.DeepEqual(g[i].data, want[i].data):
			t.Errorf("event %d\n got: %s %s\nwant: %s %s", i, g[i].name, conv.Marshal(g[i].data), want[i].name, conv.Marshal(want[i].data))
		}
	}
}

// decodeStream feeds (name, data) pairs to a fresh decoder and returns
// the events, those of End included, and End's verdict.
func decodeStream(t *testing.T, pairs ...string) ([]conv.Event, bool) {
	t.Helper()
	d := Codec.StreamDecoder()
	var evs []conv.Event
	emit := func(ev conv.Event) { evs = append(evs, ev) }
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := d.Decode(pairs[i], []byte(pairs[i+1]), emit); err != nil {
			t.Fatalf("Decode(%s): %v", pairs[i], err)
		}
	}
	return evs, d.End(emit)
}

func sameEvents(t *testing.T, got, want []conv.Event) {
	t.Helper()
	n := max(len(got), len(want))
	for i := range n {
		switch {
		case i >= len(got):
			t.Errorf("event %d missing, want %+v", i, want[i])
		case i >= len(want):
			t.Errorf("event %d extra: %+v", i, got[i])
		case !reflect.DeepEqual(got[i], want[i]):
			t.Errorf("event %d\n got: %+v\nwant: %+v", i, got[i], want[i])
		}
	}
}

func mustAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}
