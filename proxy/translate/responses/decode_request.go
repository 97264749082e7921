package responses

import (
	"encoding/json"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// DecodeRequest reads a Responses request (Codex CLI, OpenAI SDK) in one
// pass (conv.Reader; bench/NOTES.md, "Request decoding"), then translates
// what it read in the order the members were always checked in, so the
// order of Dropped and which error wins do not depend on the body's.
func (codec) DecodeRequest(body []byte) (*conv.Request, error) {
	d := &requestDecoder{rd: conv.NewSharedReader(body), r: &conv.Request{From: Protocol}}
	if err := d.read(); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	r := d.r
	if err := d.translate(); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	if err := r.CheckCalls(); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	for k, v := range d.extra {
		if r.Extra == nil {
			r.Extra = make(map[string]json.RawMessage, len(d.extra))
		}
		r.Extra[k] = v
	}
	return r, nil
}

// translate turns what read kept into the request, member by member.
func (d *requestDecoder) translate() error {
	r := d.r
	for _, name := range memberOrder {
		if err := d.errs[name]; err != nil {
			return err
		}
		var err error
		switch name {
		case "reasoning":
			r.Reasoning.Summary = d.reasoning.Summary
			if e := d.reasoning.Effort; e != nil {
				r.Reasoning.Effort, r.Reasoning.Enabled = *e, *e != "none"
			}
		case "tools":
			err = decodeTools(d.tools, r)
		case "tool_choice":
			if err = decodeToolChoice(d.choice, r); err != nil {
				err = fmt.Errorf("tool_choice: %w", err)
			}
		case "instructions":
			if err = decodeInstructions(d.instructions, r); err != nil {
				err = fmt.Errorf("instructions: %w", err)
			}
		case "input":
			err = decodeInput(d.input, r)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeInstructions reads instructions into System: a string, or
// (leniently) an array of message items whose texts are taken in order.
func decodeInstructions(in *itemsOrText, r *conv.Request) error {
	if in == nil {
		return nil
	}
	if in.isText {
		if in.text != "" {
			r.System = append(r.System, conv.Part{Kind: conv.PartText, Text: in.text})
		}
		return nil
	}
	for i := range in.items {
		parts, err := in.items[i].content.parts(&r.Dropped)
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
func decodeInput(in *itemsOrText, r *conv.Request) error {
	if in == nil {
		return nil
	}
	if in.isText {
		if in.text != "" {
			r.Messages = append(r.Messages, conv.Message{Role: conv.RoleUser, Parts: []conv.Part{{Kind: conv.PartText, Text: in.text}}})
		}
		return nil
	}
	b := inputBuilder{r: r, leading: true}
	r.Messages = make([]conv.Message, 0, len(in.items)) // at most one per item
	for i := range in.items {
		if err := b.add(in.items[i]); err != nil {
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
func (b *inputBuilder) add(ri *reqItem) error {
	it := &ri.wireItem
	typ := it.Type
	if typ == "" && it.Role != "" {
		typ = "message"
	}
	if typ != "message" || (it.Role != "system" && it.Role != "developer") {
		b.leading = false
	}
	switch typ {
	case "message":
		return b.message(ri)
	case "reasoning":
		if p := reasoningPartText(it, ri.reasoningText(), true); !isEmptyReasoning(p) {
			b.append(groupAssistant, conv.RoleAssistant, p)
		}
	case "function_call", "custom_tool_call":
		b.append(groupAssistant, conv.RoleAssistant, callPartArgs(it, ri.args))
	case "function_call_output", "custom_tool_call_output":
		content, err := ri.output.parts(&b.r.Dropped)
		if err != nil {
			return fmt.Errorf("tool output: %w", err)
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
func (b *inputBuilder) message(ri *reqItem) error {
	it := &ri.wireItem
	parts, err := ri.content.parts(&b.r.Dropped)
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
func decodeTools(tools []wireTool, r *conv.Request) error {
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

// wireToolChoice is tool_choice as read: a mode string or a named tool.
type wireToolChoice struct {
	isText           bool
	text             string
	Type, Name, Mode string
}

// decodeToolChoice reads tool_choice: a mode string or a named tool.
func decodeToolChoice(c *wireToolChoice, r *conv.Request) error {
	if c == nil {
		return nil
	}
	if c.isText {
		switch c.text {
		case "auto":
			r.ToolChoice.Mode = conv.ChoiceAuto
		case "none":
			r.ToolChoice.Mode = conv.ChoiceNone
		case "required":
			r.ToolChoice.Mode = conv.ChoiceAny
		default:
			return fmt.Errorf("%q is not auto, none or required", c.text)
		}
		return nil
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
