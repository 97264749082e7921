package anthropic

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

const (
	// defaultMaxTokens is max_tokens (which the API requires) when the
	// client set no limit.
	defaultMaxTokens = 16384
	// thinkingHeadroom is what the default max_tokens leaves for the
	// answer above the thinking budget, and maxDefaultTokens how far the
	// default grows for it (the smallest output limit of Claude models
	// that think).
	thinkingHeadroom = 4096
	maxDefaultTokens = 32000
	// minBudget is the smallest thinking budget the API takes.
	minBudget = 1024
)

type outRequest struct {
	Model         string          `json:"model"`
	MaxTokens     int64           `json:"max_tokens"`
	System        []outBlock      `json:"system,omitempty"`
	Messages      []outTurn       `json:"messages"`
	Tools         []outTool       `json:"tools,omitempty"`
	ToolChoice    *outToolChoice  `json:"tool_choice,omitempty"`
	Thinking      json.RawMessage `json:"thinking,omitempty"`
	OutputConfig  json.RawMessage `json:"output_config,omitempty"`
	Temperature   *float64        `json:"temperature,omitempty"`
	TopP          *float64        `json:"top_p,omitempty"`
	StopSequences []string        `json:"stop_sequences,omitempty"`
	Metadata      *outMetadata    `json:"metadata,omitempty"`
	Stream        bool            `json:"stream,omitempty"`
}

type outTurn struct {
	Role    string     `json:"role"`
	Content []outBlock `json:"content"`
}

type outTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Strict       *bool           `json:"strict,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
}

type outToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse *bool  `json:"disable_parallel_tool_use,omitempty"`
}

// thinking is the thinking member as planned; Type "" when off.
type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int64  `json:"budget_tokens,omitempty"`
}

type outMetadata struct {
	UserID string `json:"user_id"`
}

// modeled are the members outRequest writes; Extra entries with these
// names are never written over them. An Anthropic client's thinking and
// output_config are rebuilt from what Extra kept of them; its metadata is
// written from Extra, so it is not here.
var modeled = map[string]bool{
	"model": true, "max_tokens": true, "system": true, "messages": true, "tools": true,
	"tool_choice": true, "thinking": true, "output_config": true, "temperature": true,
	"top_p": true, "stop_sequences": true, "stream": true,
}

// EncodeRequest writes r as a Messages API request body.
func (codec) EncodeRequest(r *conv.Request) ([]byte, error) {
	if r.PreviousResponseID != "" {
		return nil, conv.Unsupported("the Anthropic Messages API keeps no conversation on the server, so previous_response_id cannot be followed here; send the whole conversation instead of previous_response_id (for Codex: disable server-side storage)")
	}
	own := r.From == Protocol
	msgs, err := turns(r.Messages)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, conv.Unsupported("the Anthropic Messages API needs at least one user or assistant message and the request has none")
	}
	out := outRequest{
		Model: r.Model, Stream: r.Stream, Messages: msgs,
		System: systemBlocks(r.System), StopSequences: stops(r.Stop),
	}
	if len(r.Tools) > 0 {
		out.Tools = tools(r.Tools, own)
		out.ToolChoice = toolChoice(r)
	}
	th := planThinking(r, &out)
	if th.Type == "" {
		out.Temperature, out.TopP = r.Temperature, r.TopP
		if !own && out.Temperature != nil && out.TopP != nil {
			out.TopP = nil // recent Claude models take one or the other
		}
	}
	if !own {
		if th.Type != "" {
			out.Thinking = conv.Marshal(th)
		}
		if r.User != "" {
			out.Metadata = &outMetadata{UserID: r.User}
		}
		return conv.Marshal(out), nil
	}
	// An Anthropic client's own members come back: the rest of thinking
	// and output_config, the effort, and Extra.
	if th.Type != "" {
		out.Thinking = withMembers(r.Extra["thinking"], map[string]any{"type": th.Type, "budget_tokens": th.BudgetTokens})
	}
	var effort map[string]any
	if r.Reasoning.Effort != "" {
		effort = map[string]any{"effort": r.Reasoning.Effort}
	}
	out.OutputConfig = withMembers(r.Extra["output_config"], effort)
	if r.User != "" && r.Extra["metadata"] == nil {
		out.Metadata = &outMetadata{UserID: r.User}
	}
	extra := r.Extra
	if th.Type == "" {
		extra = withoutThinkingEdits(extra)
	}
	return appendExtra(conv.Marshal(out), extra), nil
}

// withMembers is the JSON object rest with the members set (zero values
// left out); nil when the result is empty.
func withMembers(rest json.RawMessage, set map[string]any) json.RawMessage {
	obj := map[string]json.RawMessage{}
	if !isNull(rest) && json.Unmarshal(rest, &obj) != nil {
		obj = map[string]json.RawMessage{}
	}
	for k, v := range set {
		if v != "" && v != int64(0) {
			obj[k] = conv.Marshal(v)
		}
	}
	if len(obj) == 0 {
		return nil
	}
	return conv.Marshal(obj)
}

// withoutThinkingEdits leaves the clear_thinking_… edits out of an
// Anthropic client's context_management when thinking is off (the client
// turned it on, but the history cannot carry it): the API refuses them
// without thinking. extra itself is not changed.
func withoutThinkingEdits(extra map[string]json.RawMessage) map[string]json.RawMessage {
	raw, ok := extra["context_management"]
	if !ok || !bytes.Contains(raw, []byte("clear_thinking")) {
		return extra
	}
	var cm map[string]json.RawMessage
	var edits []json.RawMessage
	if json.Unmarshal(raw, &cm) != nil || json.Unmarshal(cm["edits"], &edits) != nil {
		return extra
	}
	kept := edits[:0]
	for _, e := range edits {
		var edit struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(e, &edit) != nil || !strings.HasPrefix(edit.Type, "clear_thinking") {
			kept = append(kept, e)
		}
	}
	out := maps.Clone(extra)
	delete(out, "context_management")
	if len(kept) > 0 {
		cm["edits"] = conv.Marshal(kept)
	} else {
		delete(cm, "edits")
	}
	if len(cm) > 0 {
		out["context_management"] = conv.Marshal(cm)
	}
	return out
}

// systemBlocks is the system prompt as text blocks, cache markers kept.
func systemBlocks(parts []conv.Part) []outBlock {
	var out []outBlock
	for _, p := range parts {
		if p.Kind == conv.PartText && p.Text != "" {
			out = append(out, outBlock{Type: "text", Text: ptr(p.Text), CacheControl: p.CacheControl})
		}
	}
	return out
}

func stops(s []string) []string {
	var out []string
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			out = append(out, v)
		}
	}
	return out
}

// turns writes the messages the way the API wants them: roles alternate
// (consecutive messages of one role merge), a later system message is a
// user's "System: …" text, tool results lead their user message, and
// empty messages are left out.
func turns(msgs []conv.Message) ([]outTurn, error) {
	out := make([]outTurn, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		role := "user"
		var blocks []outBlock
		var err error
		switch m.Role {
		case conv.RoleSystem:
			blocks = systemTurn(m.Parts)
		case conv.RoleAssistant:
			role = "assistant"
			blocks, err = partBlocks(m.Parts, conv.RoleAssistant)
		default:
			blocks, err = partBlocks(m.Parts, conv.RoleUser)
		}
		if err != nil {
			return nil, err
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
		} else {
			out = append(out, outTurn{Role: role, Content: blocks})
		}
	}
	for i := range out {
		if out[i].Role == "user" {
			slices.SortStableFunc(out[i].Content, resultsFirst)
		}
	}
	return out, nil
}

// resultsFirst orders tool_result blocks before all others, keeping each
// group's order: the API wants a user turn's tool results first.
func resultsFirst(a, b outBlock) int {
	ra, rb := a.Type == "tool_result", b.Type == "tool_result"
	switch {
	case ra && !rb:
		return -1
	case rb && !ra:
		return 1
	}
	return 0
}

// systemTurn is a mid-conversation system message as one user text block.
func systemTurn(parts []conv.Part) []outBlock {
	var texts []string
	var cc json.RawMessage
	for _, p := range parts {
		if p.Kind == conv.PartText && p.Text != "" {
			texts = append(texts, p.Text)
			if p.CacheControl != nil {
				cc = p.CacheControl
			}
		}
	}
	if len(texts) == 0 {
		return nil
	}
	return []outBlock{{Type: "text", Text: ptr("System: " + strings.Join(texts, "\n\n")), CacheControl: cc}}
}

func partBlocks(parts []conv.Part, role conv.Role) ([]outBlock, error) {
	out := make([]outBlock, 0, len(parts))
	for i := range parts {
		b, ok, err := partBlock(&parts[i], role)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, b)
		}
	}
	return out, nil
}

// partBlock writes one part; ok is false for a part the API must not get:
// empty text, a tool call outside an assistant turn, a tool result outside
// a user turn, and reasoning without an Anthropic signature (the API
// rejects a thinking block it did not sign).
func partBlock(p *conv.Part, role conv.Role) (b outBlock, ok bool, err error) {
	switch p.Kind {
	case conv.PartText:
		return outBlock{Type: "text", Text: ptr(p.Text), CacheControl: p.CacheControl}, p.Text != "", nil
	case conv.PartImage:
		src := mediaSource(p)
		return outBlock{Type: "image", Source: src, CacheControl: p.CacheControl}, src != nil, nil
	case conv.PartDocument:
		return documentBlock(p)
	case conv.PartToolCall:
		b = outBlock{Type: "tool_use", ID: p.CallID, Name: p.Name, Input: json.RawMessage(conv.CanonicalArgs(p.Args)), CacheControl: p.CacheControl}
		return b, role == conv.RoleAssistant, nil
	case conv.PartToolResult:
		content, err := partBlocks(p.Content, conv.RoleUser)
		b = outBlock{Type: "tool_result", ToolUseID: p.CallID, Content: content, IsError: p.IsError, CacheControl: p.CacheControl}
		return b, role == conv.RoleUser, err
	case conv.PartReasoning:
		if role != conv.RoleAssistant {
			return b, false, nil
		}
		if p.Signature != "" {
			return outBlock{Type: "thinking", Thinking: ptr(p.Text), Signature: ptr(p.Signature)}, true, nil
		}
		return outBlock{Type: "redacted_thinking", Data: p.Redacted}, p.Redacted != "", nil
	}
	return b, false, nil
}

// mediaSource is an image's or a document's source: base64 data, a data
// URL taken apart, or a URL; nil when there is none.
func mediaSource(p *conv.Part) *outSource {
	switch {
	case p.Data != "":
		return &outSource{Type: "base64", MediaType: p.MediaType, Data: p.Data}
	case strings.HasPrefix(p.URL, "data:"):
		mt, data, ok := parseDataURL(p.URL)
		if !ok {
			return nil
		}
		return &outSource{Type: "base64", MediaType: cmp.Or(p.MediaType, mt), Data: data}
	case p.URL != "":
		return &outSource{Type: "url", URL: p.URL}
	}
	return nil
}

// parseDataURL splits data:<media type>;base64,<data>.
func parseDataURL(u string) (mediaType, data string, ok bool) {
	head, data, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	if !ok {
		return "", "", false
	}
	mediaType, ok = strings.CutSuffix(head, ";base64")
	return mediaType, data, ok && data != ""
}

// documentBlock writes a document: PDF (base64 or URL) or plain text. A
// base64 text/* document is sent as plain text; other media types are
// ones the API cannot read.
func documentBlock(p *conv.Part) (outBlock, bool, error) {
	b := outBlock{Type: "document", Title: p.Filename, CacheControl: p.CacheControl}
	src := mediaSource(p)
	switch {
	case src == nil && p.Text != "":
		b.Source = &outSource{Type: "text", MediaType: "text/plain", Data: p.Text}
	case src == nil:
		return b, false, nil
	case src.Type == "url":
		b.Source = src
	case src.MediaType == "" || src.MediaType == "application/pdf":
		src.MediaType = "application/pdf"
		b.Source = src
	case strings.HasPrefix(src.MediaType, "text/"):
		text, err := base64.StdEncoding.DecodeString(src.Data)
		if err != nil {
			return b, false, fmt.Errorf("document %q: its base64 data does not decode: %w", p.Filename, err)
		}
		b.Source = &outSource{Type: "text", MediaType: "text/plain", Data: string(text)}
	default:
		return b, false, conv.Unsupported("the Anthropic Messages API reads PDF and plain-text documents only, not %s (%q); convert the file to PDF or text, or use an endpoint of another protocol", src.MediaType, p.Filename)
	}
	return b, true, nil
}

// tools writes the tool definitions. A custom (free-form) tool becomes a
// function of one string, its format appended to the description. strict
// goes only to a client's own kind of upstream (elsewhere it needs a beta).
func tools(ts []conv.Tool, own bool) []outTool {
	out := make([]outTool, 0, len(ts))
	for i := range ts {
		t := &ts[i]
		o := outTool{Name: t.Name, Description: t.Description, InputSchema: conv.Schema(t.Schema), CacheControl: t.CacheControl}
		if t.Kind == conv.ToolCustom {
			o.Description, o.InputSchema = customDescription(t), conv.CustomSchema
		}
		if own {
			o.Strict = t.Strict
		}
		out = append(out, o)
	}
	return out
}

// customDescription is a custom tool's description with its input format.
func customDescription(t *conv.Tool) string {
	f := formatText(t.Format)
	switch {
	case f == "":
		return t.Description
	case t.Description == "":
		return f
	}
	return t.Description + "\n\n" + f
}

// formatText says in words what a custom tool's format asks of its input:
// the grammar when there is one, nothing for free text.
func formatText(raw json.RawMessage) string {
	if isNull(raw) {
		return ""
	}
	var f struct {
		Type, Syntax, Definition string
	}
	if json.Unmarshal(raw, &f) != nil {
		return "Input format: " + string(raw)
	}
	switch {
	case f.Definition != "":
		return fmt.Sprintf("The input must follow this %s grammar:\n%s", cmp.Or(f.Syntax, "formal"), f.Definition)
	case f.Type == "text" || f.Type == "":
		return ""
	}
	var c bytes.Buffer
	if json.Compact(&c, raw) != nil {
		return "Input format: " + string(raw)
	}
	return "Input format: " + c.String()
}

// toolChoice writes the choice; a parallel-calls setting rides on it (with
// type auto when the client chose nothing).
func toolChoice(r *conv.Request) *outToolChoice {
	tc := &outToolChoice{Type: "auto"}
	switch r.ToolChoice.Mode {
	case conv.ChoiceUnset:
		if r.ParallelToolCalls == nil {
			return nil
		}
	case conv.ChoiceNone:
		return &outToolChoice{Type: "none"}
	case conv.ChoiceAny:
		tc.Type = "any"
	case conv.ChoiceTool:
		tc.Type, tc.Name = "tool", r.ToolChoice.Name
	}
	if r.ParallelToolCalls != nil {
		tc.DisableParallelToolUse = ptr(!*r.ParallelToolCalls)
	}
	return tc
}

// wantsThinking: the client asked for thinking. From an Anthropic client
// only its thinking member says so (its output_config.effort also applies
// without thinking); from the others any budget or effort but "none".
func wantsThinking(r *conv.Request) bool {
	if r.From == Protocol {
		return r.Reasoning.Enabled
	}
	e := r.Reasoning.Effort
	return r.Reasoning.Enabled || r.Reasoning.BudgetTokens > 0 || (e != "" && e != "none")
}

// planThinking sets max_tokens and says what thinking to ask for.
//
// Thinking is left off when the request cannot carry it: the tool choice
// forces a tool (the API refuses thinking then), or an assistant turn
// calls a tool without signed thinking before the call (the API refuses
// such a history with thinking on — it happens when earlier turns came
// from another upstream).
//
// The budget is the client's, else its effort's (conv.BudgetForEffort),
// else medium's, at least 1024. max_tokens must exceed it. A limit the
// client set is kept and the budget lowered to half of it (at least 1024;
// no thinking when even that does not fit); the default limit instead
// grows to budget+4096, at most 32000, before that rule applies. An
// Anthropic client's adaptive thinking (enabled, no budget) stays adaptive.
func planThinking(r *conv.Request, out *outRequest) thinking {
	limit := int64(0)
	if r.MaxTokens != nil && *r.MaxTokens > 0 {
		limit = *r.MaxTokens
	}
	if !wantsThinking(r) || forcesTool(out.ToolChoice) || unsignedToolCall(out.Messages) {
		out.MaxTokens = cmp.Or(limit, defaultMaxTokens)
		return thinking{}
	}
	if r.From == Protocol && r.Reasoning.BudgetTokens <= 0 {
		out.MaxTokens = cmp.Or(limit, defaultMaxTokens)
		return thinking{Type: "adaptive"}
	}
	budget := r.Reasoning.BudgetTokens
	if budget <= 0 {
		budget = conv.BudgetForEffort(r.Reasoning.Effort)
	}
	if budget <= 0 {
		budget = conv.BudgetForEffort("medium")
	}
	budget = max(budget, minBudget)
	if limit == 0 {
		limit = min(max(defaultMaxTokens, budget+thinkingHeadroom), maxDefaultTokens)
	}
	if budget >= limit {
		budget = max(limit/2, minBudget)
	}
	out.MaxTokens = limit
	if budget >= limit {
		return thinking{}
	}
	return thinking{Type: "enabled", BudgetTokens: budget}
}

func forcesTool(tc *outToolChoice) bool {
	return tc != nil && (tc.Type == "any" || tc.Type == "tool")
}

// unsignedToolCall reports whether an assistant turn calls a tool with no
// thinking or redacted_thinking block before the call.
func unsignedToolCall(msgs []outTurn) bool {
	for _, m := range msgs {
		if m.Role != "assistant" {
			continue
		}
		signed := false
		for _, b := range m.Content {
			switch b.Type {
			case "thinking", "redacted_thinking":
				signed = true
			case "tool_use":
				if !signed {
					return true
				}
			}
		}
	}
	return false
}

// appendExtra writes the Extra members outRequest does not, in name
// order, into the object b.
func appendExtra(b []byte, extra map[string]json.RawMessage) []byte {
	keys := make([]string, 0, len(extra))
	for k, v := range extra {
		if !modeled[k] && !isNull(v) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return b
	}
	slices.Sort(keys)
	buf := bytes.NewBuffer(b[:len(b)-1]) // without the closing brace
	for _, k := range keys {
		n := buf.Len()
		buf.WriteByte(',')
		buf.Write(conv.Marshal(k))
		buf.WriteByte(':')
		if json.Compact(buf, extra[k]) != nil {
			buf.Truncate(n) // not JSON: left out
		}
	}
	buf.WriteByte('}')
	return buf.Bytes()
}
