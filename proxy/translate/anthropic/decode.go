package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// billingPrefix starts the system text block Claude Code rewrites on every
// request; carried to another upstream it would break that upstream's
// prompt cache, so the decoder drops it.
const billingPrefix = "x-anthropic-billing-header:"

// DecodeRequest reads a Messages API request body in one pass
// (conv.Reader): Claude Code's bodies are 100 KB and more, and nested
// json.Unmarshal calls walked each text several times (bench/NOTES.md,
// "Request decoding").
func (codec) DecodeRequest(body []byte) (*conv.Request, error) {
	d := &requestDecoder{rd: conv.NewSharedReader(body), r: &conv.Request{From: Protocol}}
	if err := d.decode(); err != nil {
		return nil, fmt.Errorf("anthropic request: %w", err)
	}
	if err := d.r.CheckCalls(); err != nil {
		return nil, fmt.Errorf("anthropic request: %w", err)
	}
	return d.r, nil
}

// Buckets of Dropped: what the decoder leaves out is named in this order
// whatever the order of the body's members.
const (
	dropSystem = iota
	dropMessages
	dropTools
	dropToolChoice
	dropBuckets
)

// requestDecoder reads the body's members as they come; what depends on
// another member (the system text, the named tool choice, thinking) is
// put together when the body has been read.
type requestDecoder struct {
	rd *conv.Reader
	r  *conv.Request

	system      []conv.Part // the system member
	leading     []conv.Part // system messages before the first other one
	sawMessages bool
	toolChoice  *wireToolChoice
	thinking    struct {
		Type         string
		BudgetTokens int64
	}
	effort string
	drops  [dropBuckets][]string
	bucket int
	// errs holds, by member name, why the last occurrence of a member was
	// refused; they are returned once the whole body is known to be JSON,
	// in the order of errOrder (the order they were checked in before the
	// decoder read in one pass), so a later duplicate member replaces an
	// earlier one's error as it replaces its value.
	errs conv.Refusals
}

var errOrder = []string{
	"model", "stream", "max_tokens", "temperature", "top_p", "stop_sequences",
	"system", "messages", "tools", "tool_choice", "thinking", "output_config", "metadata",
}

func (d *requestDecoder) decode() error {
	if err := d.rd.Body(d.checked, "the body is not a JSON object"); err != nil {
		return err
	}
	err := d.finish()
	for _, name := range errOrder {
		if name == "messages" && !d.sawMessages {
			return errors.New("messages: missing")
		}
		if name == "tool_choice" && d.errs[name] == nil && err != nil {
			return err
		}
		if d.errs[name] != nil {
			return d.errs[name]
		}
	}
	return nil
}

// checked reads one top-level member; a member it refuses is skipped (and
// so checked to be JSON) and its error kept for the end.
func (d *requestDecoder) checked(key []byte) error {
	name := string(key)
	return d.errs.Read(d.rd, name, func() error { return d.member(name) })
}

// finish puts together what the members read left for the end.
func (d *requestDecoder) finish() error {
	r := d.r
	r.System = d.system
	if len(d.leading) > 0 {
		r.System = append(r.System, d.leading...)
	}
	switch d.thinking.Type {
	case "enabled":
		r.Reasoning.Enabled, r.Reasoning.BudgetTokens = true, d.thinking.BudgetTokens
	case "adaptive":
		r.Reasoning.Enabled = true
	}
	r.Reasoning.Effort = d.effort
	d.bucket = dropToolChoice
	err := d.choice()
	for _, b := range d.drops {
		for _, w := range b {
			if !slices.Contains(r.Dropped, w) {
				r.Dropped = append(r.Dropped, w)
			}
		}
	}
	return err
}

