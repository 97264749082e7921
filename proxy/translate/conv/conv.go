// Package conv is the neutral model of a conversation that protocol
// translation goes through (docs/BEHAVIOUR.md#translation). Each protocol
// has one codec (the sibling packages anthropic, chat and responses) that
// decodes its requests, responses and stream events into this model and
// encodes them back out of it, so six translations are three codecs.
//
// The model keeps what a translation must carry (docs/BEHAVIOUR.md#translation
// lists it) and nothing protocol-specific beyond that: members a decoder
// does not model travel in Request.Extra and are written back only by the
// codec of the protocol they came from.
package conv

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Protocol is an API, spelled as the proxy, the store and the log spell
// it. Each codec package declares its own (anthropic.Protocol, …) with
// its Spec (spec.go); package translate's Specs is the table of them.
type Protocol string

// Request is a client's request in the neutral model.
type Request struct {
	From   Protocol // the protocol it was decoded from
	Model  string
	Stream bool
	// System is the leading instructions: Anthropic system, the Chat
	// system/developer messages before the first other message, Responses
	// instructions and its leading system/developer input messages. Text
	// parts only, in order. Later system or developer messages stay in
	// Messages with RoleSystem.
	System   []Part
	Messages []Message
	Tools    []Tool
	// ToolChoice is the zero value when the client did not say.
	ToolChoice ToolChoice
	// ParallelToolCalls: nil when not said. Anthropic's
	// disable_parallel_tool_use is its negation.
	ParallelToolCalls *bool
	MaxTokens         *int64 // max_tokens / max_completion_tokens / max_output_tokens
	Temperature       *float64
	TopP              *float64
	Stop              []string // stop_sequences / stop
	Reasoning         Reasoning
	User              string // Anthropic metadata.user_id, OpenAI user
	PromptCacheKey    string // OpenAI prompt_cache_key
	// IncludeUsage: a Chat client asked for stream_options.include_usage.
	IncludeUsage bool
	// PreviousResponseID is Responses' server-side history; no other
	// protocol has one, so encoders of the others refuse it (Unsupported).
	PreviousResponseID string
	// Extra holds the top-level members the decoder does not model, raw.
	// Only the codec of From writes them back; the two OpenAI codecs also
	// copy the members both APIs define the same way (SharedOpenAI).
	Extra map[string]json.RawMessage
	// Dropped names what the decoder left out because no target can take
	// it (hosted tools such as web_search), for a debug log line.
	Dropped []string
}

// MaxOpenAIUser is the longest end-user id the OpenAI APIs take.
const MaxOpenAIUser = 64

// OpenAIUser is r.User as an OpenAI upstream takes it: left out when it is
// longer than MaxOpenAIUser (Claude Code's metadata.user_id is a JSON
// document of several ids, which no upstream of another protocol needs).
func (r *Request) OpenAIUser() string {
	if len(r.User) > MaxOpenAIUser {
		return ""
	}
	return r.User
}

// SharedOpenAI are top-level members Chat Completions and Responses
// define the same way; Extra entries with these names cross between them.
var SharedOpenAI = []string{"metadata", "service_tier", "safety_identifier", "store", "seed"}

// Role is who a message is from. Tool results are parts of a user message
// (the Anthropic way); encoders for Chat and Responses lift them out.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system" // a system or developer message after the leading ones
)

// Message is one turn.
type Message struct {
	Role  Role
	Parts []Part
}

// PartKind says which fields of a Part are meaningful.
type PartKind uint8

const (
	PartText       PartKind = iota + 1 // Text
	PartImage                          // MediaType+Data (base64) or URL
	PartDocument                       // MediaType+Data or URL, Filename; Text for a plain-text document
	PartToolCall                       // CallID, Name, Args
	PartToolResult                     // CallID, Content, IsError
	PartReasoning                      // Text (the reasoning or its summary), Signature, Redacted, Encrypted, ItemID
)

func (k PartKind) String() string {
	switch k {
	case PartText:
		return "text"
	case PartImage:
		return "image"
	case PartDocument:
		return "document"
	case PartToolCall:
		return "tool_call"
	case PartToolResult:
		return "tool_result"
	case PartReasoning:
		return "reasoning"
	}
	return fmt.Sprintf("part(%d)", k)
}

