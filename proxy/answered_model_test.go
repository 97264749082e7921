package proxy

import (
	"bytes"
	"encoding/json"
	"testing"
)

// modelByUnmarshal is modelOf as a decode of the whole answer: the
// reference the one-pass reader must agree with.
func modelByUnmarshal(b []byte) string {
	if !bytes.Contains(b, modelKey) {
		return ""
	}
	var doc struct {
		Model    string                  `json:"model"`
		Message  *struct{ Model string } `json:"message"`
		Response *struct{ Model string } `json:"response"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return ""
	}
	switch {
	case doc.Model != "":
		return doc.Model
	case doc.Message != nil && doc.Message.Model != "":
		return doc.Message.Model
	case doc.Response != nil:
		return doc.Response.Model
	}
	return ""
}

var modelSeeds = []string{
	`{"id":"msg_1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hi \"model\""}]}`,
	`{"type":"message_start","message":{"model":"claude-opus-4-1","usage":{"input_tokens":3}}}`,
	`{"type":"response.created","response":{"id":"r","model":"gpt-5"}}`,
	`{"model":"","message":{"model":"m"}}`,
	`{"model":null,"model":"a","model":null}`,
	`{"message":{"model":"a"},"message":null,"response":{"model":"b"}}`,
	`{"MODEL":"x","Message":{"Model":"y"}}`,
	`{"model":1}`,
	`{"message":"text","model":"a"}`,
	`{"model":"a"} x`,
	`["model"]`,
	"{\"model\":\"\xff\xfe\"}",
	`{"model":"\ud83d\ude00 \u00e9"}`,
}

func TestModelOfAgreesWithUnmarshal(t *testing.T) {
	for _, s := range modelSeeds {
		checkModelOf(t, []byte(s))
	}
}

func checkModelOf(t *testing.T, b []byte) {
	t.Helper()
	if got, want := modelOf(b), modelByUnmarshal(b); got != want {
		t.Errorf("modelOf(%q) = %q; a decode of the whole answer gives %q", b, got, want)
	}
}

func FuzzModelOf(f *testing.F) {
	for _, s := range modelSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkModelOf(t, b) })
}
