package gemini

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		path, query       string
		model             string
		stream, sse, isOK bool
	}{
		{"/v1beta/models/gemini-2.5-pro:generateContent", "", "gemini-2.5-pro", false, false, true},
		{"/v1beta/models/gemini-2.5-pro:streamGenerateContent", "alt=sse", "gemini-2.5-pro", true, true, true},
		{"/v1beta/models/gemini-3-pro-preview:streamGenerateContent", "key=x", "gemini-3-pro-preview", true, false, true},
		{"/v1/models/gemini-2.0-flash:generateContent", "alt=sse", "gemini-2.0-flash", false, false, true},
		{"/v1beta/tunedModels/my-model:generateContent", "", "my-model", false, false, true},
		{"/v1beta/models/gemini-2.5-pro:countTokens", "", "", false, false, false},
		{"/v1beta/models:generateContent", "", "", false, false, false},
		{"/v1/messages", "", "", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.path+"?"+tt.query, func(t *testing.T) {
			model, stream, sse, ok := ParsePath(tt.path, tt.query)
			if model != tt.model || stream != tt.stream || sse != tt.sse || ok != tt.isOK {
				t.Errorf("ParsePath = %q, %v, %v, %v; want %q, %v, %v, %v", model, stream, sse, ok, tt.model, tt.stream, tt.sse, tt.isOK)
			}
		})
	}
	for _, stream := range []bool{false, true} {
		p := Path("gemini-2.5-flash", stream)
		path, query, _ := cutQuery(p)
		model, s, sse, ok := ParsePath(path, query)
		if !ok || model != "gemini-2.5-flash" || s != stream || sse != stream {
			t.Errorf("Path(%v) = %q reads back as %q, %v, %v, %v", stream, p, model, s, sse, ok)
		}
	}
}

func cutQuery(p string) (string, string, bool) {
	for i := range p {
		if p[i] == '?' {
			return p[:i], p[i+1:], true
		}
	}
	return p, "", false
}

func TestConversationKey(t *testing.T) {
	tests := []struct {
		name   string
		client string
		r      conv.Request
		want   string
	}{
		{"a client alone", "key-1", conv.Request{}, "key-1"},
		{"Codex's prompt cache key", "key-1", conv.Request{PromptCacheKey: "pck", User: "u"}, "key-1\x00pck"},
		{"Claude Code's user id", "key-1", conv.Request{User: `{"session_id":"s"}`}, "key-1\x00{\"session_id\":\"s\"}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ConversationKey(tt.client, &tt.r); got != tt.want {
				t.Errorf("ConversationKey = %q, want %q", got, tt.want)
			}
		})
	}
}
