package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// billingPrefix starts the system text block Claude Code rewrites on every
// request; carried to another upstream it would break that upstream's
// prompt cache, so the decoder drops it.
const billingPrefix = "x-anthropic-billing-header:"

// DecodeRequest reads a Messages API request body.
func (codec) DecodeRequest(body []byte) (*conv.Request, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("anthropic request: %w", err)
	}
	if top == nil {
		return nil, errors.New("anthropic request: the body is not a JSON object")
	}
	d := &requestDecoder{top: top, r: &conv.Request{From: Protocol}}
	if err := d.decode(); err != nil {
		return nil, fmt.Errorf("anthropic request: %w", err)
	}
	if err := d.r.CheckCalls(); err != nil {
		return nil, fmt.Errorf("anthropic request: %w", err)
	}
	return d.r, nil
}

// requestDecoder takes the members it models out of top; what is left
// becomes Extra.
type requestDecoder struct {
	top map[string]json.RawMessage
	r   *conv.Request
}

func (d *requestDecoder) decode() error {
	r := d.r
	if err := d.scalars(); err != nil {
		return err
	}
	if raw, ok := d.take("system"); ok {
		parts, err := d.systemParts(raw)
		if err != nil {
			return fmt.Errorf("system: %w", err)
		}
		r.System = parts
	}
	raw, ok := d.take("messages")
	if !ok {
		return errors.New("messages: missing")
	}
	if err := d.messages(raw); err != nil {
		return err
	}
	if err := d.tools(); err != nil {
		return err
	}
	if err := d.reasoning(); err != nil {
		return err
	}
	if err := d.metadata(); err != nil {
		return err
	}
	d.extra()
	return nil
}

// take removes member name from top and returns it, unless it is missing
// or null.
func (d *requestDecoder) take(name string) (json.RawMessage, bool) {
	raw, ok := d.top[name]
	if !ok {
		return nil, false
	}
	delete(d.top, name)
	return raw, !isNull(raw)
}

// field decodes member name into dst when it is present.
func (d *requestDecoder) field(name string, dst any) error {
	raw, ok := d.take(name)
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func (d *requestDecoder) scalars() error {
	r := d.r
	for _, f := range []struct {
		name string
		dst  any
	}{
		{"model", &r.Model},
		{"stream", &r.Stream},
		{"max_tokens", &r.MaxTokens},
		{"temperature", &r.Temperature},
		{"top_p", &r.TopP},
		{"stop_sequences", &r.Stop},
	} {
		if err := d.field(f.name, f.dst); err != nil {
			return err
		}
	}
	return nil
}

// drop names something left out, once.
func (d *requestDecoder) drop(what string) {
	for _, w := range d.r.Dropped {
		if w == what {
			return
		}
	}
	d.r.Dropped = append(d.r.Dropped, what)
}

// systemParts reads system text: a string or text blocks, without
// Claude Code's billing line.
func (d *requestDecoder) systemParts(raw json.RawMessage) ([]conv.Part, error) {
	parts, err := d.content(raw)
	if err != nil {
		return nil, err
	}
	out := parts[:0]
	for _, p := range parts {
		switch {
		case p.Kind != conv.PartText:
			d.drop("system " + p.Kind.String())
		case strings.HasPrefix(p.Text, billingPrefix):
		default:
			out = append(out, p)
		}
	}
	return out, nil
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// messages reads the turns. System messages before the first other one
// join Request.System; later ones stay as RoleSystem messages.
func (d *requestDecoder) messages(raw json.RawMessage) error {
	var msgs []wireMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return fmt.Errorf("messages: %w", err)
	}
	d.r.Messages = make([]conv.Message, 0, len(msgs))
	for i, m := range msgs {
		var role conv.Role
		switch m.Role {
		case "user":
			role = conv.RoleUser
		case "assistant":
			role = conv.RoleAssistant
		case "system":
			role = conv.RoleSystem
		default:
			return fmt.Errorf("messages[%d]: unknown role %q", i, m.Role)
		}
		var parts []conv.Part
		var err error
		if role == conv.RoleSystem {
			parts, err = d.systemParts(m.Content)
		} else {
			parts, err = d.content(m.Content)
		}
		if err != nil {
			return fmt.Errorf("messages[%d]: %w", i, err)
		}
		switch {
		case len(parts) == 0:
		case role == conv.RoleSystem && len(d.r.Messages) == 0:
			d.r.System = append(d.r.System, parts...)
		default:
			d.r.Messages = append(d.r.Messages, conv.Message{Role: role, Parts: parts})
		}
	}
	return nil
}

// content reads a message's content: a string or an array of blocks.
// Empty text is left out.
func (d *requestDecoder) content(raw json.RawMessage) ([]conv.Part, error) {
	switch firstByte(raw) {
	case 0, 'n':
		return nil, nil
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if s == "" {
			return nil, nil
		}
		return []conv.Part{{Kind: conv.PartText, Text: s}}, nil
	case '[':
	default:
		return nil, errors.New("content is neither a string nor an array of blocks")
	}
	var blocks []wireBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, err
	}
	parts := make([]conv.Part, 0, len(blocks))
	for _, b := range blocks {
		p, ok, err := d.block(&b)
		if err != nil {
			return nil, fmt.Errorf("%s block: %w", b.Type, err)
		}
		if ok {
			parts = append(parts, p)
		}
	}
	return parts, nil
}

