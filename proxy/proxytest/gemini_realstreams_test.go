package proxytest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

const geminiRecordings = "../testdata/realstreams/gemini"

// recordingLines are a reduction's chunks: its lines but the # comments.
func recordingLines(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

// responseShape checks one chunk or answer is a GenerateContentResponse:
// a JSON object with candidates, promptFeedback or usageMetadata, and
// nothing of another protocol.
func responseShape(t *testing.T, what string, b []byte) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s is not a JSON object: %v", what, err)
	}
	_, cands := m["candidates"]
	_, feedback := m["promptFeedback"]
	_, usage := m["usageMetadata"]
	if !cands && !feedback && !usage {
		t.Errorf("%s has none of candidates, promptFeedback, usageMetadata: %s", what, b)
	}
	for _, foreign := range []string{"type", "choices", "object", "error"} {
		if _, ok := m[foreign]; ok {
			t.Errorf("%s has %q, not a Gemini field", what, foreign)
		}
	}
}

// geminiWant is the wantFile shape of proxy/testdata/realstreams/README.md.
type geminiWant struct {
	Text      string `json:"text"`
	Reasoning string `json:"reasoning"`
	Calls     []struct {
		Name string `json:"name"`
		Args any    `json:"args"`
	} `json:"calls"`
	Stop  string `json:"stop"`
	Usage struct {
		Input      int64 `json:"input"`
		Output     int64 `json:"output"`
		CacheRead  int64 `json:"cache_read"`
		CacheWrite int64 `json:"cache_write"`
		Reasoning  int64 `json:"reasoning"`
	} `json:"usage"`
	Error bool `json:"error"`
}

// TestGeminiRecordings: every reduction of a recorded Gemini stream parses
// chunk by chunk, goes through the fake (Raw) in both stream forms and
// reads back the same chunks, and has a want.json of the corpus's shape;
// every recorded answer and error has Gemini's shape; SOURCES.md names
// every file.
func TestGeminiRecordings(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(geminiRecordings, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s (%v)", geminiRecordings, err)
	}
	sources, err := os.ReadFile(filepath.Join(geminiRecordings, "SOURCES.md"))
	if err != nil {
		t.Fatalf("read SOURCES.md: %v", err)
	}
	kinds := map[string]int{}
	for _, f := range files {
		name := filepath.Base(f)
		if name == "SOURCES.md" {
			continue
		}
		if !bytes.Contains(sources, []byte("`"+strings.SplitN(name, ".", 2)[0])) {
			t.Errorf("SOURCES.md does not name %s", name)
		}
		t.Run(name, func(t *testing.T) {
			switch {
			case strings.HasSuffix(name, ".chunks.txt"):
				kinds["stream"]++
				checkGeminiStream(t, f)
			case strings.HasSuffix(name, ".want.json"):
				checkGeminiWant(t, f)
			case strings.HasSuffix(name, ".answer.json"):
				kinds["answer"]++
				b, _ := os.ReadFile(f)
				if strings.HasPrefix(name, "count-tokens") {
					var c struct {
						TotalTokens *int `json:"totalTokens"`
					}
					if err := json.Unmarshal(b, &c); err != nil || c.TotalTokens == nil {
						t.Errorf("countTokens answer without totalTokens: %s (%v)", b, err)
					}
					return
				}
				responseShape(t, name, b)
			case strings.HasSuffix(name, ".error.json"):
				kinds["error"]++
				b, _ := os.ReadFile(f)
				var e geminiErr
				if err := json.Unmarshal(b, &e); err != nil || e.Error.Code < 400 || e.Error.Status == "" || e.Error.Message == "" {
					t.Errorf("not a Gemini error: %s (%v)", b, err)
				}
			default:
				t.Errorf("%s is none of .chunks.txt, .want.json, .answer.json, .error.json", name)
			}
		})
	}
	if kinds["stream"] < 4 || kinds["answer"] < 1 || kinds["error"] < 1 {
		t.Errorf("recordings %v: want streams, answers and errors", kinds)
	}
}

func checkGeminiStream(t *testing.T, file string) {
	lines := recordingLines(t, file)
	if len(lines) == 0 {
		t.Fatalf("no chunks")
	}
	for i, l := range lines {
		responseShape(t, "chunk "+strconv.Itoa(i+1), []byte(l))
	}
	if _, err := os.Stat(strings.TrimSuffix(file, ".chunks.txt") + ".want.json"); err != nil {
		t.Errorf("no want.json: %v", err)
	}
	g := proxytest.NewGemini(t, geminiKey)
	g.SetDefault(proxytest.GeminiReply{Raw: lines})
	const path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
	sse := geminiDo(t, g, http.MethodPost, path+"?alt=sse", nil, helloBody)
	frames := strings.Split(string(sse.body), "\r\n\r\n")
	if len(frames) != len(lines)+1 || frames[len(frames)-1] != "" {
		t.Fatalf("alt=sse: %d frames for %d chunks: %q", len(frames)-1, len(lines), sse.body)
	}
	for i, l := range lines {
		if frames[i] != "data: "+l {
			t.Errorf("alt=sse frame %d is %q, want data: and the chunk", i+1, frames[i])
		}
	}
	var arr []json.RawMessage
	a := geminiDo(t, g, http.MethodPost, path, nil, helloBody)
	if err := json.Unmarshal(a.body, &arr); err != nil || len(arr) != len(lines) {
		t.Fatalf("JSON-array form: %d elements (%v), want %d", len(arr), err, len(lines))
	}
	for i, l := range lines {
		var got, want any
		_ = json.Unmarshal(arr[i], &got)
		_ = json.Unmarshal([]byte(l), &want)
		if js(got) != js(want) {
			t.Errorf("JSON-array element %d differs from the chunk", i+1)
		}
	}
}

func checkGeminiWant(t *testing.T, file string) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var w geminiWant
	if err := dec.Decode(&w); err != nil {
		t.Fatalf("want.json is not of the corpus's shape: %v", err)
	}
	if w.Text == "" && w.Reasoning == "" && len(w.Calls) == 0 && w.Stop == "" && !w.Error && w.Usage.Input == 0 {
		t.Errorf("want.json says nothing: %s", b)
	}
	if w.Usage.Reasoning > w.Usage.Output {
		t.Errorf("usage %+v: output includes reasoning, so it cannot be less", w.Usage)
	}
}
