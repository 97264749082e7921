package gemini

import (
	"encoding/json"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// The wire shapes follow the Gemini API reference (ai.google.dev/api/caching
// for Content and Part, ai.google.dev/api/generate-content for the request,
// GenerateContentResponse and UsageMetadata). Members are camelCase, as the
// API writes them and Gemini CLI sends them.

// wireContent is a Content: a role ("user" or "model") and its parts.
type wireContent struct {
	Role  string     `json:"role,omitempty"`
	Parts []wirePart `json:"parts"`
}

// wirePart is a Part. Text is a pointer so that an empty text part (the
// carrier of a signature alone, at the end of a stream) is still written.
type wirePart struct {
	Text             *string     `json:"text,omitempty"`
	Thought          bool        `json:"thought,omitempty"`
	ThoughtSignature string      `json:"thoughtSignature,omitempty"`
	InlineData       *wireBlob   `json:"inlineData,omitempty"`
	FileData         *wireFile   `json:"fileData,omitempty"`
	FunctionCall     *wireCall   `json:"functionCall,omitempty"`
	FunctionResponse *wireResult `json:"functionResponse,omitempty"`
}

type wireBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type wireFile struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// wireCall is a FunctionCall; args is a JSON object.
type wireCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// wireResult is a FunctionResponse: response is a JSON object; parts are
// the multimodal parts of a result (inline images).
type wireResult struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
	Parts    []wirePart      `json:"parts,omitempty"`
	read     resultText      // the request decoder's reading of Response, which it leaves empty
}

// wireTool is a Tool; only functionDeclarations is modelled, the hosted
// tools (googleSearch, codeExecution, urlContext, …) are left out.
type wireTool struct {
	FunctionDeclarations []wireFunction `json:"functionDeclarations,omitempty"`
}

type wireFunction struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	Parameters           json.RawMessage `json:"parameters,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type wireToolConfig struct {
	FunctionCallingConfig *wireCallingConfig `json:"functionCallingConfig,omitempty"`
}

type wireCallingConfig struct {
	Mode                 string   `json:"mode,omitempty"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

type wireThinking struct {
	IncludeThoughts *bool  `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int64 `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
}

// wireResponse is a GenerateContentResponse: a whole answer, or one chunk
// of a stream.
type wireResponse struct {
	Candidates     []wireCandidate `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *wireUsage `json:"usageMetadata"`
	ModelVersion  string     `json:"modelVersion"`
	ResponseID    string     `json:"responseId"`
	Error         *wireError `json:"error"`
}

type wireCandidate struct {
	Content      *wireContent `json:"content"`
	FinishReason string       `json:"finishReason"`
	Index        int          `json:"index"`
}

// wireUsage is a UsageMetadata.
type wireUsage struct {
	Prompt     int64 `json:"promptTokenCount"`
	Candidates int64 `json:"candidatesTokenCount"`
	Cached     int64 `json:"cachedContentTokenCount"`
	Thoughts   int64 `json:"thoughtsTokenCount"`
	ToolPrompt int64 `json:"toolUsePromptTokenCount"`
	Total      int64 `json:"totalTokenCount"`
}

// usageIn reads usage in the neutral meaning. promptTokenCount counts
// every input token, cached ones included (cachedContentTokenCount is
// part of it), and toolUsePromptTokenCount is input too; so Input is the
// prompt without the cache reads. candidatesTokenCount leaves the
// thoughts out, and Gemini bills thoughtsTokenCount as output: Output is
// both, Reasoning the thoughts alone (conv.Usage's Output includes
// Reasoning). See ai.google.dev/gemini-api/docs/thinking (pricing) and
// the UsageMetadata reference.
func usageIn(w *wireUsage) conv.Usage {
	if w == nil {
		return conv.Usage{}
	}
	cached := min(max(w.Cached, 0), w.Prompt)
	return conv.Usage{
		Input:     w.Prompt - cached + w.ToolPrompt,
		CacheRead: cached,
		Output:    w.Candidates + w.Thoughts,
		Reasoning: w.Thoughts,
	}
}

// outUsage is a UsageMetadata as a Gemini client reads it.
type outUsage struct {
	Prompt     int64 `json:"promptTokenCount"`
	Candidates int64 `json:"candidatesTokenCount"`
	Cached     int64 `json:"cachedContentTokenCount,omitempty"`
	Thoughts   int64 `json:"thoughtsTokenCount,omitempty"`
	Total      int64 `json:"totalTokenCount"`
}

// usageOut writes u the Gemini way: the prompt with every cached token,
// the candidates without the thoughts.
func usageOut(u conv.Usage) *outUsage {
	reasoning := min(u.Reasoning, u.Output)
	o := &outUsage{
		Prompt: u.PromptTotal(), Candidates: u.Output - reasoning,
		Cached: u.CacheRead, Thoughts: reasoning,
	}
	o.Total = o.Prompt + u.Output
	return o
}

type wireError struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Status  string            `json:"status"`
	Details []json.RawMessage `json:"details,omitempty"`
}
