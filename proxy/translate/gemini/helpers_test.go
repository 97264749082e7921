package gemini

import (
	"bytes"
	"encoding/json"
	"reflect"
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
		var c bytes.Buffer
		_ = json.Compact(&c, []byte(want))
		t.Errorf("JSON differs\n got: %s\nwant: %s", got, c.String())
	}
}

func i64(v int64) *int64 { return &v }

func f64(v float64) *float64 { return &v }

// decodeStream feeds SSE data payloads to a decoder and returns its
// events, End's included, and End's verdict.
func decodeStream(t *testing.T, d conv.StreamDecoder, datas ...string) ([]conv.Event, bool) {
	t.Helper()
	var evs []conv.Event
	emit := func(ev conv.Event) { evs = append(evs, ev) }
	for _, data := range datas {
		if err := d.Decode("", []byte(data), emit); err != nil {
			t.Fatalf("Decode(%s): %v", data, err)
		}
	}
	return evs, d.End(emit)
}

func sameEvents(t *testing.T, got, want []conv.Event) {
	t.Helper()
	for i := range max(len(got), len(want)) {
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

// sseData splits an SSE stream into its data payloads.
func sseData(t *testing.T, b []byte) []string {
	t.Helper()
	s := string(b)
	if s != "" && !strings.HasSuffix(s, "\n\n") {
		t.Fatalf("stream does not end with a blank line: %q", s)
	}
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
		if ev == "" {
			continue
		}
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("malformed SSE event %q", ev)
		}
		out = append(out, data)
	}
	return out
}

// discipline checks a stream's neutral events against conv.Event's block
// rules (the same rules proxy/translate/fuzz_test.go holds every decoder
// to).
type discipline struct {
	started, finished bool
	next, open        int
	toolDeltas        int
	openKind          conv.PartKind
}

func newDiscipline() *discipline { return &discipline{open: -1} }

func (d *discipline) check(ev conv.Event) string {
	if d.finished && ev.Type != conv.EvError {
		return "an event after EvFinish"
	}
	if !d.started && ev.Type != conv.EvStart && ev.Type != conv.EvError {
		return "an event before EvStart"
	}
	switch ev.Type {
	case conv.EvStart:
		if d.started {
			return "a second EvStart"
		}
		d.started = true
	case conv.EvBlockStart:
		if d.open >= 0 || ev.Index != d.next {
			return "a block starts out of turn"
		}
		d.open, d.next, d.openKind, d.toolDeltas = ev.Index, d.next+1, ev.Part.Kind, 0
	case conv.EvDelta:
		if ev.Index != d.open || d.open < 0 {
			return "a delta for a block that is not open"
		}
		if d.openKind == conv.PartToolCall {
			if d.toolDeltas++; d.toolDeltas > 1 || !json.Valid([]byte(ev.Text)) {
				return "a tool call's arguments not in one whole delta"
			}
		}
	case conv.EvBlockStop:
		if ev.Index != d.open || d.open < 0 {
			return "a stop for a block that is not open"
		}
		if d.openKind == conv.PartToolCall && d.toolDeltas != 1 {
			return "a tool call stopped without its one delta"
		}
		d.open = -1
	case conv.EvFinish:
		if d.open >= 0 {
			return "EvFinish with a block open"
		}
		d.finished = true
	}
	return ""
}

func checkDiscipline(t *testing.T, evs []conv.Event) {
	t.Helper()
	d := newDiscipline()
	for i, ev := range evs {
		if msg := d.check(ev); msg != "" {
			t.Fatalf("event %d (%+v): %s", i, ev, msg)
		}
	}
}
