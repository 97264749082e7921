package chat

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// wireRequest is what DecodeRequest reads of a Chat request; the other
// top-level members go to Extra.
type wireRequest struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	Tools               []wireTool      `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	MaxCompletionTokens *int64          `json:"max_completion_tokens"`
	MaxTokens           *int64          `json:"max_tokens"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	Stop                json.RawMessage `json:"stop"`
	ReasoningEffort     string          `json:"reasoning_effort"`
	User                string          `json:"user"`
	PromptCacheKey      string          `json:"prompt_cache_key"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// modeled are the top-level members wireRequest reads.
var modeled = map[string]bool{
	"model": true, "messages": true, "tools": true, "tool_choice": true,
	"parallel_tool_calls": true, "max_completion_tokens": true, "max_tokens": true,
	"temperature": true, "top_p": true, "stop": true, "reasoning_effort": true,
	"user": true, "prompt_cache_key": true, "stream": true, "stream_options": true,
}

// wireTool is one entry of tools.
type wireTool struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	} `json:"function"`
	Custom *struct {
		Name string `json:"name"`
	} `json:"custom"`
}

// wirePart is one content part of a message.
type wirePart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	Refusal  string          `json:"refusal"`
	ImageURL json.RawMessage `json:"image_url"` // {"url":…} or, from some clients, the URL string
	File     *struct {
		FileData string `json:"file_data"`
		FileID   string `json:"file_id"`
		Filename string `json:"filename"`
	} `json:"file"`
}

// DecodeRequest reads a Chat Completions request body in one pass
// (conv.Reader; bench/NOTES.md, "Request decoding").
func (codec) DecodeRequest(body []byte) (*conv.Request, error) {
	d := &requestDecoder{rd: conv.NewSharedReader(body)}
	if err := d.read(); err != nil {
		return nil, fmt.Errorf("chat request: %w", err)
	}
	w := &d.w
	if len(d.msgs) == 0 {
		return nil, errors.New("chat request: messages is empty")
	}
	r := &conv.Request{
		From: Protocol, Model: w.Model, Stream: w.Stream,
		ParallelToolCalls: w.ParallelToolCalls,
		MaxTokens:         w.MaxCompletionTokens,
		Temperature:       w.Temperature, TopP: w.TopP,
		User: w.User, PromptCacheKey: w.PromptCacheKey,
		IncludeUsage: w.StreamOptions != nil && w.StreamOptions.IncludeUsage,
	}
	if r.MaxTokens == nil {
		r.MaxTokens = w.MaxTokens
	}
	if w.ReasoningEffort != "" {
		r.Reasoning = conv.Reasoning{Effort: w.ReasoningEffort, Enabled: w.ReasoningEffort != "none"}
	}
	var err error
	if r.Stop, err = decodeStop(w.Stop); err != nil {
		return nil, err
	}
	if r.ToolChoice, err = decodeToolChoice(w.ToolChoice); err != nil {
		return nil, err
	}
	decodeTools(w.Tools, r)
	if err := decodeMessages(d.msgs, r); err != nil {
		return nil, err
	}
	if err := r.CheckCalls(); err != nil {
		return nil, fmt.Errorf("chat request: %w", err)
	}
	r.Extra = d.extra
	return r, nil
}

// decodeStop reads stop: a string or an array of strings.
func decodeStop(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		// one pass: raw was checked where it was read
		if err := conv.NewReader(raw).String(&s); err != nil || s == "" {
			return nil, err
		}
		return []string{s}, nil
	}
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil {
		return nil, fmt.Errorf("chat request: stop: %w", err)
	}
	return ss, nil
}

// decodeToolChoice reads "auto", "none", "required" or a named function.
// Other objects (allowed_tools, …) leave the choice unset.
func decodeToolChoice(raw json.RawMessage) (conv.ToolChoice, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return conv.ToolChoice{}, nil
	}
	if raw[0] == '"' {
		var s string
		_ = json.Unmarshal(raw, &s)
		switch s {
		case "auto":
			return conv.ToolChoice{Mode: conv.ChoiceAuto}, nil
		case "none":
			return conv.ToolChoice{Mode: conv.ChoiceNone}, nil
		case "required":
			return conv.ToolChoice{Mode: conv.ChoiceAny}, nil
		}
		return conv.ToolChoice{}, fmt.Errorf("chat request: unknown tool_choice %s", raw)
	}
	var o struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		return conv.ToolChoice{}, fmt.Errorf("chat request: tool_choice: %w", err)
	}
	if o.Type == "function" && o.Function.Name != "" {
		return conv.ToolChoice{Mode: conv.ChoiceTool, Name: o.Function.Name}, nil
	}
	return conv.ToolChoice{}, nil
}

// decodeTools reads the function tools; other kinds are named in Dropped.
func decodeTools(tools []wireTool, r *conv.Request) {
	for _, t := range tools {
		if f := t.Function; f != nil && (t.Type == "function" || t.Type == "") {
			r.Tools = append(r.Tools, conv.Tool{
				Name: f.Name, Description: f.Description,
				Schema: conv.Schema(f.Parameters), Strict: f.Strict,
			})
			continue
		}
		what := "tool " + t.Type
		if t.Custom != nil {
			what += " " + t.Custom.Name
		}
		r.Dropped = append(r.Dropped, what)
	}
}

// decodeMessages fills System and Messages. Leading system and developer
// messages are System; each run of tool messages becomes one user message
// of tool results.
func decodeMessages(msgs []*reqMessage, r *conv.Request) error {
	leading, lastTool := true, false
	for i, m := range msgs {
		isTool := m.Role == "tool"
		var err error
		switch m.Role {
		case "system", "developer":
			err = decodeSystem(m, leading, r)
		case "user":
			leading = false
			err = appendMessage(r, conv.RoleUser, m, userParts)
		case "assistant":
			leading = false
			err = appendMessage(r, conv.RoleAssistant, m, assistantParts)
		case "tool":
			leading = false
			err = decodeToolMessage(m, lastTool, r)
		default:
			err = fmt.Errorf("role %q is not supported", m.Role)
		}
		if err != nil {
			return fmt.Errorf("chat request: messages[%d]: %w", i, err)
		}
		lastTool = isTool
	}
	return nil
}

// decodeSystem puts a system or developer message into System while no
// other message came before it, else into a RoleSystem message.
func decodeSystem(m *reqMessage, leading bool, r *conv.Request) error {
	parts, err := m.content.parts(false)
	if err != nil || len(parts) == 0 {
		return err
	}
	if leading {
		r.System = append(r.System, parts...)
	} else {
		r.Messages = append(r.Messages, conv.Message{Role: conv.RoleSystem, Parts: parts})
	}
	return nil
}

// appendMessage adds a message of role with the parts read from m, when
// there are any.
func appendMessage(r *conv.Request, role conv.Role, m *reqMessage, read func(*reqMessage) ([]conv.Part, error)) error {
	parts, err := read(m)
	if err != nil || len(parts) == 0 {
		return err
	}
	r.Messages = append(r.Messages, conv.Message{Role: role, Parts: parts})
	return nil
}

func userParts(m *reqMessage) ([]conv.Part, error) { return m.content.parts(true) }

// assistantParts reads an assistant turn: its reasoning first, then its
// text (and refusal), then its tool calls.
func assistantParts(m *reqMessage) ([]conv.Part, error) {
	var parts []conv.Part
	if r := m.reasoningText(); r != "" {
		parts = append(parts, conv.Part{Kind: conv.PartReasoning, Text: r})
	}
	text, err := m.content.parts(false)
	if err != nil {
		return nil, err
	}
	parts = append(parts, text...)
	if m.Refusal != nil && *m.Refusal != "" {
		parts = append(parts, conv.Part{Kind: conv.PartText, Text: *m.Refusal})
	}
	for i := range m.ToolCalls {
		c := &m.ToolCalls[i]
		parts = append(parts, conv.Part{
			Kind: conv.PartToolCall, CallID: c.ID, Name: c.name(),
			Args: conv.CanonicalArgs(c.args()),
		})
	}
	return parts, nil
}

// decodeToolMessage turns a tool message into a tool result, in the user
// message of the tool messages right before it when there are any.
func decodeToolMessage(m *reqMessage, lastTool bool, r *conv.Request) error {
	if m.ToolCallID == "" {
		return errors.New("tool message without tool_call_id")
	}
	content, err := m.content.parts(true)
	if err != nil {
		return err
	}
	res := conv.Part{Kind: conv.PartToolResult, CallID: m.ToolCallID, Content: content}
	if n := len(r.Messages); lastTool && n > 0 {
		r.Messages[n-1].Parts = append(r.Messages[n-1].Parts, res)
		return nil
	}
	r.Messages = append(r.Messages, conv.Message{Role: conv.RoleUser, Parts: []conv.Part{res}})
	return nil
}

// parts is a message's content as parts: a string or an array of parts.
// Only text and refusal parts are allowed unless media is true (user and
// tool messages). Empty text is left out.
func (c *chatContent) parts(media bool) ([]conv.Part, error) {
	return c.Parts(func(wps []wirePart) ([]conv.Part, error) {
		parts := make([]conv.Part, 0, len(wps))
		for i := range wps {
			p, err := decodePart(&wps[i], media)
			if err != nil {
				return nil, err
			}
			if p.Kind != 0 {
				parts = append(parts, p)
			}
		}
		return parts, nil
	})
}

// contentParts reads a message's content (of a response): a string or an array of parts.
// Only text and refusal parts are allowed unless media is true (user and
// tool messages). Empty text is left out.
func contentParts(raw json.RawMessage, media bool) ([]conv.Part, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		// one pass: raw was checked where it was read
		if err := conv.NewReader(raw).String(&s); err != nil || s == "" {
			return nil, err
		}
		return []conv.Part{{Kind: conv.PartText, Text: s}}, nil
	}
	var wps []wirePart
	if err := json.Unmarshal(raw, &wps); err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	parts := make([]conv.Part, 0, len(wps))
	for i := range wps {
		p, err := decodePart(&wps[i], media)
		if err != nil {
			return nil, err
		}
		if p.Kind != 0 {
			parts = append(parts, p)
		}
	}
	return parts, nil
}

// decodePart reads one content part; a zero Part is an empty one.
func decodePart(wp *wirePart, media bool) (conv.Part, error) {
	switch {
	case wp.Type == "text" || wp.Type == "refusal":
		text := wp.Text + wp.Refusal
		if text == "" {
			return conv.Part{}, nil
		}
		return conv.Part{Kind: conv.PartText, Text: text}, nil
	case wp.Type == "image_url" && media:
		return decodeImage(wp.ImageURL)
	case wp.Type == "file" && media && wp.File != nil:
		return decodeFile(wp)
	case wp.Type == "input_audio":
		return conv.Part{}, conv.Unsupported("audio input (input_audio content parts) cannot be translated to another protocol; send text or images")
	}
	return conv.Part{}, conv.Unsupported("content part type %q cannot be translated to another protocol here", wp.Type)
}

// decodeImage reads an image_url: a base64 data URI or a URL.
func decodeImage(raw json.RawMessage) (conv.Part, error) {
	url := rawText(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var o struct {
			URL string `json:"url"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			return conv.Part{}, fmt.Errorf("image_url: %w", err)
		}
		url = o.URL
	}
	if url == "" {
		return conv.Part{}, errors.New("image_url without url")
	}
	if mt, data, ok := parseDataURI(url); ok {
		return conv.Part{Kind: conv.PartImage, MediaType: mt, Data: data}, nil
	}
	return conv.Part{Kind: conv.PartImage, URL: url}, nil
}

// decodeFile reads a file part given inline. file_data is a data URI; a
// bare base64 string is taken as a PDF, the one kind OpenAI accepts.
func decodeFile(wp *wirePart) (conv.Part, error) {
	f := wp.File
	if f.FileData == "" {
		if f.FileID != "" {
			return conv.Part{}, conv.Unsupported("a file given by file_id (uploaded to OpenAI) cannot be translated to another protocol; send it inline as file_data")
		}
		return conv.Part{}, errors.New("file part without file_data")
	}
	mt, data, ok := parseDataURI(f.FileData)
	if !ok {
		mt, data = "application/pdf", f.FileData
	}
	return conv.Part{Kind: conv.PartDocument, MediaType: mt, Data: data, Filename: f.Filename}, nil
}
