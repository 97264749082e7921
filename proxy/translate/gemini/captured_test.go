package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// captured is one request Gemini CLI sent
// (proxy/translate/testdata/captured/gemini-cli/README.md).
type captured struct {
	Path  string          `json:"path"`
	Query string          `json:"query"`
	Body  json.RawMessage `json:"body"`
}

func readCaptured(t *testing.T) map[string]captured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "captured", "gemini-cli", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured Gemini CLI requests: %v", err)
	}
	out := map[string]captured{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c captured
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = c
	}
	return out
}

// normalize is a Gemini body as this codec writes it back: the
// systemInstruction without its role (the API reads none there) and the
// thinkingLevel in lower case (the API takes either; the neutral effort is
// lower case).
func normalize(t *testing.T, body []byte) any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	if si, ok := v["systemInstruction"].(map[string]any); ok {
		delete(si, "role")
	}
	if gc, ok := v["generationConfig"].(map[string]any); ok {
		if tc, ok := gc["thinkingConfig"].(map[string]any); ok {
			if l, ok := tc["thinkingLevel"].(string); ok {
				tc["thinkingLevel"] = strings.ToLower(l)
			}
		}
	}
	return v
}

// Every captured generateContent request reads, with its model and stream
// flag from the path; written back for Gemini it is what the CLI sent; and
// every other codec can carry it and read what it wrote.
func TestCapturedGeminiCLI(t *testing.T) {
	for name, c := range readCaptured(t) {
		t.Run(name, func(t *testing.T) {
			model, stream, sse, ok := ParsePath(c.Path, c.Query)
			if strings.HasSuffix(c.Path, ":countTokens") {
				if ok {
					t.Errorf("ParsePath took countTokens for generateContent")
				}
				return
			}
			if !ok || model == "" || sse != stream {
				t.Fatalf("ParsePath(%s, %s) = %q, %v, %v, %v", c.Path, c.Query, model, stream, sse, ok)
			}
			r, err := Codec.DecodeRequest(c.Body)
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			r.Model, r.Stream = model, stream
			back, err := Codec.EncodeRequest(r)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := normalize(t, back), normalize(t, c.Body); !reflect.DeepEqual(g, w) {
				t.Errorf("written back differs\n got: %s\nwant: %s", conv.Marshal(g), conv.Marshal(w))
			}
			for _, other := range others {
				b, err := other.EncodeRequest(r)
				if err != nil {
					t.Fatalf("%s encode: %v", other.Protocol(), err)
				}
				if _, err := other.DecodeRequest(b); err != nil {
					t.Errorf("%s reads back: %v", other.Protocol(), err)
				}
			}
		})
	}
}

// The follow-up of the tool round trip: the call with the id the CLI made
// up and its signature, the result paired with it by that id.
func TestCapturedToolFollowUp(t *testing.T) {
	c := readCaptured(t)["tool-03.json"]
	r, err := Codec.DecodeRequest(c.Body)
	if err != nil {
		t.Fatal(err)
	}
	var call, result conv.Part
	for _, m := range r.Messages {
		for _, p := range m.Parts {
			switch p.Kind {
			case conv.PartToolCall:
				call = p
			case conv.PartToolResult:
				result = p
			}
		}
	}
	want := conv.Part{Kind: conv.PartToolCall, CallID: "read_file_1700000000000_0", Name: "read_file",
		Args: `{"file_path":"/tmp/ccmesh-capture/tool/note.txt"}`, GeminiSignature: "Y2NtZXNoLWZha2UtdGhvdWdodC1zaWduYXR1cmUtMQ=="}
	if !reflect.DeepEqual(call, want) {
		t.Errorf("call = %+v\nwant %+v", call, want)
	}
	if result.CallID != call.CallID || len(result.Content) != 1 || result.Content[0].Text != "the secret word is marmalade\n" {
		t.Errorf("result = %+v", result)
	}
	if r.Reasoning.Effort != "high" || r.Reasoning.Summary != "auto" {
		t.Errorf("reasoning = %+v", r.Reasoning)
	}
}

func TestDecodeCountTokens(t *testing.T) {
	c := readCaptured(t)["image-01.json"]
	tests := []struct {
		name, body string
		parts      int
	}{
		{"Gemini CLI's", string(c.Body), 4},
		{"a whole request inside", `{"generateContentRequest":{"model":"models/gemini-2.5-pro","contents":[{"parts":[{"text":"hi"}]}],"systemInstruction":{"parts":[{"text":"s"}]}}}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeCountTokens([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Messages) != 1 || len(r.Messages[0].Parts) != tt.parts {
				t.Errorf("messages %+v, want one of %d parts", r.Messages, tt.parts)
			}
		})
	}
	if _, err := DecodeCountTokens([]byte(`{"contents":7}`)); err == nil {
		t.Error("a bad body read")
	}
	jsonEqual(t, CountTokensBody(12), `{"totalTokens":12}`)
}
