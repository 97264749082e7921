package responses

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/internal/jsontest"
)

func TestOutResponseAppendJSON(t *testing.T) {
	odd := "hello <b> & \"you\"\n\t\u2028 \xff é"
	items := []any{
		messageItem("msg_1", "completed", odd),
		messageItem("msg_2", "in_progress", ""),
		outMessage{ID: "msg_3", Type: "message", Content: []outText{{Type: "output_text", Text: "x"}}},
		outMessage{ID: "msg_4", Type: "message"},
		outReasoning{ID: "rs_1", Type: "reasoning", Summary: summaryOf(odd), EncryptedContent: "enc=="},
		outReasoning{ID: "rs_2", Type: "reasoning", Summary: []summaryText{}},
		outReasoning{ID: "rs_3", Type: "reasoning"},
		outFunctionCall{ID: "fc_1", Type: "function_call", Status: "completed", CallID: "call_1", Name: "Read", Arguments: `{"path":"a<b>"}`},
		outFunctionCall{ID: "fc_2", Type: "function_call", Status: "completed", CallID: "call_2", Name: "run", Namespace: "shell"},
		outCustomCall{ID: "ctc_1", Type: "custom_tool_call", Status: "completed", CallID: "call_3", Name: "apply_patch", Input: odd},
		outCustomCall{ID: "ctc_2", Type: "custom_tool_call", Name: odd, Namespace: odd},
	}
	full := responseHead(odd, odd, -1, "incomplete")
	full.IncompleteDetails = &incompleteDetails{Reason: "max_output_tokens"}
	full.Error = &outError{Code: "server_error", Message: odd}
	full.Output = items
	full.Usage = &outUsage{InputTokens: 1200, InputTokensDetails: cachedTokens{CachedTokens: 3},
		OutputTokens: 1 << 40, OutputTokensDetails: reasoningToks{ReasoningTokens: -1}, TotalTokens: 7}
	for _, r := range []outResponse{responseHead("resp_1", "gpt-5", 1764547200, "completed"), full, {}} {
		got, ok := r.AppendJSON([]byte("prefix"))
		if !ok {
			t.Errorf("%+v: AppendJSON declined an answer", r)
			continue
		}
		if want := "prefix" + jsontest.Reflected(r); string(got) != want {
			t.Errorf("AppendJSON = %s\nencoding/json gives %s", got, want)
		}
	}
	// An item or annotation it does not know: declined, the destination as it was.
	for _, item := range []any{
		outMessage{ID: "msg_1", Content: []outText{{Type: "output_text", Text: "x", Annotations: []any{map[string]string{"type": "url_citation"}}}}},
		&outFunctionCall{ID: "fc_1"},
		map[string]any{"type": "web_search_call"},
	} {
		r := responseHead("resp_1", "m", 1, "completed")
		r.Output = []any{messageItem("msg_0", "completed", "first"), item}
		if got, ok := r.AppendJSON([]byte("prefix")); ok || string(got) != "prefix" {
			t.Errorf("%#v: AppendJSON = %q, %v; want it declined with the destination untouched", item, got, ok)
		}
	}
}

func FuzzOutResponseAppendJSON(f *testing.F) {
	f.Add("resp_1", "gpt-5", "Hello <there> \u2028", "thought", `{"path":"a"}`, "ns", int64(1764547200), true)
	f.Add("", "", "", "", "", "", int64(0), false)
	f.Add("\xff\x00", "m\"", "\\", "\t", "\n", "\u2029", int64(-1), true)
	f.Fuzz(func(t *testing.T, id, model, text, thought, args, ns string, created int64, incomplete bool) {
		r := responseHead(id, model, created, "completed")
		if incomplete {
			r.Status, r.IncompleteDetails = "incomplete", &incompleteDetails{Reason: text}
		}
		r.Output = []any{
			messageItem(id, "completed", text),
			outReasoning{ID: id, Type: "reasoning", Summary: summaryOf(thought), EncryptedContent: thought},
			outFunctionCall{ID: id, Type: "function_call", Status: "completed", CallID: model, Name: text, Namespace: ns, Arguments: args},
			outCustomCall{ID: id, Type: "custom_tool_call", Status: "completed", CallID: model, Name: ns, Input: args},
		}
		r.Usage = &outUsage{InputTokens: int64(len(text)), OutputTokens: created, TotalTokens: -created}
		got, ok := r.AppendJSON(nil)
		if !ok {
			t.Fatal("declined an answer")
		}
		if want := jsontest.Reflected(r); string(got) != want {
			t.Fatalf("AppendJSON = %s\nencoding/json gives %s", got, want)
		}
	})
}
