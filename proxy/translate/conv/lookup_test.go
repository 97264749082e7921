package conv

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// testUsage stands for a protocol's usage wire type.
type testUsage struct {
	In  int64 `json:"input_tokens"`
	Out int64 `json:"output_tokens"`
}

// usageByUnmarshal is UsageMember as a decode of the whole document: the
// reference Lookup must agree with.
func usageByUnmarshal(b []byte, event bool) (*testUsage, bool) {
	type inner struct {
		Usage *testUsage `json:"usage"`
	}
	var doc struct {
		Usage    *testUsage `json:"usage"`
		Message  *inner     `json:"message"`
		Response *inner     `json:"response"`
	}
	if !event {
		var top struct {
			Usage *testUsage `json:"usage"`
		}
		if json.Unmarshal(b, &top) != nil || top.Usage == nil {
			return nil, false
		}
		return top.Usage, true
	}
	if !bytes.Contains(b, usageKey) || json.Unmarshal(b, &doc) != nil {
		return nil, false
	}
	switch {
	case doc.Usage != nil:
		return doc.Usage, true
	case doc.Message != nil && doc.Message.Usage != nil:
		return doc.Message.Usage, true
	case doc.Response != nil && doc.Response.Usage != nil:
		return doc.Response.Usage, true
	}
	return nil, false
}

var lookupSeeds = []string{
	`{"usage":{"input_tokens":3,"output_tokens":4}}`,
	`{"id":"x","usage":{"input_tokens":3},"content":[{"type":"text","text":"a \"usage\" b"}]}`,
	`{"type":"message_start","message":{"model":"m","usage":{"input_tokens":9}}}`,
	`{"type":"response.completed","response":{"usage":{"output_tokens":2}}}`,
	`{"USAGE":{"input_tokens":1},"usage":{"input_tokens":2}}`,
	`{"usage":{"input_tokens":1},"usage":null}`,
	`{"usage":"no","message":{"usage":{"input_tokens":1}}}`,
	`{"message":"text","usage":{"input_tokens":1}}`,
	`{"message":null,"response":{"usage":{"input_tokens":5}}}`,
	`{"message":{"usage":{"input_tokens":1}},"message":{"model":"x"}}`,
	`{"usage":{"input_tokens":1}} trailing`,
	`{"usage":{"input_tokens":1},}`,
	`[{"usage":{"input_tokens":1}}]`,
	`null`,
	`{"usage":{"input_tokens":1.5}}`,
	`{"Message":{"Usage":{"input_tokens":7}}}`,
	"{\"usage\":{\"input_tokens\":1},\"x\":\"\xff\"}",
	`{"usage":{"input_tokens":1},"x":"\u12"}`,
}

func TestUsageMemberAgreesWithUnmarshal(t *testing.T) {
	for _, s := range lookupSeeds {
		for _, event := range []bool{false, true} {
			checkUsageMember(t, []byte(s), event)
		}
	}
}

func checkUsageMember(t *testing.T, b []byte, event bool) {
	t.Helper()
	got, gotOK := UsageMember[testUsage](b, event)
	want, wantOK := usageByUnmarshal(b, event)
	if gotOK != wantOK || !reflect.DeepEqual(got, want) {
		t.Errorf("UsageMember(%q, event %t) = %+v, %t; a decode of the whole document gives %+v, %t", b, event, got, gotOK, want, wantOK)
	}
}

func FuzzUsageMember(f *testing.F) {
	for _, s := range lookupSeeds {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, event bool) { checkUsageMember(t, b, event) })
}

func TestLookupPaths(t *testing.T) {
	b := []byte(`{"a":1,"b":{"c":"x","d":[1,2]},"A":2,"e":{"c":true}}`)
	vals, ok := Lookup(b, []string{"a"}, []string{"b", "c"}, []string{"b", "z"}, []string{"e", "c"})
	if !ok {
		t.Fatal("Lookup: not ok")
	}
	want := [][]string{{"1", "2"}, {`"x"`}, nil, {"true"}}
	for i, v := range vals {
		var got []string
		for _, raw := range v {
			got = append(got, string(raw))
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("path %d: got %q, want %q", i, got, want[i])
		}
	}
	if _, ok := Lookup([]byte(`{"b":[1]}`), []string{"b", "c"}); ok {
		t.Error("a path through an array: got ok, want not (a struct decode fails there)")
	}
}
