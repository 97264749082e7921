package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Ids and timestamps are fixed for every test: item ids are
// "<prefix>_tok_<output index>", created_at is 1700000000.
func TestMain(m *testing.M) {
	newToken = func() string { return "tok" }
	now = func() time.Time { return time.Unix(1700000000, 0) }
	os.Exit(m.Run())
}

// assertJSON compares got with want structurally.
func assertJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", got, compact(want))
	}
}

func compact(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}

// normRaw compacts raw JSON so that whitespace does not count.
func normRaw(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	return json.RawMessage(compact(string(raw)))
}

// normalized is r with every raw member compacted.
func normalized(r *conv.Request) *conv.Request {
	c := *r
	if r.Extra != nil {
		c.Extra = make(map[string]json.RawMessage, len(r.Extra))
		for k, v := range r.Extra {
			c.Extra[k] = normRaw(v)
		}
	}
	c.Tools = nil
	for _, t := range r.Tools {
		t.Schema, t.Format, t.CacheControl = normRaw(t.Schema), normRaw(t.Format), normRaw(t.CacheControl)
		c.Tools = append(c.Tools, t)
	}
	return &c
}

// assertRequest compares two neutral requests, raw members structurally,
// and names the first fields that differ.
func assertRequest(t *testing.T, got, want *conv.Request) {
	t.Helper()
	g, w := normalized(got), normalized(want)
	if reflect.DeepEqual(g, w) {
		return
	}
	if !reflect.DeepEqual(g.System, w.System) {
		t.Errorf("System\n got: %#v\nwant: %#v", g.System, w.System)
	}
	if len(g.Messages) != len(w.Messages) {
		t.Errorf("%d messages, want %d", len(g.Messages), len(w.Messages))
	}
	for i := range min(len(g.Messages), len(w.Messages)) {
		if !reflect.DeepEqual(g.Messages[i], w.Messages[i]) {
			t.Errorf("message %d\n got: %#v\nwant: %#v", i, g.Messages[i], w.Messages[i])
		}
	}
	if !reflect.DeepEqual(g.Tools, w.Tools) {
		t.Errorf("Tools\n got: %s\nwant: %s", dumpTools(g.Tools), dumpTools(w.Tools))
	}
	if !reflect.DeepEqual(g.Extra, w.Extra) {
		t.Errorf("Extra\n got: %s\nwant: %s", dumpExtra(g.Extra), dumpExtra(w.Extra))
	}
	g.System, w.System, g.Messages, w.Messages, g.Tools, w.Tools, g.Extra, w.Extra = nil, nil, nil, nil, nil, nil, nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Errorf("request\n got: %+v\nwant: %+v", *g, *w)
	}
}

func dumpTools(ts []conv.Tool) string {
	var b strings.Builder
	for _, t := range ts {
		fmt.Fprintf(&b, "\n  {%d %q %q schema=%s strict=%v format=%s ns=%q}", t.Kind, t.Name, t.Description, t.Schema, ptrStr(t.Strict), t.Format, t.Namespace)
	}
	return b.String()
}

func ptrStr(p *bool) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func dumpExtra(m map[string]json.RawMessage) string {
	return string(conv.Marshal(m))
}

func ptr[T any](v T) *T { return &v }

// sse is one server-sent event.
type sse struct{ name, data string }

// parseSSE splits a stream into its events.
func parseSSE(t *testing.T, b []byte) []sse {
	t.Helper()
	var out []sse
	for _, block := range strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n") {
		if block == "" {
			continue
		}
		var ev sse
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			default:
				t.Fatalf("unexpected SSE line %q", line)
			}
		}
		out = append(out, ev)
	}
	return out
}

// decodeAll feeds events to a fresh decoder and returns what it emitted,
// End's events included, and End's verdict.
func decodeAll(t *testing.T, events []sse) ([]conv.Event, bool) {
	t.Helper()
	d := Codec.StreamDecoder()
	var got []conv.Event
	emit := func(ev conv.Event) { got = append(got, ev) }
	for _, ev := range events {
		if err := d.Decode(ev.name, []byte(ev.data), emit); err != nil {
			t.Fatalf("Decode(%s): %v", ev.name, err)
		}
	}
	complete := d.End(emit)
	return got, complete
}

// assertEvents compares neutral events one by one.
func assertEvents(t *testing.T, got, want []conv.Event) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			t.Errorf("event %d missing, want %s", i, fmtEvent(want[i]))
		case i >= len(want):
			t.Errorf("event %d extra: %s", i, fmtEvent(got[i]))
		case !reflect.DeepEqual(got[i], want[i]):
			t.Errorf("event %d\n got: %s\nwant: %s", i, fmtEvent(got[i]), fmtEvent(want[i]))
		}
	}
}

func fmtEvent(ev conv.Event) string {
	names := map[conv.EventType]string{conv.EvStart: "Start", conv.EvBlockStart: "BlockStart", conv.EvDelta: "Delta", conv.EvBlockStop: "BlockStop", conv.EvFinish: "Finish", conv.EvError: "Error"}
	s := fmt.Sprintf("%s{Index:%d Part:%+v Text:%q ID:%q Model:%q Stop:%q Usage:%+v", names[ev.Type], ev.Index, ev.Part, ev.Text, ev.ID, ev.Model, ev.Stop, ev.Usage)
	if ev.Err != nil {
		s += fmt.Sprintf(" Err:%+v", *ev.Err)
	}
	return s + "}"
}

// Neutral event constructors.
func evStart(id, model string) conv.Event {
	return conv.Event{Type: conv.EvStart, ID: id, Model: model}
}
func evBlockStart(i int, p conv.Part) conv.Event {
	return conv.Event{Type: conv.EvBlockStart, Index: i, Part: p}
}
func evDelta(i int, s string) conv.Event { return conv.Event{Type: conv.EvDelta, Index: i, Text: s} }
func evStop(i int, p conv.Part) conv.Event {
	return conv.Event{Type: conv.EvBlockStop, Index: i, Part: p}
}
func evFinish(stop conv.StopReason, u conv.Usage) conv.Event {
	return conv.Event{Type: conv.EvFinish, Stop: stop, Usage: u}
}

var (
	textPart      = conv.Part{Kind: conv.PartText}
	reasoningKind = conv.Part{Kind: conv.PartReasoning}
	toolCallKind  = conv.Part{Kind: conv.PartToolCall}
)
