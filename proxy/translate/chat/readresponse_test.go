package chat

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/internal/jsontest"
)

var responseSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello \"x\"\n"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1200,"completion_tokens":9,"total_tokens":1209}}`,
	`{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"Read","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}]}`,
	`{"choices":[{"message":{"content":[{"type":"text","text":"a"}],"reasoning_content":"r","refusal":null}}],"usage":{"prompt_tokens_details":{"cached_tokens":5,"cache_write_tokens":2},"completion_tokens_details":{"reasoning_tokens":3},"prompt_cache_hit_tokens":4,"cached_tokens":1}}`,
	`{"error":{"message":"bad","type":"invalid_request_error","code":429}}`,
	`{"choices":[{"message":{"role":"a"}},{"message":{"role":"b"}}],"choices":[{"finish_reason":"x"}],"choices":[{},{"message":{"content":"y"}}]}`,
	`{"choices":null,"usage":null,"error":null}`,
	`{"Choices":[{"Message":{"Content":"folded"}}],"USAGE":{"PROMPT_TOKENS":2}}`,
	`{"usage":{"prompt_tokens":1.5}}`,
	`{"choices":"no"}`,
	`{"id":1}`,
	`null`,
	`[]`,
	`{"choices":[]} trailing`,
	`{"choices":[{"message":{"reasoning":"thought","tool_calls":[{"index":0,"function":{"name":"f","arguments":"{}"}}],"tool_calls":null}}]}`,
	"{\"choices\":[{\"message\":{\"content\":\"\\ud800 \xff\"}}]}",
}

// readResponse gives what json.Unmarshal gave, or an error where it did.
func checkReadResponse(t *testing.T, body []byte) {
	jsontest.CheckRead(t, "readResponse", body, readResponse)
}

func TestReadResponseIsUnmarshal(t *testing.T) {
	for _, s := range responseSeeds {
		checkReadResponse(t, []byte(s))
	}
}

func FuzzReadResponse(f *testing.F) {
	for _, s := range responseSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkReadResponse(t, b) })
}
