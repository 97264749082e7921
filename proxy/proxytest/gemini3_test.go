package proxytest_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// toolTurn asks for two parallel calls; Gemini 3 signs only the first.
func toolTurn() proxytest.GeminiReply {
	return proxytest.GeminiReply{Parts: []proxytest.GeminiPart{
		{Text: "Looking.", Thought: true},
		{Call: &proxytest.GeminiCall{Name: "read_file", Args: map[string]any{"file_path": "a.txt"}}},
		{Call: &proxytest.GeminiCall{Name: "read_file", Args: map[string]any{"file_path": "b.txt"}}},
	}}
}

// followUp is the request after toolTurn: the user's text, the model's
// calls with the signatures given (sigA on the first, sigB on the second),
// the function responses, and optionally a later user text and a new turn.
func followUp(sigA, sigB string, laterTurn bool) string {
	part := func(file, sig string) map[string]any {
		p := map[string]any{"functionCall": map[string]any{"name": "read_file", "args": map[string]any{"file_path": file}}}
		if sig != "" {
			p["thoughtSignature"] = sig
		}
		return p
	}
	contents := []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "read both files"}}},
		map[string]any{"role": "model", "parts": []any{part("a.txt", sigA), part("b.txt", sigB)}},
		map[string]any{"role": "user", "parts": []any{
			map[string]any{"functionResponse": map[string]any{"name": "read_file", "response": map[string]any{"output": "A"}}},
			map[string]any{"functionResponse": map[string]any{"name": "read_file", "response": map[string]any{"output": "B"}}},
		}},
	}
	if laterTurn {
		contents = append(contents,
			map[string]any{"role": "model", "parts": []any{map[string]any{"text": "Both read."}}},
			map[string]any{"role": "user", "parts": []any{map[string]any{"text": "thanks"}}})
	}
	return js(map[string]any{"contents": contents})
}

// TestGemini3Signatures: in Gemini-3 mode the first functionCall of an
// answer is signed, and a later request of the same turn is refused with
// Gemini 3's wording when that call comes back without its signature or
// with another one; older turns and the dummy signature pass.
func TestGemini3Signatures(t *testing.T) {
	const path = "/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
	g := proxytest.NewGemini(t, geminiKey)
	g.SetGemini3(true)
	g.Push(toolTurn())
	first := sseChunks(t, geminiDo(t, g, http.MethodPost, path, nil, `{"contents":[{"role":"user","parts":[{"text":"read both files"}]}]}`).body)
	var sigs []string
	for _, c := range first {
		for _, p := range c.Candidates[0].Content.Parts {
			if _, ok := p["functionCall"]; ok {
				s, _ := p["thoughtSignature"].(string)
				sigs = append(sigs, s)
			}
		}
	}
	if len(sigs) != 2 || sigs[0] == "" || sigs[1] != "" {
		t.Fatalf("signatures %q: want the first of the two calls signed, only", sigs)
	}
	sig := sigs[0]

	for _, tc := range []struct {
		name, body  string
		wantStatus  int
		wantMessage string
	}{
		{"as given", followUp(sig, "", false), 200, ""},
		{"missing", followUp("", "", false), 400, "Function call is missing a thought_signature in functionCall parts. " +
			"This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. " +
			"Additional data, function call `default_api:read_file` , position 2. " +
			"Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."},
		{"made up", followUp("bm90LWEtc2lnbmF0dXJl", "", false), 400, "Corrupted thought signature."},
		{"on the wrong call", followUp("", sig, false), 400, "Function call is missing a thought_signature"},
		{"dummy", followUp("skip_thought_signature_validator", "", false), 200, ""},
		{"an older turn", followUp("", "", true), 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := geminiDo(t, g, http.MethodPost, path, nil, tc.body)
			if a.status != tc.wantStatus {
				t.Fatalf("status %d %s, want %d", a.status, a.body, tc.wantStatus)
			}
			if tc.wantMessage == "" {
				return
			}
			e := decodeGeminiErr(t, a)
			if e.Error.Status != "INVALID_ARGUMENT" || !strings.HasPrefix(e.Error.Message, tc.wantMessage) {
				t.Errorf("got %s %q, want INVALID_ARGUMENT %q", e.Error.Status, e.Error.Message, tc.wantMessage)
			}
		})
	}

	t.Run("text answer", func(t *testing.T) {
		g.Push(proxytest.GeminiText("Hello."))
		chunks := sseChunks(t, geminiDo(t, g, http.MethodPost, path, nil, helloBody).body)
		last := chunks[len(chunks)-1].Candidates[0]
		if len(chunks) != 2 || last.FinishReason != "STOP" || last.Content.Parts[0]["text"] != "" || last.Content.Parts[0]["thoughtSignature"] == nil {
			t.Errorf("chunks %+v: want the text, then an empty text part with the signature and STOP", chunks)
		}
		if got := textOf(chunks); got != "Hello." {
			t.Errorf("text %q, want %q", got, "Hello.")
		}
	})

	t.Run("off", func(t *testing.T) {
		g := proxytest.NewGemini(t, geminiKey)
		g.Push(toolTurn())
		body := geminiDo(t, g, http.MethodPost, path, nil, helloBody).body
		if strings.Contains(string(body), "thoughtSignature") {
			t.Errorf("signed without Gemini-3 mode: %s", body)
		}
		if a := geminiDo(t, g, http.MethodPost, path, nil, followUp("", "", false)); a.status != http.StatusOK {
			t.Errorf("refused without Gemini-3 mode: %d %s", a.status, a.body)
		}
	})
}

