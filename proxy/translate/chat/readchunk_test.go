package chat

import (
	"testing"

	"github.com/ccmesh/ccmesh/proxy/translate/internal/jsontest"
)

var chunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
	`{"id":"c","choices":[{"index":0,"delta":{"content":"Hello \"x\"\n\u2028"},"logprobs":null,"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think","reasoning":{"text":"r"}}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Read","arguments":""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"custom":{"name":"apply_patch","input":"*** Begin"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":null}`,
	`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4}}}`,
	`{"choices":[{"index":0,"delta":{"content":"x"},"usage":{"prompt_tokens":1,"cached_tokens":1}}]}`,
	`{"error":{"message":"overloaded","type":"server_error","code":"529"}}`,
	`{"choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"}}],"choices":[{"delta":null}]}`,
	`{"Choices":[{"Delta":{"Content":"folded","TOOL_CALLS":null}}],"ID":"x"}`,
	`{"choices":[{"index":1.5}]}`,
	`{"choices":[{"index":"0"}]}`,
	`{"choices":[{"delta":{"content":5}}]}`,
	`{"choices":[{"delta":[]}]}`,
	`{"choices":{"0":{}}}`,
	`null`,
	`[]`,
	`"x"`,
	`{"choices":[]} trailing`,
	`{"choices":[{"delta":{"tool_calls":[{"index":null,"function":null,"custom":null}]}}]}`,
	"{\"choices\":[{\"delta\":{\"content\":\"\\ud800 \xff\"}}]}",
}

// readChunk gives what json.Unmarshal gave, or an error where it did.
func checkReadChunk(t *testing.T, data []byte) { jsontest.CheckRead(t, "readChunk", data, readChunk) }

func TestReadChunkIsUnmarshal(t *testing.T) {
	for _, s := range chunkSeeds {
		checkReadChunk(t, []byte(s))
	}
}

func FuzzReadChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkReadChunk(t, b) })
}
