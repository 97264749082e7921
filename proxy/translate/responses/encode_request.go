package responses

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// wireRequest is the body EncodeRequest writes, in the order members are
// written; Extra members follow.
type wireRequest struct {
	Model              string          `json:"model,omitempty"`
	Instructions       string          `json:"instructions,omitempty"`
	Input              []any           `json:"input,omitempty"`
	Tools              []any           `json:"tools,omitempty"`
	ToolChoice         any             `json:"tool_choice,omitempty"`
	ParallelToolCalls  *bool           `json:"parallel_tool_calls,omitempty"`
	MaxOutputTokens    *int64          `json:"max_output_tokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"top_p,omitempty"`
	Reasoning          *wireReasoning  `json:"reasoning,omitempty"`
	User               string          `json:"user,omitempty"`
	PromptCacheKey     string          `json:"prompt_cache_key,omitempty"`
	PreviousResponseID string          `json:"previous_response_id,omitempty"`
	Store              json.RawMessage `json:"store,omitempty"`
	Include            []string        `json:"include,omitempty"`
	Stream             bool            `json:"stream,omitempty"`
}

type wireReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// Input items as EncodeRequest writes them.
type (
	inMessage struct {
		Type    string      `json:"type"`
		Role    string      `json:"role"`
		Content []inContent `json:"content"`
	}
	inContent struct {
		Type     string `json:"type"`
		Text     string `json:"text,omitempty"`
		ImageURL string `json:"image_url,omitempty"`
		FileData string `json:"file_data,omitempty"`
		FileURL  string `json:"file_url,omitempty"`
		Filename string `json:"filename,omitempty"`
	}
	inReasoning struct {
		Type             string        `json:"type"`
		ID               string        `json:"id,omitempty"`
		Summary          []summaryText `json:"summary"`
		EncryptedContent string        `json:"encrypted_content"`
	}
	inFunctionCall struct {
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Namespace string `json:"namespace,omitempty"`
		Arguments string `json:"arguments"`
	}
	inCustomCall struct {
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Namespace string `json:"namespace,omitempty"`
		Input     string `json:"input"`
	}
	inCallOutput struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output any    `json:"output"`
	}
)

