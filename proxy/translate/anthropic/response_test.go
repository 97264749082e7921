package anthropic

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

func TestDecodeResponse(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       conv.Response
	}{
		{
			name: "thinking, server tool blocks, cited text, tool call",
			body: `{"id":"msg_01XF","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
			 "content":[
			  {"type":"thinking","thinking":"Need the weather.","signature":"EqQB"},
			  {"type":"redacted_thinking","data":"EmwK"},
			  {"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"paris"}},
			  {"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},
			  {"type":"text","text":"Checking.","citations":[{"type":"web_search_result_location","url":"https://x"}]},
			  {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"unit":"c","city":"Paris"}}],
			 "stop_reason":"tool_use","stop_sequence":null,
			 "usage":{"input_tokens":12,"cache_creation_input_tokens":300,"cache_read_input_tokens":20000,"output_tokens":85,"service_tier":"standard","server_tool_use":{"web_search_requests":1}}}`,
			want: conv.Response{
				ID: "msg_01XF", Model: "claude-sonnet-4-5-20250929", Stop: conv.StopToolUse,
				Parts: []conv.Part{
					{Kind: conv.PartReasoning, Text: "Need the weather.", Signature: "EqQB"},
					{Kind: conv.PartReasoning, Redacted: "EmwK"},
					{Kind: conv.PartText, Text: "Checking."},
					{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "get_weather", Args: `{"city":"Paris","unit":"c"}`},
				},
				Usage: conv.Usage{Input: 12, Output: 85, CacheRead: 20000, CacheWrite: 300},
			},
		},
		{
			name: "stop sequence",
			body: `{"id":"msg_2","model":"m","content":[{"type":"text","text":"a"}],"stop_reason":"stop_sequence","stop_sequence":"###","usage":{"input_tokens":1,"output_tokens":1}}`,
			want: conv.Response{ID: "msg_2", Model: "m", Stop: conv.StopSequence, StopSequence: "###",
				Parts: []conv.Part{{Kind: conv.PartText, Text: "a"}}, Usage: conv.Usage{Input: 1, Output: 1}},
		},
		{
			name: "context window exceeded is max_tokens, no usage",
			body: `{"id":"msg_3","model":"m","content":[],"stop_reason":"model_context_window_exceeded"}`,
			want: conv.Response{ID: "msg_3", Model: "m", Stop: conv.StopMaxTokens, Parts: []conv.Part{}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Codec.DecodeResponse([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, c.want) {
				t.Errorf("got  %+v\nwant %+v", *got, c.want)
			}
		})
	}
}

func TestDecodeResponseErrors(t *testing.T) {
	for body, want := range map[string]string{
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`: "overloaded_error: Overloaded",
		`{"type":"error"}`: "without details",
		`<html>`:           "invalid character",
		`{"content":null}`: "no content",
		`{"id":"msg_1"}`:   "no content",
		`null`:             "no content",
	} {
		if _, err := Codec.DecodeResponse([]byte(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeResponse(%s) error = %v, want %q", body, err, want)
		}
	}
}

func TestEncodeResponse(t *testing.T) {
	req := &conv.Request{From: Protocol, Model: "claude-sonnet-4-5"}
	for _, c := range []struct {
		name string
		resp conv.Response
		want string
	}{
		{
			name: "reasoning three ways, tool call without id, end_turn with a call is tool_use",
			resp: conv.Response{
				ID: "chatcmpl-9", Model: "gpt-5",
				Parts: []conv.Part{
					{Kind: conv.PartReasoning, Text: "plan", Encrypted: "gAAA"},
					{Kind: conv.PartReasoning, Text: "signed", Signature: "sig"},
					{Kind: conv.PartReasoning, Redacted: "red"},
					{Kind: conv.PartReasoning},
					{Kind: conv.PartText, Text: "Reading."},
					{Kind: conv.PartText},
					{Kind: conv.PartToolCall, Name: "Read", Args: `{"b":1, "a":2}`},
				},
				Stop:  conv.StopEnd,
				Usage: conv.Usage{Input: 5, Output: 40, CacheRead: 1000, CacheWrite: 2, Reasoning: 30},
			},
			want: `{"id":"chatcmpl-9","type":"message","role":"assistant","model":"claude-sonnet-4-5",
			 "content":[
			  {"type":"thinking","thinking":"plan","signature":""},
			  {"type":"thinking","thinking":"signed","signature":"sig"},
			  {"type":"redacted_thinking","data":"red"},
			  {"type":"text","text":"Reading."},
			  {"type":"tool_use","id":"<generated>","name":"Read","input":{"a":2,"b":1}}],
			 "stop_reason":"tool_use","stop_sequence":null,
			 "usage":{"input_tokens":5,"cache_creation_input_tokens":2,"cache_read_input_tokens":1000,"output_tokens":40}}`,
		},
		{
			name: "empty answer, no id, no stop reason",
			resp: conv.Response{},
			want: `{"id":"<generated>","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],
			 "stop_reason":"end_turn","stop_sequence":null,
			 "usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}`,
		},
		{
			name: "stop sequence",
			resp: conv.Response{ID: "msg_1", Parts: []conv.Part{{Kind: conv.PartText, Text: "x"}}, Stop: conv.StopSequence, StopSequence: "###"},
			want: `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"x"}],
			 "stop_reason":"stop_sequence","stop_sequence":"###",
			 "usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}`,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := Codec.EncodeResponse(&c.resp, req)
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, conv.Marshal(markGenerated(mustAny(t, b))), c.want)
		})
	}
}

// A response an Anthropic upstream could give survives encoding for the
// client and decoding again.
func TestResponseRoundTrip(t *testing.T) {
	resp := &conv.Response{
		ID: "msg_1", Model: "claude-x",
		Parts: []conv.Part{
			{Kind: conv.PartReasoning, Text: "t", Signature: "s"},
			{Kind: conv.PartReasoning, Redacted: "r"},
			{Kind: conv.PartText, Text: "a <b> & c"},
			{Kind: conv.PartToolCall, CallID: "toolu_1", Name: "f", Args: `{"x":1.50}`},
		},
		Stop:  conv.StopToolUse,
		Usage: conv.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4},
	}
	b, err := Codec.EncodeResponse(resp, &conv.Request{Model: "claude-x"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Codec.DecodeResponse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, resp) {
		t.Errorf("got  %+v\nwant %+v\nwire %s", got, resp, b)
	}
}
