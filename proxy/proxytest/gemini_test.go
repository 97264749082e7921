package proxytest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

const geminiKey = "gemini-test-key"

type geminiAnswer struct {
	status int
	header http.Header
	body   []byte
}

func geminiDo(t *testing.T, g *proxytest.Gemini, method, path string, header http.Header, body string) geminiAnswer {
	t.Helper()
	req, err := http.NewRequest(method, g.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if header == nil {
		header = http.Header{"X-Goog-Api-Key": {geminiKey}}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s %s: %v", method, path, err)
	}
	return geminiAnswer{resp.StatusCode, resp.Header, b}
}

// geminiErr is the error shape every fault must have.
type geminiErr struct {
	Error struct {
		Code    int              `json:"code"`
		Status  string           `json:"status"`
		Message string           `json:"message"`
		Details []map[string]any `json:"details"`
	} `json:"error"`
}

func decodeGeminiErr(t *testing.T, a geminiAnswer) geminiErr {
	t.Helper()
	var e geminiErr
	if err := json.Unmarshal(a.body, &e); err != nil {
		t.Fatalf("error body %s is not JSON: %v", a.body, err)
	}
	if e.Error.Code != a.status || e.Error.Status == "" || e.Error.Message == "" || e.Error.Details == nil {
		t.Fatalf("error body %s: want code %d with status, message and details", a.body, a.status)
	}
	return e
}

type geminiChunk struct {
	Candidates []struct {
		Content struct {
			Role  string           `json:"role"`
			Parts []map[string]any `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata struct {
		PromptTokenCount     int `json:"promptTokenCount"`
		CandidatesTokenCount int `json:"candidatesTokenCount"`
		ThoughtsTokenCount   int `json:"thoughtsTokenCount"`
		TotalTokenCount      int `json:"totalTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string `json:"modelVersion"`
	ResponseID   string `json:"responseId"`
}

// sseChunks splits an alt=sse body on its CRLF CRLF frames, each one data line.
func sseChunks(t *testing.T, body []byte) []geminiChunk {
	t.Helper()
	var out []geminiChunk
	frames := strings.Split(string(body), "\r\n\r\n")
	if frames[len(frames)-1] != "" {
		t.Fatalf("the stream does not end with CRLF CRLF: %q", body)
	}
	for _, f := range frames[:len(frames)-1] {
		data, ok := strings.CutPrefix(f, "data: ")
		if !ok || strings.Contains(data, "\n") {
			t.Fatalf("frame %q: want one data line", f)
		}
		var c geminiChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("frame %q: %v", f, err)
		}
		out = append(out, c)
	}
	return out
}

func textOf(chunks []geminiChunk) string {
	var b strings.Builder
	for _, c := range chunks {
		for _, p := range c.Candidates[0].Content.Parts {
			if s, ok := p["text"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

const helloBody = `{"contents":[{"role":"user","parts":[{"text":"say hello to the fake"}]}]}`

// TestGeminiGenerate: the three answer forms carry the same parts, the
// model in modelVersion, usage, and STOP on the last chunk only.
func TestGeminiGenerate(t *testing.T) {
	g := proxytest.NewGemini(t, geminiKey)
	g.SetDefault(proxytest.GeminiReply{Parts: []proxytest.GeminiPart{
		{Text: "thinking about it", Thought: true}, {Text: "Hello "}, {Text: "there."},
	}})
	for _, tc := range []struct {
		name, path string
		decode     func(*testing.T, []byte) []geminiChunk
		wantType   string
	}{
		{"generateContent", "/v1beta/models/gemini-2.5-flash:generateContent", func(t *testing.T, b []byte) []geminiChunk {
			var c geminiChunk
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatalf("answer %s: %v", b, err)
			}
			return []geminiChunk{c}
		}, "application/json"},
		{"sse", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", sseChunks, "text/event-stream"},
		{"json array", "/v1beta/models/gemini-2.5-flash:streamGenerateContent", func(t *testing.T, b []byte) []geminiChunk {
			var cs []geminiChunk
			if err := json.Unmarshal(b, &cs); err != nil {
				t.Fatalf("answer %s is not a JSON array: %v", b, err)
			}
			return cs
		}, "application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := geminiDo(t, g, http.MethodPost, tc.path, nil, helloBody)
			if a.status != http.StatusOK {
				t.Fatalf("status %d %s", a.status, a.body)
			}
			if got := a.header.Get("Content-Type"); !strings.HasPrefix(got, tc.wantType) {
				t.Errorf("Content-Type %q, want %q", got, tc.wantType)
			}
			chunks := tc.decode(t, a.body)
			if got, want := textOf(chunks), "thinking about itHello there."; got != want {
				t.Errorf("text %q, want %q", got, want)
			}
			last := chunks[len(chunks)-1]
			if last.Candidates[0].FinishReason != "STOP" || last.ModelVersion != "gemini-2.5-flash" || last.ResponseID == "" {
				t.Errorf("last chunk %+v: want STOP, modelVersion gemini-2.5-flash and a responseId", last)
			}
			for _, c := range chunks[:len(chunks)-1] {
				if c.Candidates[0].FinishReason != "" {
					t.Errorf("a chunk before the last has finishReason %q", c.Candidates[0].FinishReason)
				}
			}
			u := last.UsageMetadata
			if u.PromptTokenCount == 0 || u.CandidatesTokenCount == 0 || u.ThoughtsTokenCount == 0 ||
				u.TotalTokenCount != u.PromptTokenCount+u.CandidatesTokenCount+u.ThoughtsTokenCount {
				t.Errorf("usage %+v: want prompt, candidates and thoughts counted and summed", u)
			}
		})
	}
}

// TestGeminiCountTokens: both request forms are counted alike.
func TestGeminiCountTokens(t *testing.T) {
	g := proxytest.NewGemini(t, geminiKey)
	for _, tc := range []struct{ name, body string }{
		{"contents", helloBody},
		{"generateContentRequest", `{"generateContentRequest":{"model":"models/gemini-2.5-flash",` + helloBody[1:] + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := geminiDo(t, g, http.MethodPost, "/v1beta/models/gemini-2.5-flash:countTokens", nil, tc.body)
			var got struct {
				TotalTokens int `json:"totalTokens"`
			}
			if err := json.Unmarshal(a.body, &got); a.status != http.StatusOK || err != nil {
				t.Fatalf("status %d %s (%v)", a.status, a.body, err)
			}
			if want := (len("say hello to the fake") + 3) / 4; got.TotalTokens != want {
				t.Errorf("totalTokens %d, want %d", got.TotalTokens, want)
			}
		})
	}
}

// TestGeminiModelPages: pageSize and pageToken walk the list; the last page
// has no nextPageToken; a made-up token is refused.
func TestGeminiModelPages(t *testing.T) {
	g := proxytest.NewGemini(t, geminiKey)
	g.SetModels("m1", "m2", "m3", "m4", "m5")
	type page struct {
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
		NextPageToken string `json:"nextPageToken"`
	}
	var names []string
	token, pages := "", 0
	for {
		path := "/v1beta/models?pageSize=2"
		if token != "" {
			path += "&pageToken=" + token
		}
		a := geminiDo(t, g, http.MethodGet, path, nil, "")
		var p page
		if err := json.Unmarshal(a.body, &p); a.status != http.StatusOK || err != nil {
			t.Fatalf("%s: status %d %s (%v)", path, a.status, a.body, err)
		}
		pages++
		for _, m := range p.Models {
			names = append(names, m.Name)
		}
		if token = p.NextPageToken; token == "" {
			break
		}
	}
	if got, want := strings.Join(names, ","), "models/m1,models/m2,models/m3,models/m4,models/m5"; got != want || pages != 3 {
		t.Errorf("got %s over %d pages, want %s over 3", got, pages, want)
	}
	t.Run("default page holds all", func(t *testing.T) {
		var p page
		a := geminiDo(t, g, http.MethodGet, "/v1beta/models", nil, "")
		if err := json.Unmarshal(a.body, &p); err != nil || len(p.Models) != 5 || p.NextPageToken != "" {
			t.Errorf("got %s, want the five models and no token", a.body)
		}
	})
	t.Run("bad token", func(t *testing.T) {
		a := geminiDo(t, g, http.MethodGet, "/v1beta/models?pageToken=nonsense", nil, "")
		if e := decodeGeminiErr(t, a); a.status != http.StatusBadRequest || e.Error.Status != "INVALID_ARGUMENT" {
			t.Errorf("got %d %s, want 400 INVALID_ARGUMENT", a.status, a.body)
		}
	})
	t.Run("one model and an unknown one", func(t *testing.T) {
		if a := geminiDo(t, g, http.MethodGet, "/v1beta/models/m3", nil, ""); a.status != http.StatusOK || !bytes.Contains(a.body, []byte(`"models/m3"`)) {
			t.Errorf("GET models/m3: %d %s", a.status, a.body)
		}
		a := geminiDo(t, g, http.MethodPost, "/v1beta/models/nope:generateContent", nil, helloBody)
		if e := decodeGeminiErr(t, a); a.status != http.StatusNotFound || e.Error.Status != "NOT_FOUND" {
			t.Errorf("unknown model: %d %s, want 404 NOT_FOUND", a.status, a.body)
		}
	})
}

// TestGeminiAuth: the key is taken from x-goog-api-key, ?key= or Bearer;
// each wrong or missing credential gets the API's own refusal.
func TestGeminiAuth(t *testing.T) {
	g := proxytest.NewGemini(t, geminiKey)
	for _, tc := range []struct {
		name       string
		header     http.Header
		query      string
		wantStatus int
		wantCode   string
	}{
		{"x-goog-api-key", http.Header{"X-Goog-Api-Key": {geminiKey}}, "", 200, ""},
		{"query key", http.Header{}, "?key=" + geminiKey, 200, ""},
		{"bearer", http.Header{"Authorization": {"Bearer " + geminiKey}}, "", 200, ""},
		{"none", http.Header{}, "", 403, "PERMISSION_DENIED"},
		{"wrong key", http.Header{"X-Goog-Api-Key": {"nope"}}, "", 400, "INVALID_ARGUMENT"},
		{"wrong query key", http.Header{}, "?key=nope", 400, "INVALID_ARGUMENT"},
		{"wrong bearer", http.Header{"Authorization": {"Bearer nope"}}, "", 401, "UNAUTHENTICATED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := geminiDo(t, g, http.MethodPost, "/v1beta/models/gemini-2.5-flash:generateContent"+tc.query, tc.header, helloBody)
			if a.status != tc.wantStatus {
				t.Fatalf("status %d %s, want %d", a.status, a.body, tc.wantStatus)
			}
			if tc.wantCode != "" {
				if e := decodeGeminiErr(t, a); e.Error.Status != tc.wantCode {
					t.Errorf("status %q, want %q", e.Error.Status, tc.wantCode)
				}
			}
		})
	}
}

func detail(e geminiErr, typ string) map[string]any {
	for _, d := range e.Error.Details {
		if d["@type"] == "type.googleapis.com/google.rpc."+typ {
			return d
		}
	}
	return nil
}

// TestGeminiErrors: the error helpers answer in Gemini's shape with what a
// classifier reads — RetryInfo's delay, the quota wording, the status.
func TestGeminiErrors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		resp       proxytest.Response
		wantStatus int
		wantCode   string
		check      func(geminiErr) string
	}{
		{"rate limited", proxytest.GeminiRateLimited("7s"), 429, "RESOURCE_EXHAUSTED", func(e geminiErr) string {
			if d := detail(e, "RetryInfo"); d == nil || d["retryDelay"] != "7s" {
				return "no RetryInfo with retryDelay 7s"
			}
			if strings.Contains(e.Error.Message, "quota, please check your plan") {
				return "a rate limit must not read as a spent quota"
			}
			return ""
		}},
		{"quota", proxytest.GeminiQuotaExhausted("gemini-2.5-pro"), 429, "RESOURCE_EXHAUSTED", func(e geminiErr) string {
			d := detail(e, "QuotaFailure")
			if !strings.Contains(e.Error.Message, "exceeded your current quota") || d == nil || !strings.Contains(js(d), "PerDay") {
				return "want the quota wording and a per-day QuotaFailure"
			}
			return ""
		}},
		{"permission", proxytest.GeminiPermissionDenied(), 403, "PERMISSION_DENIED", nil},
		{"unauthenticated", proxytest.GeminiUnauthenticated(), 401, "UNAUTHENTICATED", nil},
		{"key invalid", proxytest.GeminiKeyInvalid(), 400, "INVALID_ARGUMENT", func(e geminiErr) string {
			if d := detail(e, "ErrorInfo"); d == nil || d["reason"] != "API_KEY_INVALID" {
				return "no ErrorInfo API_KEY_INVALID"
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := proxytest.NewGemini(t, "")
			g.Push(proxytest.GeminiFault(tc.resp))
			a := geminiDo(t, g, http.MethodPost, "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", nil, helloBody)
			if a.status != tc.wantStatus {
				t.Fatalf("status %d, want %d", a.status, tc.wantStatus)
			}
			e := decodeGeminiErr(t, a)
			if e.Error.Status != tc.wantCode {
				t.Errorf("status %q, want %q", e.Error.Status, tc.wantCode)
			}
			if tc.check != nil {
				if msg := tc.check(e); msg != "" {
					t.Errorf("%s: %s", msg, a.body)
				}
			}
		})
	}
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestGeminiCut: a stream cut after one chunk ends without its last frame.
func TestGeminiCut(t *testing.T) {
	g := proxytest.NewGemini(t, geminiKey)
	r := proxytest.GeminiText("one ", "two")
	r.CutAfter = 1
	g.Push(r)
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", strings.NewReader(helloBody))
	req.Header.Set("x-goog-api-key", geminiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("post: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	frames := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			frames++
		}
	}
	if sc.Err() == nil || frames != 1 {
		t.Errorf("got %d frames and read error %v, want 1 frame and a broken body", frames, sc.Err())
	}
}
