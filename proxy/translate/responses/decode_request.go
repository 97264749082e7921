package responses

import (
	"encoding/json"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// DecodeRequest reads a Responses request (Codex CLI, OpenAI SDK).
func (codec) DecodeRequest(body []byte) (*conv.Request, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	if raw == nil {
		return nil, fmt.Errorf("responses request: the body is not a JSON object")
	}
	r := &conv.Request{From: Protocol}
	if err := decodeScalars(raw, r); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	if err := decodeTools(raw, r); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	if err := decodeToolChoice(raw, r); err != nil {
		return nil, fmt.Errorf("responses request: tool_choice: %w", err)
	}
	if err := decodeInstructions(raw, r); err != nil {
		return nil, fmt.Errorf("responses request: instructions: %w", err)
	}
	if err := decodeInput(raw, r); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	if err := r.CheckCalls(); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	for k, v := range raw {
		if r.Extra == nil {
			r.Extra = make(map[string]json.RawMessage, len(raw))
		}
		r.Extra[k] = v
	}
	return r, nil
}

// take decodes member key of raw into v and removes it, reporting whether
// it was there (JSON null counts as missing).
func take(raw map[string]json.RawMessage, key string, v any) (bool, error) {
	m, ok := raw[key]
	if !ok {
		return false, nil
	}
	delete(raw, key)
	if isNull(m) {
		return false, nil
	}
	if err := json.Unmarshal(m, v); err != nil {
		return false, fmt.Errorf("%s: %w", key, err)
	}
	return true, nil
}

// decodeScalars reads the members that map one to one.
func decodeScalars(raw map[string]json.RawMessage, r *conv.Request) error {
	var reasoning struct {
		Effort  *string `json:"effort"`
		Summary string  `json:"summary"`
	}
	for _, m := range []struct {
		key string
		v   any
	}{
		{"model", &r.Model},
		{"stream", &r.Stream},
		{"parallel_tool_calls", &r.ParallelToolCalls},
		{"max_output_tokens", &r.MaxTokens},
		{"temperature", &r.Temperature},
		{"top_p", &r.TopP},
		{"user", &r.User},
		{"prompt_cache_key", &r.PromptCacheKey},
		{"previous_response_id", &r.PreviousResponseID},
		{"reasoning", &reasoning},
	} {
		if _, err := take(raw, m.key, m.v); err != nil {
			return err
		}
	}
	r.Reasoning.Summary = reasoning.Summary
	if reasoning.Effort != nil {
		r.Reasoning.Effort = *reasoning.Effort
		r.Reasoning.Enabled = *reasoning.Effort != "none"
	}
	return nil
}

// decodeInstructions reads instructions into System: a string, or
// (leniently) an array of message items whose texts are taken in order.
func decodeInstructions(raw map[string]json.RawMessage, r *conv.Request) error {
	m, ok := raw["instructions"]
	if !ok {
		return nil
	}
	delete(raw, "instructions")
	if isNull(m) {
		return nil
	}
	var s string
	if json.Unmarshal(m, &s) == nil {
		if s != "" {
			r.System = append(r.System, conv.Part{Kind: conv.PartText, Text: s})
		}
		return nil
	}
	var items []wireItem
	if err := json.Unmarshal(m, &items); err != nil {
		return fmt.Errorf("neither a string nor an array of messages: %w", err)
	}
	for _, it := range items {
		parts, err := contentParts(it.Content, &r.Dropped)
		if err != nil {
			return err
		}
		r.System = append(r.System, textsOnly(parts, &r.Dropped)...)
	}
	return nil
}

// textsOnly keeps the text parts of a system message.
func textsOnly(parts []conv.Part, dropped *[]string) []conv.Part {
	out := parts[:0]
	for _, p := range parts {
		if p.Kind == conv.PartText {
			out = append(out, p)
		} else {
			*dropped = append(*dropped, p.Kind.String()+" in a system message")
		}
	}
	return out
}

// decodeInput reads input: a string (one user message) or an array of items.
func decodeInput(raw map[string]json.RawMessage, r *conv.Request) error {
	m, ok := raw["input"]
	if !ok {
		return nil
	}
	delete(raw, "input")
	if isNull(m) {
		return nil
	}
	var s string
	if json.Unmarshal(m, &s) == nil {
		if s != "" {
			r.Messages = append(r.Messages, conv.Message{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: s}}})
		}
		return nil
	}
	var items []wireItem
	if err := json.Unmarshal(m, &items); err != nil {
		return fmt.Errorf("input is neither a string nor an array of items: %w", err)
	}
	b := inputBuilder{r: r, leading: true}
	for i := range items {
		if err := b.add(&items[i]); err != nil {
			return fmt.Errorf("input[%d]: %w", i, err)
		}
	}
	return nil
}

