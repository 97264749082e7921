package chat

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// pin fixes the created time and the generated ids for the test.
func pin(t *testing.T) {
	t.Helper()
	oldNow, oldID := now, newID
	now = func() time.Time { return time.Unix(1700000000, 0) }
	newID = func(prefix string) string { return prefix + "GEN" }
	t.Cleanup(func() { now, newID = oldNow, oldID })
}

// jsonEqual fails unless got and want are the same JSON value.
func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		var c bytes.Buffer
		_ = json.Compact(&c, []byte(want))
		t.Errorf("JSON differs\n got: %s\nwant: %s", got, c.Bytes())
	}
}

func ptr[T any](v T) *T { return &v }

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func text(s string) conv.Part { return conv.Part{Kind: conv.PartText, Text: s} }

func reasoning(s string) conv.Part { return conv.Part{Kind: conv.PartReasoning, Text: s} }

func call(id, name, args string) conv.Part {
	return conv.Part{Kind: conv.PartToolCall, CallID: id, Name: name, Args: args}
}

func result(id string, content ...conv.Part) conv.Part {
	return conv.Part{Kind: conv.PartToolResult, CallID: id, Content: content}
}

func user(parts ...conv.Part) conv.Message { return conv.Message{Role: conv.RoleUser, Parts: parts} }

func assistant(parts ...conv.Part) conv.Message {
	return conv.Message{Role: conv.RoleAssistant, Parts: parts}
}

func system(parts ...conv.Part) conv.Message {
	return conv.Message{Role: conv.RoleSystem, Parts: parts}
}
