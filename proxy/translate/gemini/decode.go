package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// DecodeRequest reads a generateContent request body. The model and the
// stream flag are not in it (a Gemini client gives them in the path,
// ParsePath): the proxy sets Request.Model and Stream.
func (c codec) DecodeRequest(body []byte) (*conv.Request, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("gemini request: %w", err)
	}
	if top == nil {
		return nil, errors.New("gemini request: the body is not a JSON object")
	}
	d := &requestDecoder{top: top, r: &conv.Request{From: Protocol}}
	if err := d.decode(); err != nil {
		return nil, fmt.Errorf("gemini request: %w", err)
	}
	if err := d.r.CheckCalls(); err != nil {
		return nil, fmt.Errorf("gemini request: %w", err)
	}
	return d.r, nil
}

type requestDecoder struct {
	top map[string]json.RawMessage
	r   *conv.Request
}

func (d *requestDecoder) take(name string) (json.RawMessage, bool) {
	raw, ok := d.top[name]
	if !ok {
		return nil, false
	}
	delete(d.top, name)
	return raw, !isNull(raw)
}

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

func (d *requestDecoder) drop(what string) {
	for _, w := range d.r.Dropped {
		if w == what {
			return
		}
	}
	d.r.Dropped = append(d.r.Dropped, what)
}

func (d *requestDecoder) decode() error {
	if err := d.field("model", &d.r.Model); err != nil {
		return err
	}
	var sys *wireContent
	if err := d.field("systemInstruction", &sys); err != nil {
		return err
	}
	if sys != nil {
		for _, p := range sys.Parts {
			if p.Text != nil && *p.Text != "" {
				d.r.System = append(d.r.System, conv.Part{Kind: conv.PartText, Text: *p.Text})
			}
		}
	}
	var contents []wireContent
	raw, ok := d.take("contents")
	if !ok {
		return errors.New("contents: missing")
	}
	if err := json.Unmarshal(raw, &contents); err != nil {
		return fmt.Errorf("contents: %w", err)
	}
	if err := d.contents(contents); err != nil {
		return err
	}
	if err := d.tools(); err != nil {
		return err
	}
	if err := d.toolConfig(); err != nil {
		return err
	}
	if err := d.generationConfig(); err != nil {
		return err
	}
	if len(d.top) > 0 {
		d.r.Extra = d.top
	}
	return nil
}

// contents reads the turns. Calls without an id get one made up from
// their place in the history, and a result without an id is paired with
// the first call of its name not yet answered, else the first one not yet
// answered at all (Gemini pairs results with calls by name and order).
func (d *requestDecoder) contents(contents []wireContent) error {
	var open []conv.Part // calls not yet answered, in order
	for i, c := range contents {
		var role conv.Role
		switch c.Role {
		case "user", "", "function":
			role = conv.RoleUser
		case "model":
			role = conv.RoleAssistant
		default:
			return fmt.Errorf("contents[%d]: unknown role %q", i, c.Role)
		}
		m := conv.Message{Role: role}
		calls := 0
		for j := range c.Parts {
			p, ok := partIn(&c.Parts[j])
			if !ok {
				continue
			}
			switch p.Kind {
			case conv.PartToolCall:
				if p.CallID == "" {
					p.CallID = historyCallID(i, calls)
				}
				calls++
				open = append(open, p)
				// The thinking an answer began with goes back at the start
				// of its turn, where the Messages API wants it.
				if thinking, ok := carriedThinking(c.Parts[j].ThoughtSignature); ok && !hasSignedThinking(m.Parts) {
					m.Parts = append(thinking, m.Parts...)
				}
			case conv.PartToolResult:
				p.CallID, open = pairResult(p, open)
			}
			m.Parts = appendPart(m.Parts, p)
		}
		if len(m.Parts) > 0 {
			d.r.Messages = append(d.r.Messages, m)
		}
	}
	return nil
}

// appendPart adds p to parts; a signature on an empty text part (where a
// stream leaves it) goes onto the text or thought part before it, never
// onto a function call (Gemini checks those signatures where it put them).
func appendPart(parts []conv.Part, p conv.Part) []conv.Part {
	if p.Kind == conv.PartText && p.Text == "" {
		n := len(parts)
		if n > 0 && parts[n-1].Kind != conv.PartToolCall && parts[n-1].GeminiSignature == "" {
			parts[n-1].GeminiSignature = p.GeminiSignature
		}
		return parts
	}
	return append(parts, p)
}

