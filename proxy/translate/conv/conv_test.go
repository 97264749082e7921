package conv

import (
	"reflect"
	"testing"
)

func TestCanonicalArgs(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "{}"},
		{"   ", "{}"},
		{"null", "{}"},
		{"[1,2]", "{}"},
		{`{"b":1,"a":{"d":2,"c":[1.50,"x<y"]}}`, `{"a":{"c":[1.50,"x<y"],"d":2},"b":1}`},
		{`{"path":"/tmp/a", "n": 10000000000000000000001}`, `{"n":10000000000000000000001,"path":"/tmp/a"}`},
		{`{"cut":"half`, "{}"},
		{`{"a":1}{"b":2}`, "{}"},
		{"{\n  \"x\": \"é\"\n}", `{"x":"é"}`},
	} {
		if got := CanonicalArgs(c.in); got != c.want {
			t.Errorf("CanonicalArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCustomArgsRoundTrip(t *testing.T) {
	in := "*** Begin Patch\n*** Add File: a.txt\n+<hi> & \"bye\"\n*** End Patch\n"
	args := CustomArgs(in)
	if CanonicalArgs(args) != args {
		t.Errorf("CustomArgs is not canonical: %s", args)
	}
	if got := CustomInput(args); got != in {
		t.Errorf("CustomInput(CustomArgs(x)) = %q, want %q", got, in)
	}
	if got := CustomInput(`{"other":1}`); got != `{"other":1}` {
		t.Errorf("CustomInput of non-custom args = %q", got)
	}
}

func TestSchema(t *testing.T) {
	for _, in := range []string{"", "null", " null ", "{}"} {
		if got := string(Schema([]byte(in))); got != string(EmptySchema) {
			t.Errorf("Schema(%q) = %s", in, got)
		}
	}
	s := `{"type":"object","properties":{"a":{"type":"string"}}}`
	if got := string(Schema([]byte(s))); got != s {
		t.Errorf("Schema kept %s as %s", s, got)
	}
}

func TestEffort(t *testing.T) {
	for _, e := range []string{"low", "medium", "high"} {
		if got := EffortForBudget(BudgetForEffort(e)); got != e {
			t.Errorf("effort %s → budget %d → %s", e, BudgetForEffort(e), got)
		}
	}
	if EffortForBudget(0) != "" || BudgetForEffort("bogus") != 0 {
		t.Error("zero budget or unknown effort must map to nothing")
	}
	steps := []string{}
	for e := "max"; e != ""; e = StepDown(e) {
		steps = append(steps, e)
	}
	if want := []string{"max", "high", "medium", "low", "minimal"}; !reflect.DeepEqual(steps, want) {
		t.Errorf("StepDown chain = %v, want %v", steps, want)
	}
}

// A response replayed as a stream and collected again is the response.
func TestReplayCollect(t *testing.T) {
	resp := &Response{
		ID: "msg_1", Model: "m",
		Parts: []Part{
			{Kind: PartReasoning, Text: "think", Signature: "sig"},
			{Kind: PartText, Text: "hello"},
			{Kind: PartToolCall, CallID: "c1", Name: "read", Args: `{"b":2,"a":1}`},
		},
		Stop:  StopToolUse,
		Usage: Usage{Input: 10, Output: 5, CacheRead: 100},
	}
	c := NewCollect()
	var types []EventType
	Replay(resp, func(ev Event) { types = append(types, ev.Type); c.Add(ev) })
	got, complete := c.Response()
	if !complete {
		t.Fatal("replayed stream not complete")
	}
	want := *resp
	want.Parts = append([]Part(nil), resp.Parts...)
	want.Parts[2].Args = `{"a":1,"b":2}`
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("collected %+v\nwant %+v", *got, want)
	}
	wantTypes := []EventType{EvStart, EvBlockStart, EvDelta, EvBlockStop, EvBlockStart, EvDelta, EvBlockStop, EvBlockStart, EvDelta, EvBlockStop, EvFinish}
	if !reflect.DeepEqual(types, wantTypes) {
		t.Errorf("event types %v, want %v", types, wantTypes)
	}
}

func TestAppendSSE(t *testing.T) {
	got := string(AppendSSEJSON(AppendSSE(nil, "", []byte("[DONE]")), "ping", map[string]string{"type": "a<b"}))
	want := "data: [DONE]\n\nevent: ping\ndata: {\"type\":\"a<b\"}\n\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestUsage(t *testing.T) {
	u := Usage{Input: 3, CacheRead: 100, CacheWrite: 7, Output: 9}
	if u.PromptTotal() != 110 || u.IsZero() || !(Usage{}).IsZero() {
		t.Errorf("PromptTotal/IsZero wrong for %+v", u)
	}
	if !IsUnsupported(Unsupported("documents on %s", "x")) || IsUnsupported(nil) {
		t.Error("IsUnsupported")
	}
}

func TestOpenAIUser(t *testing.T) {
	short := &Request{User: "u-123"}
	long := &Request{User: `{"device_id":"8239e61bb4c51b5de35fa58d7587595ecf6f10936211c5543858d4fa53de494c"}`}
	if short.OpenAIUser() != "u-123" || long.OpenAIUser() != "" {
		t.Errorf("OpenAIUser: %q, %q", short.OpenAIUser(), long.OpenAIUser())
	}
}

// A Gemini signature sent at a block's stop (where Gemini streams it, on an
// empty part after the text) reaches the collected response, on every kind
// of block.
func TestCollectGeminiSignature(t *testing.T) {
	for _, kind := range []PartKind{PartText, PartReasoning, PartToolCall} {
		t.Run(kind.String(), func(t *testing.T) {
			c := NewCollect()
			c.Add(Event{Type: EvStart})
			c.Add(Event{Type: EvBlockStart, Part: Part{Kind: kind}})
			c.Add(Event{Type: EvDelta, Text: "{}"})
			c.Add(Event{Type: EvBlockStop, Part: Part{Kind: kind, GeminiSignature: "sig"}})
			c.Add(Event{Type: EvFinish, Stop: StopEnd})
			resp, _ := c.Response()
			if got := resp.Parts[0].GeminiSignature; got != "sig" {
				t.Errorf("GeminiSignature = %q, want %q", got, "sig")
			}
		})
	}
}