// group is what the last message collects: consecutive assistant-side
// items merge into one assistant message, consecutive tool outputs into
// one user message.
type group uint8

const (
	groupNone group = iota
	groupAssistant
	groupToolOutputs
)

// inputBuilder turns input items into Request.System and Messages.
type inputBuilder struct {
	r       *conv.Request
	group   group
	leading bool // no item other than a system/developer message seen yet
}

// add translates one input item.
func (b *inputBuilder) add(it *wireItem) error {
	typ := it.Type
	if typ == "" && it.Role != "" {
		typ = "message"
	}
	if typ != "message" || (it.Role != "system" && it.Role != "developer") {
		b.leading = false
	}
	switch typ {
	case "message":
		return b.message(it)
	case "reasoning":
		if p := reasoningPart(it, true); !isEmptyReasoning(p) {
			b.append(groupAssistant, conv.RoleAssistant, p)
		}
	case "function_call", "custom_tool_call":
		b.append(groupAssistant, conv.RoleAssistant, callPart(it))
	case "function_call_output", "custom_tool_call_output":
		content, err := toolOutputParts(it.Output, &b.r.Dropped)
		if err != nil {
			return err
		}
		b.append(groupToolOutputs, conv.RoleUser, conv.Part{Kind: conv.PartToolResult, CallID: it.CallID, Content: content})
	case "":
		return fmt.Errorf("an item without a type or a role")
	default:
		b.r.Dropped = append(b.r.Dropped, "input item "+typ)
	}
	return nil
}

// message translates a message item (or a role-only item).
func (b *inputBuilder) message(it *wireItem) error {
	parts, err := contentParts(it.Content, &b.r.Dropped)
	if err != nil {
		return err
	}
	switch it.Role {
	case "system", "developer":
		parts = textsOnly(parts, &b.r.Dropped)
		if b.leading {
			b.r.System = append(b.r.System, parts...)
			return nil
		}
		b.newMessage(groupNone, conv.RoleSystem, parts)
	case "user":
		b.newMessage(groupNone, conv.RoleUser, parts)
	case "assistant":
		for _, p := range parts {
			b.append(groupAssistant, conv.RoleAssistant, p)
		}
	default:
		return fmt.Errorf("message role %q is not user, assistant, system or developer", it.Role)
	}
	return nil
}

// newMessage appends a message that closes any open group; an empty one is
// left out.
func (b *inputBuilder) newMessage(g group, role conv.Role, parts []conv.Part) {
	if len(parts) == 0 {
		return
	}
	b.r.Messages = append(b.r.Messages, conv.Message{Role: role, Parts: parts})
	b.group = g
}

// append adds p to the open message of group g, opening one when the last
// message belongs to another group.
func (b *inputBuilder) append(g group, role conv.Role, p conv.Part) {
	if b.group != g || len(b.r.Messages) == 0 {
		b.newMessage(g, role, []conv.Part{p})
		return
	}
	last := &b.r.Messages[len(b.r.Messages)-1]
	last.Parts = append(last.Parts, p)
}