// pairResult returns the call id of result p (p.Name is its call's name)
// and the calls still open after it.
func pairResult(p conv.Part, open []conv.Part) (string, []conv.Part) {
	at := -1
	for k, c := range open {
		if p.CallID != "" && c.CallID == p.CallID {
			at = k
			break
		}
		if p.CallID == "" && at < 0 && c.Name == p.Name {
			at = k
		}
	}
	if at < 0 && p.CallID == "" && len(open) > 0 {
		at = 0
	}
	if at < 0 {
		return p.CallID, open
	}
	id := open[at].CallID
	return id, append(open[:at:at], open[at+1:]...)
}

// partIn reads one part; ok is false for a part the model does not carry
// (executable code, an empty one).
func partIn(w *wirePart) (conv.Part, bool) {
	switch {
	case w.FunctionCall != nil:
		fc := w.FunctionCall
		p := conv.Part{Kind: conv.PartToolCall, CallID: fc.ID, Name: fc.Name, Args: conv.CanonicalArgs(string(fc.Args))}
		p.GeminiSignature = ownSignature(w.ThoughtSignature)
		return p, true
	case w.FunctionResponse != nil:
		return resultIn(w.FunctionResponse), true
	case w.InlineData != nil:
		return mediaPart(w.InlineData.MimeType, w.InlineData.Data, ""), true
	case w.FileData != nil:
		return mediaPart(w.FileData.MimeType, "", w.FileData.FileURI), true
	case w.Text != nil && w.Thought:
		p := conv.Part{Kind: conv.PartReasoning, Text: *w.Text}
		signatureIn(&p, w.ThoughtSignature)
		return p, true
	case w.Text != nil:
		return conv.Part{Kind: conv.PartText, Text: *w.Text, GeminiSignature: ownSignature(w.ThoughtSignature)}, true
	case w.ThoughtSignature != "":
		return conv.Part{Kind: conv.PartText, GeminiSignature: ownSignature(w.ThoughtSignature)}, true
	}
	return conv.Part{}, false
}

// ownSignature is sig when it is Gemini's own, "" when it is one ccmesh
// marked for a Gemini client (carry.go).
func ownSignature(sig string) string {
	if strings.HasPrefix(sig, "ccmesh.") {
		return ""
	}
	return sig
}

func hasSignedThinking(parts []conv.Part) bool {
	for i := range parts {
		if signedThinking(&parts[i]) {
			return true
		}
	}
	return false
}

// signatureIn sets the signature of a thought part: an Anthropic thinking
// signature or redacted data the stream encoder marked for a Gemini client
// (conv.SignaturePrefix, conv.RedactedPrefix) goes back where it came
// from; anything else is Gemini's own.
func signatureIn(p *conv.Part, sig string) {
	switch {
	case strings.HasPrefix(sig, conv.SignaturePrefix):
		p.Signature = strings.TrimPrefix(sig, conv.SignaturePrefix)
	case strings.HasPrefix(sig, conv.RedactedPrefix):
		p.Redacted = strings.TrimPrefix(sig, conv.RedactedPrefix)
	default:
		p.GeminiSignature = ownSignature(sig)
	}
}

// mediaPart is an image (image/*) or a document (anything else, a PDF or
// plain text).
func mediaPart(mime, data, uri string) conv.Part {
	if strings.HasPrefix(mime, "image/") || (mime == "" && data == "") {
		return conv.Part{Kind: conv.PartImage, MediaType: mime, Data: data, URL: uri}
	}
	return conv.Part{Kind: conv.PartDocument, MediaType: mime, Data: data, URL: uri}
}

// resultIn reads a FunctionResponse. Its response object is what the
// function returned: {"output": …} (Gemini CLI's form) becomes that
// text, {"error": …} an error result with that text, anything else the
// object's JSON text; images in its parts join its content.
func resultIn(fr *wireResult) conv.Part {
	p := conv.Part{Kind: conv.PartToolResult, CallID: fr.ID, Name: fr.Name}
	text := string(bytes.TrimSpace(fr.Response))
	var one map[string]json.RawMessage
	if json.Unmarshal(fr.Response, &one) == nil && len(one) == 1 {
		for k, v := range one {
			var s string
			if (k == "output" || k == "error") && json.Unmarshal(v, &s) == nil {
				text, p.IsError = s, k == "error"
			}
		}
	}
	if text != "" && text != "null" {
		p.Content = append(p.Content, conv.Part{Kind: conv.PartText, Text: text})
	}
	for _, w := range fr.Parts {
		if w.InlineData != nil && strings.HasPrefix(w.InlineData.MimeType, "image/") {
			p.Content = append(p.Content, conv.Part{Kind: conv.PartImage, MediaType: w.InlineData.MimeType, Data: w.InlineData.Data})
		}
	}
	return p
}