// block turns one content block into a part; ok is false for a block
// left out (empty text, or a type no other protocol has, named in Dropped).
func (d *requestDecoder) block(b *wireBlock) (p conv.Part, ok bool, err error) {
	p.CacheControl = cacheControl(b.CacheControl)
	switch b.Type {
	case "text":
		p.Kind, p.Text = conv.PartText, b.Text
		return p, b.Text != "", nil
	case "image":
		p.Kind = conv.PartImage
		return p, d.source(&p, b, "image"), nil
	case "document":
		p.Kind, p.Filename = conv.PartDocument, b.Title
		return p, d.source(&p, b, "document"), nil
	case "tool_use":
		p.Kind, p.CallID, p.Name, p.Args = conv.PartToolCall, b.ID, b.Name, conv.CanonicalArgs(string(b.Input))
		return p, true, nil
	case "tool_result":
		p.Kind, p.CallID, p.IsError = conv.PartToolResult, b.ToolUseID, b.IsError
		p.Content, err = d.resultContent(b.Content)
		return p, err == nil, err
	case "thinking":
		p.Kind, p.Text, p.Signature = conv.PartReasoning, b.Thinking, b.Signature
		return p, true, nil
	case "redacted_thinking":
		p.Kind, p.Redacted = conv.PartReasoning, b.Data
		return p, b.Data != "", nil
	}
	d.drop(b.Type + " block")
	return p, false, nil
}

// source fills an image's or a document's data from its source; false
// when the source is one no other protocol can take (a Files API id).
func (d *requestDecoder) source(p *conv.Part, b *wireBlock, what string) bool {
	s := b.Source
	if s == nil {
		d.drop(what + " without a source")
		return false
	}
	switch s.Type {
	case "base64":
		p.MediaType, p.Data = s.MediaType, s.Data
		return s.Data != ""
	case "url":
		p.URL = s.URL
		return s.URL != ""
	case "text":
		if what == "document" {
			p.MediaType, p.Text = "text/plain", s.Data
			return s.Data != ""
		}
	case "content":
		if what == "document" {
			p.MediaType, p.Text = "text/plain", d.joinedText(s.Content)
			return p.Text != ""
		}
	}
	d.drop(what + " source " + s.Type)
	return false
}

