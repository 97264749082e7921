package gemini

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// The fuzz targets hold this codec to what proxy/translate/fuzz_test.go
// holds the others to: nothing panics; a request it reads can be written
// by every codec (or is refused as Unsupported) as JSON that codec reads
// back; its stream decoder keeps the block discipline, and every client
// encoder, Gemini's two forms included, writes valid output from it.

var all = append([]conv.Codec{Codec}, others...)

func FuzzGeminiRequest(f *testing.F) {
	for _, s := range []string{
		cliTurn,
		`{"contents":[{"parts":[{"text":"hi"}]}]}`,
		`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f"}},{"text":"","thoughtSignature":"x"}]},{"role":"user","parts":[{"functionResponse":{"name":"g","response":null}}]}]}`,
		`{"contents":[{"role":"user","parts":[{"fileData":{"fileUri":"gs://b/o"}},{"inlineData":{"mimeType":"text/plain","data":"aGk="}}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["z"]}}}`,
		`{"contents":[{"role":"user","parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT","anyOf":[{"properties":{"a":{"type":"STRING"}}}]}}]},{"codeExecution":{}}]}`,
		`{"contents":[]}`, `null`, `{"contents":[{"role":"system"}]}`,
	} {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "captured", "gemini-cli", "*.json"))
	for _, name := range files {
		var c captured
		if b, err := os.ReadFile(name); err == nil && json.Unmarshal(b, &c) == nil {
			f.Add([]byte(c.Body))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Codec.DecodeRequest(body)
		if err != nil {
			return
		}
		for _, to := range all {
			out := *r
			out.Model, out.Stream = "m", true
			b, err := to.EncodeRequest(&out)
			if conv.IsUnsupported(err) {
				continue
			}
			if err != nil {
				t.Fatalf("gemini → %s: encode: %v\n%q", to.Protocol(), err, body)
			}
			if !json.Valid(b) {
				t.Fatalf("gemini → %s: not JSON: %q\nfrom %q", to.Protocol(), b, body)
			}
			if _, err := to.DecodeRequest(b); err != nil && !noConversation(b) {
				t.Fatalf("gemini → %s: its own codec refuses what it wrote: %v\n%s\nfrom %q", to.Protocol(), err, b, body)
			}
		}
	})
}

// noConversation: a body whose messages (or input) are empty — what is
// left when nothing of a conversation can be carried; the decoders refuse
// it from a client, as the upstream will.
func noConversation(b []byte) bool {
	var doc struct{ Messages, Input json.RawMessage }
	_ = json.Unmarshal(b, &doc)
	for _, raw := range []json.RawMessage{doc.Messages, doc.Input} {
		if s := string(bytes.TrimSpace(raw)); s != "" && s != "[]" && s != "null" {
			return false
		}
	}
	return true
}

// sseEvents cuts fuzz input into the data of SSE events.
func sseEvents(in []byte) [][]byte {
	var out [][]byte
	for _, block := range bytes.Split(in, []byte("\n\n")) {
		var data []byte
		for _, line := range bytes.Split(block, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
			}
		}
		out = append(out, data)
	}
	return out
}

func FuzzGeminiStream(f *testing.F) {
	sse := func(chunks ...string) string {
		var b []byte
		for _, c := range chunks {
			b = conv.AppendSSE(b, "", []byte(c))
		}
		return string(b)
	}
	f.Add([]byte(sse(
		chunk(`{"text":"a","thought":true}`, "", `{"promptTokenCount":3}`),
		chunk(`{"text":"b"},{"text":"","thoughtSignature":"E"}`, "", ""),
		chunk(`{"functionCall":{"name":"f","args":{"x":1}},"thoughtSignature":"S"},{"functionCall":{"id":"c","name":"f"}}`, "STOP", `{"promptTokenCount":3,"candidatesTokenCount":4}`))))
	f.Add([]byte(sse(chunk(`{"text":"cut"}`, "MAX_TOKENS", ""), chunk(`{"text":"after"}`, "", ""))))
	f.Add([]byte(sse(`{"error":{"code":429,"message":"slow","status":"RESOURCE_EXHAUSTED"}}`)))
	f.Add([]byte(sse(`{"promptFeedback":{"blockReason":"SAFETY"}}`, `{"candidates":[{"content":null}]}`, `[DONE]`)))
	req := &conv.Request{Model: "m", Tools: []conv.Tool{{Name: "f", Schema: conv.EmptySchema}}}
	f.Fuzz(func(t *testing.T, in []byte) {
		dec := Codec.StreamDecoder()
		d := newDiscipline()
		encs := []conv.StreamEncoder{ArrayStreamEncoder(req)}
		for _, c := range all {
			encs = append(encs, c.StreamEncoder(req))
		}
		outs := make([][]byte, len(encs))
		bad := ""
		emit := func(ev conv.Event) {
			if msg := d.check(ev); msg != "" && bad == "" {
				bad = msg
			}
			for i, enc := range encs {
				outs[i] = enc.Encode(outs[i], ev)
			}
		}
		broken := false
		for _, data := range sseEvents(in) {
			if err := dec.Decode("", data, emit); err != nil {
				broken = true
				break
			}
		}
		if !broken {
			dec.End(emit)
		}
		if bad != "" {
			t.Fatalf("gemini stream decoder: %s\n%q", bad, in)
		}
		for i, enc := range encs {
			if broken || !d.finished {
				outs[i] = enc.Fail(outs[i], "ccmesh: broken; retry the request")
			}
			if i == 0 {
				if len(outs[0]) > 0 && !json.Valid(outs[0]) {
					t.Fatalf("array stream is not one JSON array: %q\nfrom %q", outs[0], in)
				}
				continue
			}
			for _, data := range sseEvents(bytes.TrimSuffix(outs[i], []byte("\n\n"))) {
				if len(data) > 0 && string(data) != "[DONE]" && !json.Valid(data) {
					t.Fatalf("encoder %d: data is not JSON: %q\nfrom %q", i, data, in)
				}
			}
		}
	})
}