// wireTool is a tool definition: function, custom, namespace or hosted.
type wireTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict"`
	Format      json.RawMessage `json:"format"`
	Tools       []wireTool      `json:"tools"`
}

// decodeTools reads tools: functions and custom tools as they are,
// namespaces flattened, hosted tools dropped.
func decodeTools(raw map[string]json.RawMessage, r *conv.Request) error {
	var tools []wireTool
	if _, err := take(raw, "tools", &tools); err != nil {
		return err
	}
	var nsDesc map[string]string
	for i, t := range tools {
		if t.Type != "namespace" {
			if err := addTool(r, t, ""); err != nil {
				return fmt.Errorf("tools[%d]: %w", i, err)
			}
			continue
		}
		if t.Name == "" {
			return fmt.Errorf("tools[%d]: a namespace without a name", i)
		}
		if t.Description != "" {
			if nsDesc == nil {
				nsDesc = make(map[string]string)
			}
			nsDesc[t.Name] = t.Description
		}
		for j, inner := range t.Tools {
			if err := addTool(r, inner, t.Name); err != nil {
				return fmt.Errorf("tools[%d].tools[%d]: %w", i, j, err)
			}
		}
	}
	if nsDesc != nil {
		r.Extra = map[string]json.RawMessage{nsDescKey: conv.Marshal(nsDesc)}
	}
	return nil
}

// addTool appends a function or custom tool (of namespace ns, when not "")
// and names anything else in Dropped.
func addTool(r *conv.Request, t wireTool, ns string) error {
	var kind conv.ToolKind
	switch t.Type {
	case "function":
		kind = conv.ToolFunction
	case "custom":
		kind = conv.ToolCustom
	default:
		r.Dropped = append(r.Dropped, "tool "+t.Type)
		return nil
	}
	if t.Name == "" {
		return fmt.Errorf("a %s tool without a name", t.Type)
	}
	tool := conv.Tool{Kind: kind, Name: flatName(ns, t.Name), Description: t.Description, Namespace: ns}
	if kind == conv.ToolFunction {
		tool.Schema, tool.Strict = conv.Schema(t.Parameters), t.Strict
	} else {
		tool.Schema = conv.CustomSchema
		if !isNull(t.Format) {
			tool.Format = t.Format
		}
	}
	r.Tools = append(r.Tools, tool)
	return nil
}

// decodeToolChoice reads tool_choice: a mode string or a named tool.
func decodeToolChoice(raw map[string]json.RawMessage, r *conv.Request) error {
	m, ok := raw["tool_choice"]
	if !ok {
		return nil
	}
	delete(raw, "tool_choice")
	if isNull(m) {
		return nil
	}
	var s string
	if json.Unmarshal(m, &s) == nil {
		switch s {
		case "auto":
			r.ToolChoice.Mode = conv.ChoiceAuto
		case "none":
			r.ToolChoice.Mode = conv.ChoiceNone
		case "required":
			r.ToolChoice.Mode = conv.ChoiceAny
		default:
			return fmt.Errorf("%q is not auto, none or required", s)
		}
		return nil
	}
	var c struct {
		Type string `json:"type"`
		Name string `json:"name"`
		Mode string `json:"mode"`
	}
	if err := json.Unmarshal(m, &c); err != nil {
		return err
	}
	switch c.Type {
	case "function", "custom":
		if c.Name == "" {
			return fmt.Errorf("a %s choice without a name", c.Type)
		}
		r.ToolChoice = conv.ToolChoice{Mode: conv.ChoiceTool, Name: c.Name}
	case "allowed_tools":
		// The restriction to a subset has no neutral form; its mode stays.
		r.ToolChoice.Mode = conv.ChoiceAuto
		if c.Mode == "required" {
			r.ToolChoice.Mode = conv.ChoiceAny
		}
		r.Dropped = append(r.Dropped, "tool_choice allowed_tools")
	default:
		r.Dropped = append(r.Dropped, "tool_choice "+c.Type)
	}
	return nil
}
