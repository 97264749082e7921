package proxy

import "testing"

func TestSameModel(t *testing.T) {
	tests := []struct {
		forwarded, answered string
		same                bool
	}{
		{"claude-sonnet-4-5", "claude-sonnet-4-5", true},
		{"claude-sonnet-4-5", "claude-sonnet-4-5-20250929", true},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", true},
		{"claude-sonnet-4-5", "claude-sonnet-4-5@20250929", true},
		{"claude-sonnet-4-5", "anthropic/claude-sonnet-4.5", true},
		{"gpt-4o", "gpt-4o-2024-08-06", true},
		{"deepseek-chat", "deepseek-chat", true},
		{"kimi-k2.6", "kimi-k2-6", true},
		{"gemini-2.5-flash", "gemini-2.5-flash-preview", true},
		{"claude-sonnet-4-5", "", true}, // the answer names none
		{"claude-sonnet-4-5", "claude-haiku-4-5-20251001", false},
		{"claude-opus-4-8", "claude-opus-4-5", false},
		{"gpt-5.4", "gpt-5.4-mini", false},
		{"glm-5.1", "glm-4.5-air", false},
		{"claude-sonnet-4-5", "deepseek-v4-flash", false},
	}
	for _, tc := range tests {
		if got := sameModel(tc.forwarded, tc.answered); got != tc.same {
			t.Errorf("sameModel(%q, %q) = %v, want %v", tc.forwarded, tc.answered, got, tc.same)
		}
	}
}
