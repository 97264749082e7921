package chat

import (
	"encoding/json"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// outMessage is one message sent upstream. Content is a string or
// []outPart, nil when the message has none (an assistant turn of tool
// calls only).
type outMessage struct {
	Role             string        `json:"role"`
	Content          any           `json:"content,omitempty"`
	ReasoningContent string        `json:"reasoning_content,omitempty"`
	ToolCalls        []outToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string        `json:"tool_call_id,omitempty"`
}

// AppendJSON writes a message of text (or no content) and no tool calls
// as Marshal would, the text copied a run at a time (conv.AppendString);
// any other message it leaves to Marshal.
func (m outMessage) AppendJSON(dst []byte) ([]byte, bool) {
	text, isText := m.Content.(string)
	if len(m.ToolCalls) > 0 || (m.Content != nil && !isText) {
		return dst, false
	}
	dst = append(dst, `{"role":`...)
	dst = conv.AppendString(dst, m.Role)
	if isText {
		dst = append(dst, `,"content":`...)
		dst = conv.AppendString(dst, text)
	}
	if m.ReasoningContent != "" {
		dst = append(dst, `,"reasoning_content":`...)
		dst = conv.AppendString(dst, m.ReasoningContent)
	}
	if m.ToolCallID != "" {
		dst = append(dst, `,"tool_call_id":`...)
		dst = conv.AppendString(dst, m.ToolCallID)
	}
	return append(dst, '}'), true
}

// outPart is one content part sent upstream.
type outPart struct {
	Type     string   `json:"type"`
	Text     string   `json:"text,omitempty"`
	ImageURL *outURL  `json:"image_url,omitempty"`
	File     *outFile `json:"file,omitempty"`
}

type outURL struct {
	URL string `json:"url"`
}

type outFile struct {
	FileData string `json:"file_data"`
	Filename string `json:"filename"`
}

// outToolCall is a tool call as Chat writes it in requests, responses and
// (with Index) stream chunks.
type outToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func toolCallOut(p *conv.Part) outToolCall {
	c := outToolCall{ID: p.CallID, Type: "function"}
	c.Function.Name, c.Function.Arguments = p.Name, conv.CanonicalArgs(p.Args)
	return c
}

// outTool is a function tool offered upstream.
type outTool struct {
	Type     string      `json:"type"`
	Function outFunction `json:"function"`
}

type outFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict,omitempty"`
}

// EncodeRequest writes r as a Chat Completions request.
func (codec) EncodeRequest(r *conv.Request) ([]byte, error) {
	if r.PreviousResponseID != "" {
		return nil, conv.Unsupported("previous_response_id (conversation state kept by the Responses API) cannot be sent to a Chat Completions endpoint; send the whole conversation (store=false) or use a Responses endpoint")
	}
	msgs, err := encodeMessages(r)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"model": r.Model, "messages": msgs}
	encodeTools(r, out)
	if r.MaxTokens != nil {
		if reasoningModel(r.Model) {
			out["max_completion_tokens"] = *r.MaxTokens
		} else {
			out["max_tokens"] = *r.MaxTokens
		}
	}
	setIf(out, "temperature", r.Temperature, r.Temperature != nil)
	setIf(out, "top_p", r.TopP, r.TopP != nil)
	setIf(out, "stop", r.Stop, len(r.Stop) > 0)
	effort := reasoningEffort(r.Reasoning)
	setIf(out, "reasoning_effort", effort, effort != "")
	setIf(out, "user", r.OpenAIUser(), r.OpenAIUser() != "")
	setIf(out, "prompt_cache_key", r.PromptCacheKey, r.PromptCacheKey != "")
	if r.Stream {
		out["stream"] = true
		out["stream_options"] = map[string]bool{"include_usage": true} // usage must not go missing
	}
	copyExtra(r, out)
	return conv.MarshalObject(out, r.SizeHint()), nil
}

func setIf(out map[string]any, key string, v any, ok bool) {
	if ok {
		out[key] = v
	}
}

// copyExtra writes back the members the decoder kept: all of them for a
// Chat client, the ones the OpenAI APIs share for a client of another
// protocol of its family (Responses). Members written above win.
func copyExtra(r *conv.Request, out map[string]any) {
	put := func(k string, v json.RawMessage) {
		if _, taken := out[k]; !taken {
			out[k] = v
		}
	}
	switch {
	case r.From == Protocol:
		for k, v := range r.Extra {
			put(k, v)
		}
	case conv.SameFamily(r.From, Protocol):
		for _, k := range conv.SharedOpenAI {
			if v, ok := r.Extra[k]; ok {
				put(k, v)
			}
		}
	}
}