// Part is one piece of a message.
type Part struct {
	Kind PartKind
	Text string
	// Images and documents: base64 Data with its MediaType, or a URL.
	MediaType, Data, URL, Filename string
	// Tool calls and results: CallID pairs a result with its call.
	CallID, Name string
	// Args is a tool call's arguments as canonical JSON object text
	// (CanonicalArgs). A call to a custom tool (Tool.Kind ToolCustom)
	// carries its free-form input as {"input":"…"}.
	Args string
	// Namespace and Custom say how an upstream made a tool call: as a
	// function of a Responses namespace (Name is then the flat
	// NamespacedName), or as a Responses custom_tool_call. A client's
	// encoder resolves them against what the client declared
	// (Request.ClientCall).
	Namespace string
	Custom    bool
	Content   []Part // a tool result's content: text and image parts
	IsError   bool
	// Reasoning. Signature (Anthropic thinking) and Redacted (Anthropic
	// redacted_thinking data) are valid only towards Anthropic; Encrypted
	// (Responses encrypted_content) and ItemID only towards Responses.
	// Encoders of other protocols leave them out (docs/BEHAVIOUR.md#translation).
	Signature, Redacted, Encrypted, ItemID string
	// GeminiSignature is a Gemini thoughtSignature, on the part Gemini put
	// it on (a function call, a text or a thought part); valid only towards
	// Gemini, and written only by its codec. A tool call that reaches a
	// client of another protocol loses it; the Gemini codec's signature
	// store gives it back by the call's id.
	GeminiSignature string
	// CacheControl is an Anthropic cache_control marker, raw; written
	// back only towards Anthropic.
	CacheControl json.RawMessage
}

// ToolKind is the kind of a tool definition.
type ToolKind uint8

const (
	ToolFunction ToolKind = iota // a JSON-schema function
	ToolCustom                   // Responses "custom": free-form string input, optional grammar Format
)

// Tool is one tool the model may call.
type Tool struct {
	Kind        ToolKind
	Name        string
	Description string
	// Schema is the parameters' JSON schema; decoders turn a null or
	// missing schema into EmptySchema.
	Schema json.RawMessage
	Strict *bool
	// Format is a custom tool's input format (a grammar), raw.
	Format json.RawMessage
	// Namespace is the Responses namespace a function came from; Name is
	// then NamespacedName(Namespace, its own name).
	Namespace    string
	CacheControl json.RawMessage
}

// EmptySchema is the schema of a tool that takes no arguments.
var EmptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// CustomSchema is how a custom tool is offered to a protocol without
// custom tools: a function of one string.
var CustomSchema = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string","description":"the tool's input, as free-form text"}},"required":["input"]}`)

// NamespacedName is the flat name of function fn of namespace ns.
func NamespacedName(ns, fn string) string { return ns + "__" + fn }

// ToolChoice is what the client said about calling tools.
type ToolChoice struct {
	Mode ToolChoiceMode
	Name string // for ChoiceTool
}

type ToolChoiceMode string

const (
	ChoiceUnset ToolChoiceMode = ""
	ChoiceAuto  ToolChoiceMode = "auto"
	ChoiceAny   ToolChoiceMode = "any" // OpenAI "required"
	ChoiceNone  ToolChoiceMode = "none"
	ChoiceTool  ToolChoiceMode = "tool" // a named tool
)

// Reasoning is the client's request for thinking. The zero value means
// the client did not ask.
type Reasoning struct {
	// Effort: "minimal", "low", "medium", "high", "xhigh" or "max" as the
	// client spelled it; "" when the client gave a budget or nothing.
	Effort string
	// BudgetTokens is Anthropic's thinking budget; 0 when not given.
	BudgetTokens int64
	// Enabled: the client turned thinking on (Anthropic thinking type
	// "enabled"/"adaptive", any OpenAI effort other than "none").
	Enabled bool
	// Summary is Responses' reasoning.summary ("auto", "concise", …).
	Summary string
}

// Response is a complete (non-streamed) answer.
type Response struct {
	ID, Model string
	// Parts: text, reasoning and tool-call parts in output order.
	Parts        []Part
	Stop         StopReason
	StopSequence string
	Usage        Usage
}