// capturedRequest is one file of proxy/translate/testdata/captured/gemini-cli.
type capturedRequest struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Query   string            `json:"query"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

// TestGeminiServesCapturedGeminiCLI: every request Gemini CLI was recorded
// sending (e2e/clients/capture-gemini.js) is served by the fake with the
// models it names, in the stream form it asked for — and the follow-up of
// the tool round trip carries the signature back, which Gemini-3 mode
// accepts once it has given it.
func TestGeminiServesCapturedGeminiCLI(t *testing.T) {
	dir := filepath.Join("..", "translate", "testdata", "captured", "gemini-cli")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) < 8 {
		t.Fatalf("captured Gemini CLI requests in %s: %d files (%v), want the four sessions", dir, len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			var c capturedRequest
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if c.Headers["x-goog-api-key"] != "<key removed>" || !strings.HasPrefix(c.Headers["user-agent"], "GeminiCLI") {
				t.Errorf("headers %v: want the key removed and Gemini CLI's user-agent", c.Headers)
			}
			g := proxytest.NewGemini(t, geminiKey)
			g.SetModels(modelOf(c.Path))
			path := c.Path
			if c.Query != "" {
				path += "?" + c.Query
			}
			a := geminiDo(t, g, c.Method, path, nil, string(c.Body))
			if a.status != http.StatusOK {
				t.Fatalf("%s %s: status %d %s", c.Method, path, a.status, a.body)
			}
			if c.Query == "alt=sse" {
				if chunks := sseChunks(t, a.body); len(chunks) == 0 {
					t.Errorf("no chunks")
				}
			} else if !json.Valid(a.body) {
				t.Errorf("answer is not JSON: %s", a.body)
			}
		})
	}
}

func modelOf(path string) string {
	m := strings.TrimPrefix(path, "/v1beta/models/")
	if i := strings.IndexByte(m, ':'); i >= 0 {
		m = m[:i]
	}
	return m
}

// TestGemini3AcceptsGeminiCLIRoundTrip: Gemini CLI returns the signature it
// got on the call it got, so a Gemini 3 that signed that call accepts the
// captured follow-up, and refuses it with the signature stripped.
func TestGemini3AcceptsGeminiCLIRoundTrip(t *testing.T) {
	dir := filepath.Join("..", "translate", "testdata", "captured", "gemini-cli")
	var turn, follow capturedRequest
	for file, into := range map[string]*capturedRequest{"tool-02.json": &turn, "tool-03.json": &follow} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("decode %s: %v", file, err)
		}
	}
	var body struct {
		Contents []struct {
			Role  string           `json:"role"`
			Parts []map[string]any `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(follow.Body, &body); err != nil {
		t.Fatalf("decode follow-up body: %v", err)
	}
	var call map[string]any
	var sig string
	for _, c := range body.Contents {
		for _, p := range c.Parts {
			if fc, ok := p["functionCall"].(map[string]any); ok && c.Role == "model" {
				call, sig = fc, p["thoughtSignature"].(string)
			}
		}
	}
	if call == nil || sig == "" {
		t.Fatalf("the captured follow-up has no signed model functionCall")
	}
	args, _ := call["args"].(map[string]any)
	for _, tc := range []struct {
		name       string
		strip      bool
		wantStatus int
	}{
		{"as Gemini CLI sent it", false, 200},
		{"signature stripped", true, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := proxytest.NewGemini(t, geminiKey)
			g.SetModels(modelOf(turn.Path))
			g.SetGemini3(true)
			g.Push(proxytest.GeminiReply{Parts: []proxytest.GeminiPart{{Call: &proxytest.GeminiCall{Name: call["name"].(string), Args: args}}}})
			first := sseChunks(t, geminiDo(t, g, http.MethodPost, turn.Path+"?alt=sse", nil, string(turn.Body)).body)
			given, _ := first[0].Candidates[0].Content.Parts[0]["thoughtSignature"].(string)
			if given == "" {
				t.Fatalf("the fake gave no signature")
			}
			// The capture holds the signature capture-gemini.js gave; put
			// this fake's own in its place (or none).
			repl := given
			if tc.strip {
				repl = ""
			}
			followBody := strings.Replace(string(follow.Body), `"thoughtSignature": "`+sig+`"`, `"thoughtSignature": "`+repl+`"`, 1)
			if followBody == string(follow.Body) {
				t.Fatalf("the captured signature was not found to replace")
			}
			a := geminiDo(t, g, http.MethodPost, follow.Path+"?alt=sse", nil, followBody)
			if a.status != tc.wantStatus {
				t.Errorf("status %d %s, want %d", a.status, a.body, tc.wantStatus)
			}
		})
	}
}