// reasoningModel reports whether model looks like an OpenAI reasoning
// model (o1, o3, o4-mini, gpt-5…), which takes max_completion_tokens and
// rejects max_tokens. A provider prefix such as "openai/" is ignored.
func reasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if strings.HasPrefix(m, "gpt-5") {
		return true
	}
	return len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9'
}

// reasoningEffort is the reasoning_effort for r: the client's effort, or
// the level of its thinking budget. Chat takes minimal to high (and
// "none"); the levels above high fold into it.
func reasoningEffort(r conv.Reasoning) string {
	switch e := r.Effort; e {
	case "xhigh", "max":
		return "high"
	case "":
	default:
		return e
	}
	if r.Enabled {
		return conv.EffortForBudget(r.BudgetTokens)
	}
	return ""
}

// encodeTools writes tools, and tool_choice and parallel_tool_calls only
// when there are tools.
func encodeTools(r *conv.Request, out map[string]any) {
	if len(r.Tools) == 0 {
		return
	}
	tools := make([]outTool, len(r.Tools))
	for i := range r.Tools {
		tools[i] = toolOut(&r.Tools[i])
	}
	out["tools"] = tools
	switch tc := r.ToolChoice; tc.Mode {
	case conv.ChoiceAuto, conv.ChoiceNone:
		out["tool_choice"] = string(tc.Mode)
	case conv.ChoiceAny:
		out["tool_choice"] = "required"
	case conv.ChoiceTool:
		out["tool_choice"] = map[string]any{"type": "function", "function": map[string]string{"name": tc.Name}}
	}
	setIf(out, "parallel_tool_calls", r.ParallelToolCalls, r.ParallelToolCalls != nil)
}

// toolOut is t as a Chat function. A custom tool becomes a function of one
// string, its input format told in the description.
func toolOut(t *conv.Tool) outTool {
	f := outFunction{Name: t.Name, Description: t.Description, Parameters: conv.Schema(t.Schema), Strict: t.Strict}
	if t.Kind == conv.ToolCustom {
		f.Parameters = conv.CustomSchema
		if format := formatText(t.Format); format != "" {
			f.Description = strings.TrimSpace(f.Description + "\n\n" + format)
		}
	}
	return outTool{Type: "function", Function: f}
}

// formatText describes a custom tool's input format: its grammar when it
// has one, nothing for plain text, else the format itself.
func formatText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var f struct {
		Type, Syntax, Definition string
	}
	if json.Unmarshal(raw, &f) == nil {
		switch {
		case f.Type == "text":
			return ""
		case f.Definition != "":
			return "The input must follow this " + strings.TrimSpace(f.Syntax+" grammar") + ":\n" + f.Definition
		}
	}
	return "Input format: " + string(raw)
}

// encodeMessages writes System and Messages, dropping empty messages.
// Every system or developer text — the leading ones and those later in
// the conversation (Claude Code's environment block, a Codex developer
// note) — goes into one leading system message: many Chat servers refuse
// a system message anywhere else (docs/BEHAVIOUR.md#translation).
func encodeMessages(r *conv.Request) ([]outMessage, error) {
	msgs := make([]outMessage, 1, len(r.Messages)+1)
	system := []string{joinText(r.System)}
	for i := range r.Messages {
		m := &r.Messages[i]
		switch m.Role {
		case conv.RoleSystem:
			system = append(system, joinText(m.Parts))
		case conv.RoleAssistant:
			if am, ok := assistantOut(m.Parts); ok {
				msgs = append(msgs, am)
			}
		default:
			var err error
			if msgs, err = appendUser(msgs, m.Parts, nil); err != nil {
				return nil, err
			}
		}
	}
	if s := joinNonEmpty(system); s != "" {
		msgs[0] = outMessage{Role: "system", Content: s}
		return msgs, nil
	}
	return msgs[1:], nil
}

// joinNonEmpty joins the non-empty strings of ss by blank lines.
func joinNonEmpty(ss []string) string {
	var j joiner
	for _, s := range ss {
		j.add(s)
	}
	return j.String()
}

// joinText is the text parts of parts joined by blank lines.
func joinText(parts []conv.Part) string { return joinKind(parts, conv.PartText) }

// joinKind is the Text of the parts of kind k joined by blank lines.
func joinKind(parts []conv.Part, k conv.PartKind) string {
	var j joiner
	for i := range parts {
		if p := &parts[i]; p.Kind == k {
			j.add(p.Text)
		}
	}
	return j.String()
}

// joiner joins non-empty texts by blank lines. A single text, the usual
// case, is the result as it is: a 100 KB tool result is not copied.
type joiner struct {
	first string
	n     int
	b     strings.Builder
}