// Tool definitions as EncodeRequest writes them.
type (
	functionTool struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      bool            `json:"strict"`
	}
	customTool struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Format      json.RawMessage `json:"format,omitempty"`
	}
	namespaceTool struct {
		Type        string `json:"type"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Tools       []any  `json:"tools"`
	}
	namedChoice struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
)

var falseJSON = json.RawMessage("false")

// EncodeRequest writes r as a Responses request. Stop sequences have no
// Responses equivalent and are left out.
func (codec) EncodeRequest(r *conv.Request) ([]byte, error) {
	if r == nil {
		return nil, errors.New("responses: no request to encode")
	}
	own := r.From == Protocol
	w := wireRequest{
		Model:              r.Model,
		Instructions:       joinTexts(r.System),
		MaxOutputTokens:    r.MaxTokens,
		Temperature:        r.Temperature,
		TopP:               r.TopP,
		User:               r.OpenAIUser(),
		PromptCacheKey:     r.PromptCacheKey,
		PreviousResponseID: r.PreviousResponseID,
		Stream:             r.Stream,
	}
	e := requestEncoder{r: r, tools: toolIndex(r.Tools), nested: own}
	w.Input = e.input()
	w.Tools = e.toolDefs()
	if len(w.Tools) > 0 {
		w.ToolChoice = e.toolChoice()
		w.ParallelToolCalls = r.ParallelToolCalls
	}
	w.Reasoning = reasoningOf(r)
	extra := extraFor(r)
	if !own {
		if _, ok := extra["store"]; !ok {
			w.Store = falseJSON
		}
		if r.Reasoning.Enabled {
			w.Include = []string{"reasoning.encrypted_content"}
		}
	}
	return appendExtra(conv.Marshal(w), extra), nil
}

// joinTexts joins the texts of parts with a blank line.
func joinTexts(parts []conv.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Kind != conv.PartText || p.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// reasoningOf is the reasoning member: the effort the client asked for
// (a budget turned into an effort), with an automatic summary for clients
// of other protocols so that thinking reaches them. A Responses client's
// own settings go back as they were.
func reasoningOf(r *conv.Request) *wireReasoning {
	if r.From == Protocol {
		if r.Reasoning.Effort == "" && r.Reasoning.Summary == "" {
			return nil
		}
		return &wireReasoning{Effort: r.Reasoning.Effort, Summary: r.Reasoning.Summary}
	}
	if !r.Reasoning.Enabled {
		if r.Reasoning.Effort == "none" {
			return &wireReasoning{Effort: "none"}
		}
		return nil
	}
	effort := r.Reasoning.Effort
	if effort == "" {
		effort = conv.EffortForBudget(r.Reasoning.BudgetTokens)
	}
	if effort == "xhigh" || effort == "max" {
		effort = "high"
	}
	return &wireReasoning{Effort: effort, Summary: "auto"}
}

// extraFor is the Extra members to write: all of a Responses client's, the
// shared ones of a client of another protocol of its family (Chat), none
// of the codec's own notes.
func extraFor(r *conv.Request) map[string]json.RawMessage {
	switch {
	case r.From == Protocol:
		var out map[string]json.RawMessage
		for k, v := range r.Extra {
			if strings.HasPrefix(k, privateExtraPrefix) {
				continue
			}
			if out == nil {
				out = make(map[string]json.RawMessage, len(r.Extra))
			}
			out[k] = v
		}
		return out
	case conv.SameFamily(r.From, Protocol):
		var out map[string]json.RawMessage
		for _, k := range conv.SharedOpenAI {
			if v, ok := r.Extra[k]; ok {
				if out == nil {
					out = make(map[string]json.RawMessage)
				}
				out[k] = v
			}
		}
		return out
	}
	return nil
}

// appendExtra adds the members of extra (sorted by name) to the JSON
// object body.
func appendExtra(body []byte, extra map[string]json.RawMessage) []byte {
	if len(extra) == 0 {
		return body
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := body[:len(body)-1] // drop the closing brace
	for _, k := range keys {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, conv.Marshal(k)...)
		out = append(out, ':')
		out = append(out, extra[k]...)
	}
	return append(out, '}')
}

// requestEncoder writes the input items and tools of one request.
type requestEncoder struct {
	r      *conv.Request
	tools  map[string]toolInfo
	nested bool // namespaces are given back (the client spoke Responses)
	items  []any
	// customCalls are the call ids of calls to custom tools, whose results
	// are custom_tool_call_output items.
	customCalls map[string]bool
}

// input is the input items of r's messages.
func (e *requestEncoder) input() []any {
	e.findCustomCalls()
	for _, m := range e.r.Messages {
		e.message(m)
	}
	return e.items
}

// findCustomCalls records the ids of calls to custom tools.
func (e *requestEncoder) findCustomCalls() {
	for _, m := range e.r.Messages {
		for _, p := range m.Parts {
			if p.Kind == conv.PartToolCall && e.tools[p.Name].custom {
				if e.customCalls == nil {
					e.customCalls = make(map[string]bool)
				}
				e.customCalls[p.CallID] = true
			}
		}
	}
}

// message appends the items of one message: its content parts gathered in
// message items, reasoning, tool calls and tool results as items of their
// own, in order.
func (e *requestEncoder) message(m conv.Message) {
	role, textType := "user", "input_text"
	switch m.Role {
	case conv.RoleAssistant:
		role, textType = "assistant", "output_text"
	case conv.RoleSystem:
		role = "developer"
	}
	var content []inContent
	flush := func() {
		if len(content) > 0 {
			e.items = append(e.items, inMessage{Type: "message", Role: role, Content: content})
			content = nil
		}
	}
	for _, p := range m.Parts {
		switch p.Kind {
		case conv.PartText:
			if p.Text != "" {
				content = append(content, inContent{Type: textType, Text: p.Text})
			}
		case conv.PartImage, conv.PartDocument:
			if m.Role != conv.RoleAssistant {
				if c, ok := mediaContent(p); ok {
					content = append(content, c)
				}
			}
		case conv.PartReasoning:
			flush()
			if it, ok := reasoningItem(p); ok {
				e.items = append(e.items, it)
			}
		case conv.PartToolCall:
			flush()
			e.items = append(e.items, e.callItem(p))
		case conv.PartToolResult:
			flush()
			e.items = append(e.items, e.resultItem(p))
		}
	}
	flush()
}

// mediaContent is an image or document as an input_image / input_file.
func mediaContent(p conv.Part) (inContent, bool) {
	if p.Kind == conv.PartImage {
		switch {
		case p.Data != "":
			return inContent{Type: "input_image", ImageURL: dataURI(p.MediaType, p.Data)}, true
		case p.URL != "":
			return inContent{Type: "input_image", ImageURL: p.URL}, true
		}
		return inContent{}, false
	}
	c := inContent{Type: "input_file", Filename: p.Filename}
	switch {
	case p.Data != "":
		c.FileData = dataURI(p.MediaType, p.Data)
	case p.URL != "":
		c.FileURL = p.URL
		return c, true
	case p.Text != "":
		c.FileData = dataURI("text/plain", base64.StdEncoding.EncodeToString([]byte(p.Text)))
	default:
		return c, false
	}
	if c.Filename == "" {
		c.Filename = "document" + docExtension(p)
	}
	return c, true
}

// docExtension is the file name extension of an unnamed inline document
// (the API wants a file name with file_data).
func docExtension(p conv.Part) string {
	switch {
	case p.Data == "" || isPlainText(p.MediaType):
		return ".txt"
	case p.MediaType == "application/pdf":
		return ".pdf"
	}
	return ""
}

// reasoningItem is a reasoning part as an input item: only reasoning an
// upstream encrypted can go back to one (a signature or redacted data is
// an Anthropic upstream's, and plain reasoning text cannot be verified).
func reasoningItem(p conv.Part) (inReasoning, bool) {
	if p.Encrypted == "" || strings.HasPrefix(p.Encrypted, conv.SignaturePrefix) || strings.HasPrefix(p.Encrypted, conv.RedactedPrefix) {
		return inReasoning{}, false
	}
	return inReasoning{Type: "reasoning", ID: p.ItemID, Summary: summaryOf(p.Text), EncryptedContent: p.Encrypted}, true
}

// callItem is a tool call as a function_call or custom_tool_call item.
func (e *requestEncoder) callItem(p conv.Part) any {
	info := e.tools[p.Name]
	ns, name := "", p.Name
	if e.nested {
		ns, name = info.callName(p.Name)
	}
	if info.custom {
		return inCustomCall{Type: "custom_tool_call", CallID: p.CallID, Name: name, Namespace: ns, Input: conv.CustomInput(p.Args)}
	}
	return inFunctionCall{Type: "function_call", CallID: p.CallID, Name: name, Namespace: ns, Arguments: conv.CanonicalArgs(p.Args)}
}

// resultItem is a tool result as a function_call_output (or
// custom_tool_call_output) item: its text, or an array when it holds
// images or documents.
func (e *requestEncoder) resultItem(p conv.Part) inCallOutput {
	typ := "function_call_output"
	if e.customCalls[p.CallID] {
		typ = "custom_tool_call_output"
	}
	return inCallOutput{Type: typ, CallID: p.CallID, Output: toolOutput(p.Content)}
}

// toolOutput is a tool result's output: its texts one per line when it is
// all text, else an array of input_text / input_image / input_file.
func toolOutput(content []conv.Part) any {
	media := false
	for _, c := range content {
		if c.Kind == conv.PartImage || c.Kind == conv.PartDocument {
			media = true
		}
	}
	if !media {
		var b strings.Builder
		for _, c := range content {
			if c.Kind != conv.PartText || c.Text == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		}
		return b.String()
	}
	out := make([]inContent, 0, len(content))
	for _, c := range content {
		switch c.Kind {
		case conv.PartText:
			if c.Text != "" {
				out = append(out, inContent{Type: "input_text", Text: c.Text})
			}
		case conv.PartImage, conv.PartDocument:
			if m, ok := mediaContent(c); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// toolDefs is the tools member: functions (strict only when the client
// said so — Responses makes an unset strict true, which rejects ordinary
// schemas), custom tools, and, for a Responses client, its namespaces
// gathered again where the first of their functions stood.
func (e *requestEncoder) toolDefs() []any {
	if len(e.r.Tools) == 0 {
		return nil
	}
	out := make([]any, 0, len(e.r.Tools))
	var groups map[string]*namespaceTool
	for _, t := range e.r.Tools {
		def := toolDef(t, t.Name)
		if !e.nested || t.Namespace == "" {
			out = append(out, def)
			continue
		}
		g := groups[t.Namespace]
		if g == nil {
			if groups == nil {
				groups = make(map[string]*namespaceTool)
			}
			g = &namespaceTool{Type: "namespace", Name: t.Namespace, Description: e.namespaceDescription(t.Namespace)}
			groups[t.Namespace] = g
			out = append(out, g)
		}
		_, fn := e.tools[t.Name].callName(t.Name)
		g.Tools = append(g.Tools, toolDef(t, fn))
	}
	return out
}

// toolDef is one function or custom tool definition named name.
func toolDef(t conv.Tool, name string) any {
	if t.Kind == conv.ToolCustom {
		return customTool{Type: "custom", Name: name, Description: t.Description, Format: t.Format}
	}
	strict := t.Strict != nil && *t.Strict
	return functionTool{Type: "function", Name: name, Description: t.Description, Parameters: conv.Schema(t.Schema), Strict: strict}
}

// namespaceDescription is the description the client gave namespace ns
// (the API requires one; its name stands in when there is none).
func (e *requestEncoder) namespaceDescription(ns string) string {
	var desc map[string]string
	if raw, ok := e.r.Extra[nsDescKey]; ok && json.Unmarshal(raw, &desc) == nil && desc[ns] != "" {
		return desc[ns]
	}
	return ns
}

// toolChoice is the tool_choice member (nil when the client did not say).
func (e *requestEncoder) toolChoice() any {
	tc := e.r.ToolChoice
	switch tc.Mode {
	case conv.ChoiceAuto:
		return "auto"
	case conv.ChoiceNone:
		return "none"
	case conv.ChoiceAny:
		return "required"
	case conv.ChoiceTool:
		info := e.tools[tc.Name]
		name := tc.Name
		if e.nested {
			_, name = info.callName(tc.Name)
		}
		if info.custom {
			return namedChoice{Type: "custom", Name: name}
		}
		return namedChoice{Type: "function", Name: name}
	}
	return nil
}
