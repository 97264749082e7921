package gemini

import (
	"encoding/json"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/internal/jsontest"
)

func TestOutResponseAppendJSON(t *testing.T) {
	odd := "hello <b> & \"you\"\n\t\u2028 \xff é"
	parts := []wirePart{
		{Text: ptr(odd)},
		{Text: ptr("")},
		{Text: ptr("thought"), Thought: true, ThoughtSignature: "sig=="},
		{ThoughtSignature: "only"},
		{},
		{FunctionCall: &wireCall{ID: "call_1", Name: "Read", Args: json.RawMessage(`{"path": "a<b>",  "n":[1, 2]}`)}},
		{FunctionCall: &wireCall{Name: odd}, ThoughtSignature: "s"},
	}
	answers := []outResponse{
		{Candidates: []outCandidate{{Content: wireContent{Role: "model", Parts: []wirePart{}}}}},
		{Candidates: []outCandidate{{Content: wireContent{Role: "model", Parts: parts}, FinishReason: "STOP", Index: 2}, {}},
			UsageMetadata: &outUsage{Prompt: 1200, Candidates: 9, Cached: 3, Thoughts: -1, Total: 1 << 40},
			ModelVersion:  odd, ResponseID: odd},
		{UsageMetadata: &outUsage{}},
		{},
	}
	for _, r := range answers {
		got, ok := r.AppendJSON([]byte("prefix"))
		if !ok {
			t.Errorf("%+v: AppendJSON declined an answer", r)
			continue
		}
		if want := "prefix" + jsontest.Reflected(r); string(got) != want {
			t.Errorf("AppendJSON = %s\nencoding/json gives %s", got, want)
		}
	}
	// What only a request carries, and arguments that are not JSON
	// (encoding/json fails the whole answer): declined, the destination as it was.
	for _, p := range []wirePart{
		{InlineData: &wireBlob{MimeType: "image/png", Data: "AA=="}},
		{FileData: &wireFile{FileURI: "gs://x"}},
		{FunctionResponse: &wireResult{Name: "Read", Response: json.RawMessage(`{}`)}},
		{FunctionCall: &wireCall{Name: "X", Args: json.RawMessage(`{"a":`)}},
	} {
		r := outResponse{Candidates: []outCandidate{{Content: wireContent{Parts: []wirePart{{Text: ptr("first")}, p}}}}}
		if got, ok := r.AppendJSON([]byte("prefix")); ok || string(got) != "prefix" {
			t.Errorf("%+v: AppendJSON = %q, %v; want it declined with the destination untouched", p, got, ok)
		}
	}
}

func FuzzOutResponseAppendJSON(f *testing.F) {
	f.Add("gemini-2.5-pro", "Hello <there> \u2028", "sig", `{"path":"a"}`, "STOP", int64(7), true)
	f.Add("", "", "", ``, "", int64(0), false)
	f.Add("\xff\x00", "\\", "\t", `[1, 2 ,3]`, "x", int64(-1), true)
	f.Fuzz(func(t *testing.T, model, text, sig, args, finish string, n int64, thought bool) {
		r := outResponse{
			Candidates: []outCandidate{{Content: wireContent{Role: model, Parts: []wirePart{
				{Text: ptr(text), Thought: thought, ThoughtSignature: sig},
				{FunctionCall: &wireCall{ID: sig, Name: model, Args: json.RawMessage(args)}},
			}}, FinishReason: finish, Index: int(n)}},
			UsageMetadata: &outUsage{Prompt: n, Candidates: -n, Cached: int64(len(text)), Thoughts: n & 1, Total: n * 2},
			ModelVersion:  model, ResponseID: sig,
		}
		want := jsontest.Reflected(r)
		got, ok := r.AppendJSON(nil)
		if !ok {
			if want != "null" && len(args) > 0 {
				t.Fatalf("declined, but encoding/json writes %s", want)
			}
			return
		}
		if string(got) != want {
			t.Fatalf("AppendJSON = %s\nencoding/json gives %s", got, want)
		}
	})
}