func (j *joiner) add(s string) {
	switch {
	case s == "":
		return
	case j.n == 0:
		j.first = s
	case j.n == 1:
		j.b.WriteString(j.first)
		fallthrough
	default:
		j.b.WriteString("\n\n")
		j.b.WriteString(s)
	}
	j.n++
}

func (j *joiner) String() string {
	if j.n <= 1 {
		return j.first
	}
	return j.b.String()
}

// assistantOut is an assistant turn: its text as content (left out, not
// "", when there is none) and its tool calls. The reasoning goes along as
// reasoning_content only with tool calls, where thinking models (DeepSeek,
// Kimi) require it back; signatures and encrypted reasoning never leave
// their protocol. ok is false for a turn with nothing to send.
func assistantOut(parts []conv.Part) (m outMessage, ok bool) {
	m.Role = "assistant"
	for i := range parts {
		if p := &parts[i]; p.Kind == conv.PartToolCall {
			m.ToolCalls = append(m.ToolCalls, toolCallOut(p))
		}
	}
	if text := joinText(parts); text != "" {
		m.Content = text
	}
	if len(m.ToolCalls) > 0 {
		m.ReasoningContent = joinKind(parts, conv.PartReasoning)
	}
	return m, m.Content != nil || len(m.ToolCalls) > 0
}

// appendUser writes a user turn. Its tool results come first, each as a
// tool message (Chat wants them right after the assistant turn that made
// the calls), then the held system messages, then one user message
// holding the images and documents of those results followed by the
// turn's own content.
func appendUser(msgs []outMessage, parts []conv.Part, held []outMessage) ([]outMessage, error) {
	var content []outPart
	for i := range parts {
		p := &parts[i]
		if p.Kind != conv.PartToolResult {
			continue
		}
		text, media, err := toolResultOut(p)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, outMessage{Role: "tool", ToolCallID: p.CallID, Content: text})
		content = append(content, media...)
	}
	msgs = append(msgs, held...)
	for i := range parts {
		p := &parts[i]
		if p.Kind == conv.PartToolResult {
			continue
		}
		op, ok, err := userPartOut(p)
		if err != nil {
			return nil, err
		}
		if ok {
			content = append(content, op)
		}
	}
	switch {
	case len(content) == 1 && content[0].Type == "text":
		msgs = append(msgs, outMessage{Role: "user", Content: content[0].Text})
	case len(content) > 0:
		msgs = append(msgs, outMessage{Role: "user", Content: content})
	}
	return msgs, nil
}

// toolResultOut is a tool result's text for its tool message and its
// other content (images) for the user message after it. A tool message
// is never empty: a result without text says so.
func toolResultOut(p *conv.Part) (text string, media []outPart, err error) {
	var b joiner
	for i := range p.Content {
		c := &p.Content[i]
		if c.Kind == conv.PartText || (c.Kind == conv.PartDocument && c.Text != "") {
			b.add(c.Text)
			continue
		}
		op, ok, err := userPartOut(c)
		if err != nil {
			return "", nil, err
		}
		if ok {
			media = append(media, op)
		}
	}
	text = b.String()
	switch {
	case text != "":
	case len(media) > 0:
		text = "(the tool returned the content in the next message)"
	case p.IsError:
		text = "(the tool failed without output)"
	default:
		text = "(no output)"
	}
	return text, media, nil
}

// userPartOut is one part of a user message; ok is false for a part that
// has nothing to send there.
func userPartOut(p *conv.Part) (op outPart, ok bool, err error) {
	switch p.Kind {
	case conv.PartText:
		return outPart{Type: "text", Text: p.Text}, p.Text != "", nil
	case conv.PartImage:
		url := p.URL
		if p.Data != "" {
			url = dataURI(p.MediaType, p.Data)
		}
		return outPart{Type: "image_url", ImageURL: &outURL{URL: url}}, url != "", nil
	case conv.PartDocument:
		return documentOut(p)
	}
	return outPart{}, false, nil
}

// documentOut is a document: a plain-text one as text, base64 data as a
// file part. Chat has no way to give a file by URL.
func documentOut(p *conv.Part) (outPart, bool, error) {
	switch {
	case p.Text != "":
		return outPart{Type: "text", Text: p.Text}, true, nil
	case p.Data != "":
		name := p.Filename
		if name == "" {
			name = "document"
			if p.MediaType == "application/pdf" {
				name += ".pdf"
			}
		}
		return outPart{Type: "file", File: &outFile{FileData: dataURI(p.MediaType, p.Data), Filename: name}}, true, nil
	case p.URL != "":
		return outPart{}, false, conv.Unsupported("a document given by URL (%s) cannot be sent to a Chat Completions endpoint; attach it as base64 data instead", p.URL)
	}
	return outPart{}, false, nil
}
