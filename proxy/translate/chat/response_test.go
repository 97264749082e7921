package chat

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

func TestDecodeResponse(t *testing.T) {
	pin(t)
	for _, c := range []struct {
		name, body string
		want       conv.Response
	}{
		{"DeepSeek reasoner: reasoning_content, cache hits",
			`{"id":"d1","object":"chat.completion","model":"deepseek-reasoner","choices":[{"index":0,"message":{"role":"assistant","content":"42","reasoning_content":"6*7"},"finish_reason":"stop"}],
			  "usage":{"prompt_tokens":100,"completion_tokens":30,"total_tokens":130,"prompt_cache_hit_tokens":80,"prompt_cache_miss_tokens":20,"completion_tokens_details":{"reasoning_tokens":25}}}`,
			conv.Response{ID: "d1", Model: "deepseek-reasoner", Parts: []conv.Part{reasoning("6*7"), text("42")}, Stop: conv.StopEnd,
				Usage: conv.Usage{Input: 20, CacheRead: 80, Output: 30, Reasoning: 25}}},
		{"OpenAI: two tool calls, cached tokens",
			`{"id":"chatcmpl-1","model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,"tool_calls":[
			   {"id":"call_1","type":"function","function":{"name":"a","arguments":"{\"y\": 2, \"x\": 1}"}},
			   {"id":"call_2","type":"function","function":{"name":"b","arguments":""}}]},"finish_reason":"tool_calls"}],
			  "usage":{"prompt_tokens":2000,"completion_tokens":50,"prompt_tokens_details":{"cached_tokens":1536},"completion_tokens_details":{"reasoning_tokens":0}}}`,
			conv.Response{ID: "chatcmpl-1", Model: "gpt-4.1", Parts: []conv.Part{call("call_1", "a", `{"x":1,"y":2}`), call("call_2", "b", "{}")},
				Stop: conv.StopToolUse, Usage: conv.Usage{Input: 464, CacheRead: 1536, Output: 50}}},
		{"inline <think>, finish stop with a tool call is tool_use, no id",
			`{"id":"q","model":"qwq","choices":[{"message":{"content":"<think>\nhmm\n</think>\n\nCalling.","tool_calls":[{"type":"function","function":{"name":"f","arguments":{"k":"v"}}}]},"finish_reason":"stop"}]}`,
			conv.Response{ID: "q", Model: "qwq", Parts: []conv.Part{reasoning("hmm\n"), text("Calling."), call("call_GEN", "f", `{"k":"v"}`)}, Stop: conv.StopToolUse}},
		{"cut while thinking: all reasoning; length with a tool call stays max_tokens",
			`{"id":"x","model":"m","choices":[{"message":{"content":"<think>still","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{\"a\":"}}]},"finish_reason":"length"}]}`,
			conv.Response{ID: "x", Model: "m", Parts: []conv.Part{reasoning("still"), call("c", "f", "{}")}, Stop: conv.StopMaxTokens}},
		{"OpenRouter reasoning, content parts, Moonshot cached_tokens",
			`{"id":"o","model":"moonshot","choices":[{"message":{"content":[{"type":"text","text":"Hi "},{"type":"text","text":"there"}],"reasoning":"greet"},"finish_reason":"stop"}],
			  "usage":{"prompt_tokens":10,"completion_tokens":2,"cached_tokens":4}}`,
			conv.Response{ID: "o", Model: "moonshot", Parts: []conv.Part{reasoning("greet"), text("Hi there")}, Stop: conv.StopEnd,
				Usage: conv.Usage{Input: 6, CacheRead: 4, Output: 2}}},
		{"content filter with a refusal",
			`{"id":"r","model":"m","choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"content_filter"}]}`,
			conv.Response{ID: "r", Model: "m", Parts: []conv.Part{text("I can't help with that.")}, Stop: conv.StopRefusal}},
		{"OpenRouter cache writes are not input",
			`{"id":"w","model":"anthropic/claude","choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],
			  "usage":{"prompt_tokens":1000,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":0,"cache_write_tokens":900}}}`,
			conv.Response{ID: "w", Model: "anthropic/claude", Parts: []conv.Part{text("ok")}, Stop: conv.StopEnd,
				Usage: conv.Usage{Input: 100, CacheWrite: 900, Output: 5}}},
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
		`{"error":{"message":"quota exceeded","type":"insufficient_quota"}}`: "insufficient_quota: quota exceeded",
		`{"error":{"message":"busy","code":503}}`:                            "503: busy",
		`{"id":"x","choices":[]}`:                                            "no choices",
		`not json`:                                                           "chat response",
	} {
		_, err := Codec.DecodeResponse([]byte(body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeResponse(%s) = %v, want an error containing %q", body, err, want)
		}
	}
}

func TestEncodeResponse(t *testing.T) {
	pin(t)
	req := &conv.Request{From: Protocol, Model: "my-alias"}
	for _, c := range []struct {
		name string
		resp conv.Response
		want string
	}{
		{"reasoning, text blocks, tool calls, usage",
			conv.Response{ID: "msg_1", Model: "claude-sonnet-4-5",
				Parts: []conv.Part{
					{Kind: conv.PartReasoning, Text: "think", Signature: "sig"},
					text("Part one."), reasoning("more"), text("Part two."),
					call("toolu_1", "Read", `{"path":"a"}`), call("toolu_2", "Bash", `{ "cmd" : "ls" }`),
				},
				Stop:  conv.StopToolUse,
				Usage: conv.Usage{Input: 10, CacheRead: 1000, CacheWrite: 200, Output: 50, Reasoning: 20}},
			`{"id":"msg_1","object":"chat.completion","created":1700000000,"model":"my-alias",
			  "choices":[{"index":0,"message":{"role":"assistant","content":"Part one.\n\nPart two.","reasoning_content":"think\n\nmore",
			    "tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"Read","arguments":"{\"path\":\"a\"}"}},
			                  {"id":"toolu_2","type":"function","function":{"name":"Bash","arguments":"{\"cmd\":\"ls\"}"}}]},
			    "finish_reason":"tool_calls"}],
			  "usage":{"prompt_tokens":1210,"completion_tokens":50,"total_tokens":1260,"prompt_tokens_details":{"cached_tokens":1000},"completion_tokens_details":{"reasoning_tokens":20}}}`},
		{"no text: content null; no id: generated; max_tokens is length",
			conv.Response{Parts: []conv.Part{call("c", "f", "")}, Stop: conv.StopMaxTokens},
			`{"id":"chatcmpl-GEN","object":"chat.completion","created":1700000000,"model":"my-alias",
			  "choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"length"}],
			  "usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Codec.EncodeResponse(&c.resp, req)
			if err != nil {
				t.Fatal(err)
			}
			jsonEqual(t, got, c.want)
		})
	}
}

func TestFinishReason(t *testing.T) {
	for stop, want := range map[conv.StopReason]string{
		conv.StopEnd: "stop", conv.StopSequence: "stop", conv.StopPause: "stop", "": "stop",
		conv.StopMaxTokens: "length", conv.StopToolUse: "tool_calls", conv.StopRefusal: "content_filter",
	} {
		if got := finishReason(stop); got != want {
			t.Errorf("finishReason(%q) = %q, want %q", stop, got, want)
		}
	}
}

// A response survives DecodeResponse(EncodeResponse(r)), signatures aside.
func TestResponseRoundTrip(t *testing.T) {
	pin(t)
	r := conv.Response{ID: "chatcmpl-9", Model: "m",
		Parts: []conv.Part{reasoning("why"), text("Hello."), call("c1", "f", `{"a":1}`)},
		Stop:  conv.StopToolUse, Usage: conv.Usage{Input: 5, CacheRead: 3, Output: 9, Reasoning: 4}}
	body, err := Codec.EncodeResponse(&r, &conv.Request{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	back, err := Codec.DecodeResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*back, r) {
		t.Errorf("round trip\n got %+v\nwant %+v", *back, r)
	}
}