// joinedText is the text of a content document's content: a string or
// text blocks, joined by blank lines.
func (d *requestDecoder) joinedText(raw json.RawMessage) string {
	parts, err := d.content(raw)
	if err != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Kind == conv.PartText {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// resultContent reads a tool result's content: a string or text and image
// blocks (documents too, which the neutral model can carry).
func (d *requestDecoder) resultContent(raw json.RawMessage) ([]conv.Part, error) {
	parts, err := d.content(raw)
	if err != nil {
		return nil, err
	}
	out := parts[:0]
	for _, p := range parts {
		switch p.Kind {
		case conv.PartText, conv.PartImage, conv.PartDocument:
			out = append(out, p)
		default:
			d.drop("tool_result " + p.Kind.String())
		}
	}
	return out, nil
}

type wireTool struct {
	Type         string          `json:"type"`
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Strict       *bool           `json:"strict"`
	CacheControl json.RawMessage `json:"cache_control"`
}

type wireToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name"`
	DisableParallelToolUse *bool  `json:"disable_parallel_tool_use"`
}

// tools reads the tool definitions and tool_choice. Server tools
// (web_search_20250305, bash_20250124, text_editor_…) run at Anthropic and
// exist nowhere else: they are dropped. A choice naming a dropped tool is
// dropped with it.
func (d *requestDecoder) tools() error {
	var tools []wireTool
	if err := d.field("tools", &tools); err != nil {
		return err
	}
	for i, t := range tools {
		if t.Type != "" && t.Type != "custom" {
			d.drop(t.Type + " tool")
			continue
		}
		if t.Name == "" {
			return fmt.Errorf("tools[%d]: no name", i)
		}
		d.r.Tools = append(d.r.Tools, conv.Tool{
			Kind: conv.ToolFunction, Name: t.Name, Description: t.Description,
			Schema: conv.Schema(t.InputSchema), Strict: t.Strict, CacheControl: cacheControl(t.CacheControl),
		})
	}
	var tc *wireToolChoice
	if err := d.field("tool_choice", &tc); err != nil || tc == nil {
		return err
	}
	if tc.DisableParallelToolUse != nil {
		d.r.ParallelToolCalls = ptr(!*tc.DisableParallelToolUse)
	}
	switch tc.Type {
	case "auto":
		d.r.ToolChoice.Mode = conv.ChoiceAuto
	case "any":
		d.r.ToolChoice.Mode = conv.ChoiceAny
	case "none":
		d.r.ToolChoice.Mode = conv.ChoiceNone
	case "tool":
		if tc.Name == "" {
			return errors.New("tool_choice: type tool without a name")
		}
		if !d.hasTool(tc.Name) {
			d.drop("tool_choice " + tc.Name)
			return nil
		}
		d.r.ToolChoice = conv.ToolChoice{Mode: conv.ChoiceTool, Name: tc.Name}
	default:
		return fmt.Errorf("tool_choice: unknown type %q", tc.Type)
	}
	return nil
}

func (d *requestDecoder) hasTool(name string) bool {
	for _, t := range d.r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// reasoning reads thinking and output_config.effort. What else those two
// objects hold (thinking.display, output_config.format, …) stays in Extra
// under their names, for an Anthropic upstream.
func (d *requestDecoder) reasoning() error {
	var th struct {
		Type         string `json:"type"`
		BudgetTokens int64  `json:"budget_tokens"`
	}
	if err := d.split("thinking", &th, "type", "budget_tokens"); err != nil {
		return err
	}
	switch th.Type {
	case "enabled":
		d.r.Reasoning.Enabled, d.r.Reasoning.BudgetTokens = true, th.BudgetTokens
	case "adaptive":
		d.r.Reasoning.Enabled = true
	}
	var oc struct {
		Effort string `json:"effort"`
	}
	if err := d.split("output_config", &oc, "effort"); err != nil {
		return err
	}
	d.r.Reasoning.Effort = oc.Effort
	return nil
}

// split decodes object member name into dst and leaves in top only its
// members other than the modeled ones (or nothing, when none are left).
func (d *requestDecoder) split(name string, dst any, modeled ...string) error {
	raw, ok := d.take(name)
	if !ok {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for _, m := range modeled {
		delete(obj, m)
	}
	if len(obj) > 0 {
		d.top[name] = conv.Marshal(obj)
	}
	return nil
}

// metadata reads metadata.user_id as User; metadata itself stays in Extra.
func (d *requestDecoder) metadata() error {
	raw, ok := d.top["metadata"]
	if !ok || isNull(raw) {
		return nil
	}
	var md struct {
		UserID string `json:"user_id"`
	}
	if err := json.Unmarshal(raw, &md); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	d.r.User = md.UserID
	return nil
}

// extra keeps the members left in top (top_k, context_management,
// service_tier, …), nulls excepted.
func (d *requestDecoder) extra() {
	for k, v := range d.top {
		if isNull(v) {
			continue
		}
		if d.r.Extra == nil {
			d.r.Extra = make(map[string]json.RawMessage, len(d.top))
		}
		d.r.Extra[k] = v
	}
}
