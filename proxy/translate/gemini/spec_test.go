package gemini

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

func TestSpecRoute(t *testing.T) {
	for _, c := range []struct {
		path, query string
		ok          bool
		want        conv.Inbound
	}{
		{"/v1beta/models/g:generateContent", "", true, conv.Inbound{Model: "g", StreamSaid: true}},
		{"/v1beta/models/g:streamGenerateContent", "alt=sse", true, conv.Inbound{Model: "g", Stream: true, StreamSaid: true}},
		{"/v1beta/models/g:streamGenerateContent", "", true, conv.Inbound{Model: "g", Stream: true, StreamSaid: true, Form: arrayForm}},
		{"/v1beta/models/g:countTokens", "", true, conv.Inbound{Model: "g", StreamSaid: true, Count: true}},
		{"/v1beta/models/:countTokens", "", false, conv.Inbound{}},
		{"/v1beta/models/g:embedContent", "", false, conv.Inbound{}},
	} {
		t.Run(c.path+"?"+c.query, func(t *testing.T) {
			got, ok := route(c.path, c.query)
			if ok != c.ok || got != c.want {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func TestSpecEventKind(t *testing.T) {
	for _, c := range []struct {
		name, data string
		holding    bool
		want       conv.EventKind
	}{
		{"usage only", `{"usageMetadata":{"promptTokenCount":3}}`, true, conv.EventPrelude},
		{"text", `{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}`, true, conv.EventContent},
		{"finish", `{"candidates":[{"content":{"parts":[{"text":"."}]},"finishReason":"STOP"}]}`, false, conv.EventTerminal},
		{"error", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"slow"}}`, false, conv.EventError},
		{"empty", ``, true, conv.EventPrelude},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := eventKind("", []byte(c.data), c.holding); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestSpecModelsPage(t *testing.T) {
	page, err := modelsPage([]byte(`{"models":[{"name":"models/gemini-2.5-flash"},{"name":"models/gemini-2.5-pro"}],"nextPageToken":"tok"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(page.IDs, ","), "gemini-2.5-flash,gemini-2.5-pro"; got != want || !page.More || page.Cursor != "tok" {
		t.Errorf("got %+v, want %s with more after tok", page, want)
	}
	b, _ := json.Marshal(modelsAnswer([]string{"gemini-2.5-flash"}))
	if back, err := modelsPage(b); err != nil || len(back.IDs) != 1 || back.IDs[0] != "gemini-2.5-flash" || back.More {
		t.Errorf("ccmesh's own list %s reads back as %+v, %v", b, back, err)
	}
}

func TestSpecReadError(t *testing.T) {
	for _, c := range []struct {
		name string
		body string
		want conv.UpstreamError
	}{
		{"rate limit", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"slow","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}`,
			conv.UpstreamError{RateLimited: true, RetryAfter: 30 * time.Second}},
		{"key", `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"API key not valid.","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`,
			conv.UpstreamError{KeyRefused: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := readError(0, []byte(c.body))
			if !ok || got != c.want {
				t.Errorf("got %+v, %v; want %+v", got, ok, c.want)
			}
		})
	}
	if _, ok := readError(500, []byte(`{"type":"error"}`)); ok {
		t.Error("an Anthropic body read as Gemini's")
	}
}

// A count of another protocol's request is a countTokens body Gemini
// takes: the whole request inside generateContentRequest, with its model.
func TestSpecEncodeCount(t *testing.T) {
	r := &conv.Request{Model: "gemini-2.5-flash", MaxTokens: new(int64(100)), Messages: []conv.Message{{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: "hi"}}}}}
	b, err := encodeCount(r)
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		G map[string]json.RawMessage `json:"generateContentRequest"`
	}
	if err := json.Unmarshal(b, &w); err != nil || string(w.G["model"]) != `"models/gemini-2.5-flash"` || w.G["contents"] == nil || w.G["generationConfig"] != nil {
		t.Errorf("count body %s", b)
	}
	if back, err := DecodeCountTokens(b); err != nil || len(back.Messages) != 1 {
		t.Errorf("the body reads back as %+v, %v", back, err)
	}
}
