package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/internal/jsontest"
)

func TestOutMessageAppendJSON(t *testing.T) {
	odd := "hello <b> & \"you\"\n\t\u2028 \xff é"
	blocks := []outBlock{
		{Type: "text", Text: ptr(odd)},
		{Type: "text", Text: ptr("")},
		{Type: "thinking", Thinking: ptr("thought"), Signature: ptr("sig")},
		{Type: "thinking", Thinking: ptr(""), Signature: ptr("")},
		{Type: "redacted_thinking", Data: "opaque=="},
		{Type: "tool_use", ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{"path": "a<b>",  "n":[1, 2]}`)},
		{Type: "tool_use", ID: "toolu_2", Name: "Bash", Input: json.RawMessage(`{}`)},
	}
	messages := []outMessage{
		{ID: "msg_1", Type: "message", Role: "assistant", Model: "claude-sonnet-4-5", Content: []outBlock{}},
		{ID: odd, Type: "message", Role: "assistant", Model: odd, Content: blocks, StopReason: ptr("tool_use"),
			StopSequence: ptr("END"), Usage: outUsage{Input: 1200, CacheWrite: 3, CacheRead: -1, Output: 1 << 40}},
		{Type: "message", Content: nil, StopReason: ptr("")},
	}
	for _, m := range messages {
		got, ok := m.AppendJSON([]byte("prefix"))
		if !ok {
			t.Errorf("%+v: AppendJSON declined an answer", m)
			continue
		}
		if want := "prefix" + jsontest.Reflected(m); string(got) != want {
			t.Errorf("AppendJSON = %s\nencoding/json gives %s", got, want)
		}
	}
	// What only a request carries, and input that is not JSON (encoding/json
	// fails the whole message): declined, the destination as it was.
	for _, b := range []outBlock{
		{Type: "image", Source: &outSource{Type: "base64", MediaType: "image/png", Data: "AA=="}},
		{Type: "tool_result", ToolUseID: "toolu_1", Content: []outBlock{{Type: "text", Text: ptr("x")}}},
		{Type: "text", Text: ptr("x"), CacheControl: json.RawMessage(`{"type":"ephemeral"}`)},
		{Type: "tool_use", ID: "toolu_3", Name: "X", Input: json.RawMessage(`{"a":`)},
	} {
		m := outMessage{Content: []outBlock{{Type: "text", Text: ptr("first")}, b}}
		if got, ok := m.AppendJSON([]byte("prefix")); ok || string(got) != "prefix" {
			t.Errorf("%+v: AppendJSON = %q, %v; want it declined with the destination untouched", b, got, ok)
		}
	}
}

func FuzzOutMessageAppendJSON(f *testing.F) {
	f.Add("msg_1", "claude-sonnet-4-5", "Hello <there> \u2028", "thought", "sig", `{"path":"a"}`, "end_turn", true)
	f.Add("", "", "", "", "", ``, "", false)
	f.Add("\xff\x00", "m\"", "\\", "\t", "\n", `[1, 2 ,3]`, "x", true)
	f.Fuzz(func(t *testing.T, id, model, text, thinking, sig, input, stop string, stopSet bool) {
		m := outMessage{ID: id, Type: "message", Role: "assistant", Model: model, Content: []outBlock{
			{Type: "text", Text: ptr(text)},
			{Type: "thinking", Thinking: ptr(thinking), Signature: ptr(sig)},
			{Type: "tool_use", ID: id, Name: model, Input: json.RawMessage(input)},
		}, Usage: outUsage{Input: int64(len(text)), Output: -int64(len(input))}}
		if stopSet {
			m.StopReason, m.StopSequence = ptr(stop), ptr(text)
		}
		want := jsontest.Reflected(m)
		got, ok := m.AppendJSON(nil)
		if !ok {
			if want != "null" && len(input) > 0 {
				t.Fatalf("declined, but encoding/json writes %s", want)
			}
			return
		}
		if string(got) != want {
			t.Fatalf("AppendJSON = %s\nencoding/json gives %s", got, want)
		}
	})
}