// StopReason is why the model stopped, in Anthropic's words.
type StopReason string

const (
	StopEnd       StopReason = "end_turn"
	StopMaxTokens StopReason = "max_tokens"
	StopToolUse   StopReason = "tool_use"
	StopSequence  StopReason = "stop_sequence"
	StopRefusal   StopReason = "refusal"
	StopPause     StopReason = "pause_turn"
)

// Usage is token counts with Anthropic's semantics: Input excludes the
// tokens read from or written to the prompt cache, Output includes
// Reasoning. OpenAI's prompt_tokens / input_tokens is PromptTotal.
type Usage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning int64
}

// PromptTotal is every input token, cached or not (OpenAI's prompt_tokens).
func (u Usage) PromptTotal() int64 { return u.Input + u.CacheRead + u.CacheWrite }

// IsZero reports whether no count is known.
func (u Usage) IsZero() bool { return u == Usage{} }

// CheckCalls refuses a request whose tools or tool calls no protocol can
// carry: a tool without a name, a call without its id or name, a result
// without the id of its call. Every API requires them, but not every
// decoder reads them as required, and a translation would hand the
// upstream a request it must refuse. Each codec's DecodeRequest ends with
// it, so a client's bad request is the client's 400 whatever its protocol.
func (r *Request) CheckCalls() error {
	for i, t := range r.Tools {
		if t.Name == "" {
			return fmt.Errorf("tools[%d]: a tool without a name", i)
		}
	}
	for i, m := range r.Messages {
		for _, p := range m.Parts {
			switch {
			case p.Kind == PartToolCall && (p.CallID == "" || p.Name == ""):
				return fmt.Errorf("messages[%d]: a tool call without its id or name", i)
			case p.Kind == PartToolResult && p.CallID == "":
				return fmt.Errorf("messages[%d]: a tool result without the id of its call", i)
			}
		}
	}
	return nil
}

// UnsupportedError is a request the target protocol cannot carry (a
// document towards Chat, previous_response_id towards anything but
// Responses). The proxy answers it as a 400 naming the endpoint.
type UnsupportedError struct{ What string }

func (e *UnsupportedError) Error() string { return e.What }

// Unsupported returns an *UnsupportedError.
func Unsupported(format string, args ...any) error {
	return &UnsupportedError{What: fmt.Sprintf(format, args...)}
}

// IsUnsupported reports whether err is, or wraps, an *UnsupportedError.
func IsUnsupported(err error) bool {
	var u *UnsupportedError
	return errors.As(err, &u)
}

// Codec is one protocol's half of every translation.
type Codec interface {
	Protocol() Protocol
	// DecodeRequest reads a client's request body. A body it cannot use
	// is an error the proxy answers with 400. The Request shares body's
	// memory (NewSharedReader): body must not change while it is in use.
	DecodeRequest(body []byte) (*Request, error)
	// EncodeRequest writes r as this protocol's request body, with
	// r.Model and r.Stream as they are (the proxy sets both).
	EncodeRequest(r *Request) ([]byte, error)
	// DecodeResponse reads an upstream's non-streamed 2xx body.
	DecodeResponse(body []byte) (*Response, error)
	// EncodeResponse writes resp as this protocol's non-streamed body for
	// a client that sent req (tool kinds and names are looked up there).
	EncodeResponse(resp *Response, req *Request) ([]byte, error)
	// StreamDecoder reads an upstream's event stream.
	StreamDecoder() StreamDecoder
	// StreamEncoder writes a stream for a client that sent req.
	StreamEncoder(req *Request) StreamEncoder
}

// Anthropic thinking signatures travel to a Responses client inside a
// reasoning item's encrypted_content, marked with these prefixes, so that
// the client's next turn (which sends the item back) can give the thinking
// back to an Anthropic upstream with its signature. The Responses request
// decoder turns a marked value back into Part.Signature or Part.Redacted;
// the Responses request encoder never sends a marked value upstream.
const (
	SignaturePrefix = "ccmesh.anthropic.signature."
	RedactedPrefix  = "ccmesh.anthropic.redacted."
)
