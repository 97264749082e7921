package chat

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/internal/jsontest"
)

// outMessage writes itself as Marshal writes it, or leaves it to Marshal.
func TestOutMessageAppendJSON(t *testing.T) {
	tc := outToolCall{ID: "call_1", Type: "function"}
	tc.Function.Name, tc.Function.Arguments = "Read", `{"path":"a"}`
	for _, m := range []outMessage{
		{Role: "user", Content: "hello <b> & \"you\"\n\t\u2028 \xff"},
		{Role: "system", Content: ""},
		{Role: "assistant"},
		{Role: "assistant", Content: "answer", ReasoningContent: "thought"},
		{Role: "tool", Content: "result", ToolCallID: "call_1"},
		{Role: "assistant", Content: nil, ToolCalls: []outToolCall{tc}},
		{Role: "user", Content: []outPart{{Type: "text", Text: "x"}}},
	} {
		want := jsontest.Reflected(m) // conv.Marshal asks AppendJSON itself
		got, ok := m.AppendJSON(nil)
		if !ok {
			if len(m.ToolCalls) == 0 && (m.Content == nil || isString(m.Content)) {
				t.Errorf("%+v: AppendJSON declined a message of text", m)
			}
			continue
		}
		if string(got) != want {
			t.Errorf("AppendJSON = %s\nMarshal gives %s", got, want)
		}
	}
}

func isString(v any) bool { _, ok := v.(string); return ok }