func (d *requestDecoder) tools() error {
	var tools []json.RawMessage
	if err := d.field("tools", &tools); err != nil {
		return err
	}
	for i, raw := range tools {
		var t wireTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Errorf("tools[%d]: %w", i, err)
		}
		if t.FunctionDeclarations == nil {
			d.drop(hostedName(raw))
			continue
		}
		for _, f := range t.FunctionDeclarations {
			d.r.Tools = append(d.r.Tools, conv.Tool{
				Kind: conv.ToolFunction, Name: f.Name, Description: f.Description, Schema: schemaIn(&f),
			})
		}
	}
	return nil
}

// hostedName names a tool entry without function declarations (Google
// Search, code execution, URL context), for the debug line.
func hostedName(raw json.RawMessage) string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	for k := range m {
		return "tool " + k
	}
	return "tool"
}

func (d *requestDecoder) toolConfig() error {
	var tc wireToolConfig
	if err := d.field("toolConfig", &tc); err != nil {
		return err
	}
	fc := tc.FunctionCallingConfig
	if fc == nil {
		return nil
	}
	switch strings.ToUpper(fc.Mode) {
	case "AUTO", "VALIDATED":
		d.r.ToolChoice.Mode = conv.ChoiceAuto
	case "NONE":
		d.r.ToolChoice.Mode = conv.ChoiceNone
	case "ANY":
		d.r.ToolChoice.Mode = conv.ChoiceAny
		if len(fc.AllowedFunctionNames) == 1 {
			d.r.ToolChoice = conv.ToolChoice{Mode: conv.ChoiceTool, Name: fc.AllowedFunctionNames[0]}
		}
	}
	return nil
}

// generationConfig takes the members the model carries; the others stay
// in Extra["generationConfig"], for a Gemini upstream.
func (d *requestDecoder) generationConfig() error {
	raw, ok := d.take("generationConfig")
	if !ok {
		return nil
	}
	var gc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &gc); err != nil {
		return fmt.Errorf("generationConfig: %w", err)
	}
	r := d.r
	var thinking *wireThinking
	for _, f := range []struct {
		name string
		dst  any
	}{
		{"maxOutputTokens", &r.MaxTokens},
		{"temperature", &r.Temperature},
		{"topP", &r.TopP},
		{"stopSequences", &r.Stop},
		{"thinkingConfig", &thinking},
	} {
		v, ok := gc[f.name]
		if !ok {
			continue
		}
		delete(gc, f.name)
		if err := json.Unmarshal(v, f.dst); err != nil {
			return fmt.Errorf("generationConfig.%s: %w", f.name, err)
		}
	}
	if thinking != nil {
		r.Reasoning = reasoningIn(thinking)
	}
	if len(gc) > 0 {
		d.top["generationConfig"] = conv.Marshal(gc)
	}
	return nil
}

// reasoningIn reads a thinkingConfig (ai.google.dev/gemini-api/docs/thinking):
// thinkingLevel is an effort; a positive thinkingBudget a budget; -1 is
// dynamic thinking (on, no budget); 0 is off. includeThoughts asks for the
// thought summaries: Responses' reasoning.summary "auto".
func reasoningIn(t *wireThinking) conv.Reasoning {
	var r conv.Reasoning
	switch {
	case t.ThinkingLevel != "":
		r.Effort, r.Enabled = strings.ToLower(t.ThinkingLevel), true
	case t.ThinkingBudget != nil && *t.ThinkingBudget > 0:
		r.BudgetTokens, r.Enabled = *t.ThinkingBudget, true
	case t.ThinkingBudget != nil && *t.ThinkingBudget == 0:
		r.Effort = "none"
	case t.ThinkingBudget != nil:
		r.Enabled = true
	}
	if t.IncludeThoughts != nil && *t.IncludeThoughts {
		r.Summary = "auto"
		r.Enabled = r.Enabled || r.Effort == ""
	}
	return r
}
