package conv

import (
	"bytes"
	"encoding/json"
	"strings"
)

// CanonicalArgs returns tool-call arguments as canonical JSON object text:
// compact, object keys sorted, numbers as written, no HTML escaping.
// Missing, truncated or non-object arguments become "{}" — a strict
// upstream rejects anything else, and a cut stream must not hand a client
// half an object (docs/BEHAVIOUR.md#translation).
func CanonicalArgs(s string) string {
	if canonical(s) {
		// Already canonical, as every call the decoders have read once
		// is: the encoders ask again, and a decode and re-encode per call
		// was a good part of translating a long conversation
		// (bench/NOTES.md, "Request decoding").
		return s
	}
	s = strings.TrimSpace(s)
	if s == "" || s == "{}" {
		return "{}"
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil || v == nil {
		return "{}"
	}
	if _, err := dec.Token(); err == nil {
		return "{}" // something after the object
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "{}"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// CustomInput returns the free-form input of a custom tool call whose Args
// is {"input":"…"}; other arguments are returned as they are.
func CustomInput(args string) string {
	var v struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal([]byte(args), &v) == nil && v.Input != nil {
		return *v.Input
	}
	return args
}

// CustomArgs wraps a custom tool's free-form input as Args.
func CustomArgs(input string) string {
	return string(Marshal(map[string]string{"input": input}))
}

// Schema returns s, or EmptySchema when s is missing or null.
func Schema(s json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(s)
	if len(t) == 0 || string(t) == "null" || string(t) == "{}" {
		return EmptySchema
	}
	return s
}

// Effort levels as budgets: how a Responses or Chat effort becomes an
// Anthropic thinking budget and back.
var effortBudgets = []struct {
	effort string
	budget int64
}{
	{"minimal", 1024},
	{"low", 2048},
	{"medium", 8192},
	{"high", 24576},
	{"xhigh", 32768},
	{"max", 65536},
}

// BudgetForEffort is the Anthropic thinking budget for an effort level
// (0 for an unknown one).
func BudgetForEffort(effort string) int64 {
	for _, e := range effortBudgets {
		if e.effort == effort {
			return e.budget
		}
	}
	return 0
}

// EffortForBudget is the smallest effort level whose budget covers b.
// OpenAI upstreams take "low", "medium" and "high"; the extremes fold in.
func EffortForBudget(b int64) string {
	switch {
	case b <= 0:
		return ""
	case b <= 4096:
		return "low"
	case b <= 16384:
		return "medium"
	}
	return "high"
}

// StepDown is the next lower effort level, for a retry after an upstream
// rejected level e; "" when there is none.
func StepDown(e string) string {
	switch e {
	case "max", "xhigh":
		return "high"
	case "high":
		return "medium"
	case "medium":
		return "low"
	case "low":
		return "minimal"
	}
	return ""
}