// member reads one top-level member. Names match exactly: a member of
// another spelling is not modeled and travels in Extra.
func (d *requestDecoder) member(name string) error {
	rd, r := d.rd, d.r
	var err error
	switch name {
	case "model":
		err = rd.String(&r.Model)
	case "stream":
		err = rd.Bool(&r.Stream)
	case "max_tokens":
		err = rd.Int64(&r.MaxTokens)
	case "temperature":
		err = rd.Float64(&r.Temperature)
	case "top_p":
		err = rd.Float64(&r.TopP)
	case "stop_sequences":
		err = rd.Strings(&r.Stop)
	case "system":
		d.bucket = dropSystem
		d.drops[dropSystem] = nil
		d.system, err = d.systemParts()
	case "messages":
		d.bucket = dropMessages
		return d.messages()
	case "tools":
		d.bucket = dropTools
		return d.tools()
	case "tool_choice":
		d.toolChoice = nil
		err = d.readToolChoice()
	case "thinking", "output_config":
		err = d.split(name)
	case "metadata":
		err = d.metadata()
	default:
		return d.extra(name)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// extra keeps a member the decoder does not model (top_k,
// context_management, service_tier, …), raw; a null is left out.
func (d *requestDecoder) extra(name string) error {
	raw, err := d.rd.Raw()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	d.setExtra(name, raw)
	return nil
}

func (d *requestDecoder) setExtra(name string, raw json.RawMessage) {
	if isNull(raw) {
		delete(d.r.Extra, name)
		return
	}
	if d.r.Extra == nil {
		d.r.Extra = make(map[string]json.RawMessage)
	}
	d.r.Extra[name] = raw
}

// drop names something left out, once.
func (d *requestDecoder) drop(what string) {
	b := &d.drops[d.bucket]
	if !slices.Contains(*b, what) {
		*b = append(*b, what)
	}
}

// systemParts reads system text: a string or text blocks, without
// Claude Code's billing line.
func (d *requestDecoder) systemParts() ([]conv.Part, error) {
	parts, err := d.content()
	if err != nil {
		return nil, err
	}
	return d.systemOnly(parts), nil
}

func (d *requestDecoder) systemOnly(parts []conv.Part) []conv.Part {
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
	return out
}

// messages reads the turns. System messages before the first other one
// join Request.System; later ones stay as RoleSystem messages.
func (d *requestDecoder) messages() error {
	d.drops[dropMessages], d.leading = nil, nil
	if null, err := d.rd.Null(); null || err != nil {
		d.sawMessages, d.r.Messages = false, nil
		return err
	}
	d.sawMessages = true
	d.r.Messages = []conv.Message{}
	if d.rd.Kind() != '[' {
		return fmt.Errorf("messages: %w", d.rd.Array(nil))
	}
	return d.rd.Array(d.message)
}

func (d *requestDecoder) message(i int) error {
	var role string
	var parts []conv.Part
	var field func(key []byte) error
	field = func(key []byte) error {
		var err error
		switch string(key) {
		case "role":
			err = d.rd.String(&role)
		case "content":
			parts, err = d.content()
		default:
			if f, ok := conv.FoldKey(key); ok {
				return field(f)
			}
			return d.rd.Skip()
		}
		if err != nil {
			return fmt.Errorf("messages[%d]: %s: %w", i, key, err)
		}
		return nil
	}
	if k := d.rd.Kind(); k != '{' && k != 'n' {
		return fmt.Errorf("messages[%d]: %w", i, d.rd.Object(nil))
	}
	if err := d.rd.Object(field); err != nil {
		return err
	}
	return d.addMessage(i, role, parts)
}

func (d *requestDecoder) addMessage(i int, role string, parts []conv.Part) error {
	var rl conv.Role
	switch role {
	case "user":
		rl = conv.RoleUser
	case "assistant":
		rl = conv.RoleAssistant
	case "system":
		rl = conv.RoleSystem
		parts = d.systemOnly(parts)
	default:
		return fmt.Errorf("messages[%d]: unknown role %q", i, role)
	}
	switch {
	case len(parts) == 0:
	case rl == conv.RoleSystem && len(d.r.Messages) == 0:
		d.leading = append(d.leading, parts...)
	default:
		d.r.Messages = append(d.r.Messages, conv.Message{Role: rl, Parts: parts})
	}
	return nil
}

type wireTool struct {
	Type, Name, Description   string
	InputSchema, CacheControl json.RawMessage
	Strict                    *bool
}

type wireToolChoice struct {
	Type, Name             string
	DisableParallelToolUse *bool
}

// tools reads the tool definitions. Server tools (web_search_20250305,
// bash_20250124, text_editor_…) run at Anthropic and exist nowhere else:
// they are dropped.
func (d *requestDecoder) tools() error {
	d.drops[dropTools], d.r.Tools = nil, nil
	if k := d.rd.Kind(); k != '[' && k != 'n' {
		return fmt.Errorf("tools: %w", d.rd.Array(nil))
	}
	return d.rd.Array(func(i int) error {
		var t wireTool
		if err := d.readTool(&t); err != nil {
			return fmt.Errorf("tools: %w", err)
		}
		if t.Type != "" && t.Type != "custom" {
			d.drop(t.Type + " tool")
			return nil
		}
		if t.Name == "" {
			return fmt.Errorf("tools[%d]: no name", i)
		}
		d.r.Tools = append(d.r.Tools, conv.Tool{
			Kind: conv.ToolFunction, Name: t.Name, Description: t.Description,
			Schema: conv.Schema(t.InputSchema), Strict: t.Strict, CacheControl: cacheControl(t.CacheControl),
		})
		return nil
	})
}

func (d *requestDecoder) readTool(t *wireTool) error {
	rd := d.rd
	var field func(key []byte) error
	field = func(key []byte) (err error) {
		switch string(key) {
		case "type":
			return rd.String(&t.Type)
		case "name":
			return rd.String(&t.Name)
		case "description":
			return rd.String(&t.Description)
		case "input_schema":
			t.InputSchema, err = rd.Raw()
			return err
		case "strict":
			return rd.BoolPtr(&t.Strict)
		case "cache_control":
			t.CacheControl, err = rd.Raw()
			return err
		}
		if f, ok := conv.FoldKey(key); ok {
			return field(f)
		}
		return rd.Skip()
	}
	return rd.Object(field)
}

func (d *requestDecoder) readToolChoice() error {
	if null, err := d.rd.Null(); null || err != nil {
		return err
	}
	tc := &wireToolChoice{}
	var field func(key []byte) error
	field = func(key []byte) error {
		switch string(key) {
		case "type":
			return d.rd.String(&tc.Type)
		case "name":
			return d.rd.String(&tc.Name)
		case "disable_parallel_tool_use":
			return d.rd.BoolPtr(&tc.DisableParallelToolUse)
		}
		if f, ok := conv.FoldKey(key); ok {
			return field(f)
		}
		return d.rd.Skip()
	}
	if err := d.rd.Object(field); err != nil {
		return err
	}
	d.toolChoice = tc
	return nil
}

// choice applies tool_choice, once the tools are known: a choice naming a
// dropped tool is dropped with it.
func (d *requestDecoder) choice() error {
	tc := d.toolChoice
	if tc == nil {
		return nil
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
