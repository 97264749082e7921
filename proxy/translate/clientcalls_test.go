package translate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/anthropic"
	"github.com/ccmesh/ccmesh/proxy/translate/chat"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/proxy/translate/responses"
)

// Tool calls a Responses upstream makes reach a client of each protocol as
// that client can run them (docs/BEHAVIOUR.md#translation): a search xAI
// runs itself, streamed as a completed custom_tool_call, is not a call at
// all for a client that never declared it, and the stop follows the text;
// a namespaced call reaches a client that declared the plain function by
// that function's name. The streams reduce xai--xai-x-search-tool and
// openai--openai-tool-search.1 of the recorded corpus.
func TestUpstreamCallsForTheClient(t *testing.T) {
	hosted := []string{
		`{"type":"response.created","response":{"id":"resp_x","model":"grok-4","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"call_id":"xs_call_1","input":"","name":"x_keyword_search","type":"custom_tool_call","id":"ctc_1","status":"in_progress"}}`,
		`{"type":"response.custom_tool_call_input.delta","item_id":"ctc_1","output_index":0,"delta":"{\"query\":\"from:xai\"}"}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"call_id":"xs_call_1","input":"{\"query\":\"from:xai\"}","name":"x_keyword_search","type":"custom_tool_call","id":"ctc_1","status":"completed"}}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","status":"in_progress","content":[]}}`,
		`{"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"Latest posts."}`,
		`{"type":"response.output_item.done","output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Latest posts."}]}}`,
		`{"type":"response.completed","response":{"id":"resp_x","model":"grok-4","status":"completed","output":[` +
			`{"call_id":"xs_call_1","input":"{\"query\":\"from:xai\"}","name":"x_keyword_search","type":"custom_tool_call","id":"ctc_1","status":"completed"},` +
			`{"id":"msg_1","type":"message","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Latest posts."}]}],` +
			`"usage":{"input_tokens":10,"output_tokens":5}}}`,
	}
	namespaced := []string{
		`{"type":"response.created","response":{"id":"resp_n","model":"gpt-5.4","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","status":"in_progress","arguments":"","call_id":"call_w","name":"get_weather","namespace":"get_weather"}}`,
		`{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":0,"arguments":"{\"location\":\"SF\"}"}`,
		`{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"location\":\"SF\"}","call_id":"call_w","name":"get_weather","namespace":"get_weather"}}`,
		`{"type":"response.completed","response":{"id":"resp_n","model":"gpt-5.4","status":"completed","output":[` +
			`{"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"location\":\"SF\"}","call_id":"call_w","name":"get_weather","namespace":"get_weather"}],` +
			`"usage":{"input_tokens":10,"output_tokens":5}}}`,
	}
	weather := conv.Tool{Kind: conv.ToolFunction, Name: "get_weather", Schema: conv.EmptySchema}
	nsWeather := conv.Tool{Kind: conv.ToolFunction, Name: conv.NamespacedName("get_weather", "get_weather"), Namespace: "get_weather", Schema: conv.EmptySchema}
	search := conv.Tool{Kind: conv.ToolCustom, Name: "x_keyword_search", Schema: conv.CustomSchema}
	for _, c := range []struct {
		name   string
		stream []string
		client conv.Protocol
		tools  []conv.Tool
		want   string
	}{
		{"hosted search, Claude client", hosted, anthropic.Protocol, nil, `text "Latest posts." | stop end_turn`},
		{"hosted search, Chat client", hosted, chat.Protocol, []conv.Tool{weather}, `text "Latest posts." | stop end_turn`},
		{"hosted search, Responses client that declared no such custom tool", hosted, responses.Protocol, nil, `text "Latest posts." | stop end_turn`},
		{"search declared as a custom tool, Responses client", hosted, responses.Protocol, []conv.Tool{search},
			`call x_keyword_search {"input":"{\"query\":\"from:xai\"}"} | text "Latest posts." | stop tool_use`},
		{"namespaced call, Claude client that declared the plain function", namespaced, anthropic.Protocol, []conv.Tool{weather},
			`call get_weather {"location":"SF"} | stop tool_use`},
		{"namespaced call, Chat client that declared nothing", namespaced, chat.Protocol, nil,
			`call get_weather {"location":"SF"} | stop tool_use`},
		{"namespaced call, Responses client that declared the namespace", namespaced, responses.Protocol, []conv.Tool{nsWeather},
			`call get_weather__get_weather {"location":"SF"} | stop tool_use`},
	} {
		req := &conv.Request{From: c.client, Model: "m", Tools: c.tools}
		t.Run(c.name+", streamed", func(t *testing.T) {
			if got := summarize(streamThrough(t, c.stream, req)); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
		t.Run(c.name+", not streamed", func(t *testing.T) {
			if got := summarize(bodyThrough(t, c.stream[len(c.stream)-1], req)); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// streamThrough decodes a Responses upstream's events, encodes them for
// req's client and reads the client's stream back with its own codec.
func streamThrough(t *testing.T, lines []string, req *conv.Request) *conv.Response {
	t.Helper()
	dec, enc := Codec(responses.Protocol).StreamDecoder(), Codec(req.From).StreamEncoder(req)
	var out []byte
	emit := func(ev conv.Event) { out = enc.Encode(out, ev) }
	for _, l := range lines {
		var v struct{ Type string }
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		if err := dec.Decode(v.Type, []byte(l), emit); err != nil {
			t.Fatalf("upstream decode: %v", err)
		}
	}
	if !dec.End(emit) {
		t.Fatal("the upstream stream did not end")
	}
	back, c := Codec(req.From).StreamDecoder(), conv.NewCollect()
	for _, block := range strings.Split(strings.TrimSpace(string(out)), "\n\n") {
		var name, data string
		for _, line := range strings.Split(block, "\n") {
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				data = v
			}
		}
		if err := back.Decode(name, []byte(data), c.Add); err != nil {
			t.Fatalf("the client's stream does not read back: %v\n%s", err, out)
		}
	}
	if !back.End(c.Add) {
		t.Fatalf("the client's stream is not complete:\n%s", out)
	}
	resp, _ := c.Response()
	return resp
}

// bodyThrough does the same for a non-streamed answer: the response
// object of response.completed.
func bodyThrough(t *testing.T, completed string, req *conv.Request) *conv.Response {
	t.Helper()
	var ev struct {
		Response json.RawMessage `json:"response"`
	}
	if err := json.Unmarshal([]byte(completed), &ev); err != nil {
		t.Fatal(err)
	}
	resp, err := Codec(responses.Protocol).DecodeResponse(ev.Response)
	if err != nil {
		t.Fatal(err)
	}
	body, err := Codec(req.From).EncodeResponse(resp, req)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Codec(req.From).DecodeResponse(body)
	if err != nil {
		t.Fatalf("the client's body does not read back: %v\n%s", err, body)
	}
	return back
}

func summarize(r *conv.Response) string {
	var s []string
	for _, p := range r.Parts {
		switch p.Kind {
		case conv.PartToolCall:
			s = append(s, fmt.Sprintf("call %s %s", p.Name, p.Args))
		case conv.PartText:
			s = append(s, fmt.Sprintf("text %q", p.Text))
		}
	}
	return strings.Join(append(s, "stop "+string(r.Stop)), " | ")
}
