// Package jsontest holds what the codecs' tests compare their hand-written
// JSON with.
package jsontest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Reflected is what encoding/json writes for v without HTML escaping and
// without the trailing newline — conv.Marshal's output for a value that
// does not write itself — or "null" when encoding/json fails.
func Reflected(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// CheckUsageMember fails t when conv.UsageMember reads the usage of the
// body b into W otherwise than json.Unmarshal of the whole body does: the
// same values, and found exactly when the decode succeeds with a usage.
// With W a conv.UsageReader this holds its reader to encoding/json.
func CheckUsageMember[W any](t testing.TB, b []byte) {
	t.Helper()
	if FoldsDiffer(b) {
		return
	}
	got, gotOK := conv.UsageMember[W](b, false)
	var top struct {
		Usage *W `json:"usage"`
	}
	wantOK := json.Unmarshal(b, &top) == nil && top.Usage != nil
	switch {
	case gotOK != wantOK:
		t.Errorf("UsageMember(%q) found %t; json.Unmarshal of the body %t (%+v)", b, gotOK, wantOK, top.Usage)
	case gotOK && !reflect.DeepEqual(got, top.Usage):
		t.Errorf("UsageMember(%q) = %+v; json.Unmarshal gives %+v", b, got, top.Usage)
	}
}

// UsageSeeds are bodies whose usage objects try a usage reader's edges:
// nested details, nulls, keys in other cases, repeated members, numbers
// no integer holds, other types.
var UsageSeeds = []string{
	`{"usage":{"input_tokens":12,"output_tokens":3,"cache_read_input_tokens":5000,"cache_creation_input_tokens":7}}`,
	`{"usage":{"prompt_tokens":1200,"completion_tokens":9,"total_tokens":1209,"prompt_tokens_details":{"cached_tokens":100,"cache_write_tokens":4},"completion_tokens_details":{"reasoning_tokens":3},"prompt_cache_hit_tokens":1,"cached_tokens":2}}`,
	`{"usage":{"INPUT_TOKENS":1,"Prompt_Tokens":2,"output_tokens":null,"completion_tokens_details":null}}`,
	`{"usage":{"input_tokens":1},"usage":{"output_tokens":2}}`,
	`{"usage":{"input_tokens":1},"usage":null}`,
	`{"usage":{"input_tokens":1.5}}`,
	`{"usage":{"prompt_tokens":1e3}}`,
	`{"usage":{"input_tokens":99999999999999999999}}`,
	`{"usage":{"input_tokens":"12"}}`,
	`{"usage":[1,2]}`,
	`{"usage":7}`,
	`{"usage":{"prompt_tokens_details":{"cached_tokens":-4},"prompt_tokens_details":{"cache_write_tokens":4}}}`,
	`{"usage":{"server_tool_use":{"web_search_requests":1},"service_tier":"standard","input_tokens":3}}`,
	`{"usage":{"input_tokens":1}} trailing`,
	` { "usage" : { "output_tokens" : 4 , "input_tokens" : 2 } } `,
}

// FoldsDiffer reports whether b holds ſ or the Kelvin sign, which
// encoding/json folds to s and k in member names and conv.Reader does not
// (bench/NOTES.md, Request decoding): there the two may differ, by design.
func FoldsDiffer(b []byte) bool {
	return strings.Contains(string(b), "ſ") || strings.Contains(string(b), "K")
}

// CheckRead fails t unless read (named name in the messages) gives for
// data what json.Unmarshal gives into a zero T, or an error where it does.
func CheckRead[T any](t testing.TB, name string, data []byte, read func([]byte, *T) error) {
	t.Helper()
	if FoldsDiffer(data) {
		return
	}
	var want, got T
	wantErr := json.Unmarshal(data, &want)
	gotErr := read(data, &got)
	if (wantErr != nil) != (gotErr != nil) {
		t.Fatalf("%s(%q) error %v; json.Unmarshal's %v", name, data, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("%s(%q) = %+v\njson.Unmarshal gives %+v", name, data, got, want)
	}
}

// TestUsageReader runs CheckUsageMember over UsageSeeds.
func TestUsageReader[W any](t *testing.T) {
	for _, b := range UsageSeeds {
		CheckUsageMember[W](t, []byte(b))
	}
}

// FuzzUsageReader runs CheckUsageMember on what the fuzzer makes of
// UsageSeeds.
func FuzzUsageReader[W any](f *testing.F) {
	for _, b := range UsageSeeds {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) { CheckUsageMember[W](t, b) })
}
