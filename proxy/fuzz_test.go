package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzScanBody holds the request-body scanner to encoding/json: on every
// body encoding/json reads as an object, the scanner accepts it and finds
// the same model and stream flag; replacing the model keeps the body
// valid and changes only the model.
func FuzzScanBody(f *testing.F) {
	for _, seed := range []string{
		claudeBody, claudeStreamBody,
		`{}`, `{"model":"a","model":"b"}`, `{"model":"a","model":5}`, `{"model":5,"model":"a"}`,
		`{"model":"@relay/claude-\u0073onnet","stream":true}`, `{"stream":false,"model":"x","stream":true}`,
		`{"model":"\ud83d\ude00"}`, `{"a":[{"b":{"c":[1,2,{"model":"inner"}]}}],"model":"outer"}`,
		`[]`, `{"model":"a"`, `{"model":"a"}x`, `{"model":tru}`, "{\"model\":\"a\x01\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := scanBody(b)
		var doc map[string]json.RawMessage
		if json.Unmarshal(b, &doc) != nil || doc == nil {
			// The scanner may refuse or pass on garbage; it must not panic.
			// encoding/json reads null into a map without error and leaves
			// it nil: that body is no object either.
			return
		}
		if err != nil {
			t.Fatalf("scanBody refused a body encoding/json reads: %v\n%q", err, b)
		}
		var want struct {
			Model  *string `json:"model"`
			Stream *bool   `json:"stream"`
		}
		jerr := json.Unmarshal(b, &want)
		if raw, ok := doc["model"]; ok && jerr == nil && want.Model != nil && utf8.Valid(raw) {
			if !info.hasModel || info.model != *want.Model {
				t.Fatalf("model = %q (found %v), encoding/json says %q\n%q", info.model, info.hasModel, *want.Model, b)
			}
			out := withModel(b, info, "renamed")
			var after map[string]json.RawMessage
			if err := json.Unmarshal(out, &after); err != nil || string(after["model"]) != `"renamed"` {
				t.Fatalf("withModel broke the body: %v\n%q", err, out)
			}
		}
		if raw, ok := doc["model"]; ok && len(raw) > 0 && raw[0] != '"' && info.hasModel {
			t.Fatalf("a model that is not a string was taken: %q", b)
		}
		if jerr == nil && want.Stream != nil && info.stream != *want.Stream {
			t.Fatalf("stream = %v, encoding/json says %v\n%q", info.stream, *want.Stream, b)
		}
	})
}

// FuzzSSEReader: events come back byte-for-byte (nothing added, lost or
// reordered) until the input ends or an event is too large, and parsing
// an event never panics.
func FuzzSSEReader(f *testing.F) {
	for _, seed := range []string{
		"event: message_start\ndata: {}\n\n", "data: [DONE]\n\n", ": keep-alive\n\n",
		"\n\n\ndata: a\r\n\r\n", "data: a\ndata: b\n\nevent: x\n", "data", "event:\ndata:\n\n",
		strings.Repeat("x", 40000) + "\n\n",
	} {
		f.Add([]byte(seed), uint16(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, limit uint16) {
		sr := newSSEReader(bytes.NewReader(in))
		sr.max = int(limit)
		var got []byte
		for {
			ev, err := sr.next()
			got = append(got, ev...)
			parseEvent(ev)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, errEventTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				if errors.Is(err, errEventTooLarge) {
					if !bytes.HasPrefix(in, got) {
						t.Fatalf("events are not a prefix of the input")
					}
					return
				}
				break
			}
			if len(ev) == 0 {
				t.Fatal("an empty event without an error")
			}
		}
		if !bytes.Equal(got, in) {
			t.Fatalf("events joined = %q, input %q", got, in)
		}
	})
}

// FuzzSplitExplicitModel: "@name/model" splits at the first '/', the two
// parts put back together give the input, and anything else is a model
// with no endpoint name.
func FuzzSplitExplicitModel(f *testing.F) {
	for _, seed := range []string{"@a/m", "@relay/openrouter/anthropic/claude", "@/m", "@a/", "@a", "claude", "", "@@a/b", "a/@b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, model := splitExplicitModel(s)
		if name == "" && !strings.HasPrefix(s, "@/") {
			if model != s && !(strings.HasPrefix(s, "@") && strings.Contains(s, "/")) {
				t.Fatalf("split(%q) = %q, %q: a plain model must come back whole", s, name, model)
			}
			return
		}
		if "@"+name+"/"+model != s || strings.Contains(name, "/") {
			t.Fatalf("split(%q) = %q, %q", s, name, model)
		}
	})
}
