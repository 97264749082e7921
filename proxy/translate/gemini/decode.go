package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// DecodeRequest reads a generateContent request body in one pass
// (conv.Reader): nested json.Unmarshal calls over json.RawMessage parts
// walked each text several times (bench/NOTES.md, "Request decoding").
// The model and the stream flag are not in it (a Gemini client gives them
// in the path, ParsePath): the proxy sets Request.Model and Stream.
func (c codec) DecodeRequest(body []byte) (*conv.Request, error) {
	d := &requestDecoder{rd: conv.NewSharedReader(body), r: &conv.Request{From: Protocol}}
	if err := d.decode(); err != nil {
		return nil, fmt.Errorf("gemini request: %w", err)
	}
	if err := d.r.CheckCalls(); err != nil {
		return nil, fmt.Errorf("gemini request: %w", err)
	}
	return d.r, nil
}

// requestDecoder reads the body's members as they come. The top-level
// names match exactly (a member of another spelling travels in Extra), and
// a later duplicate member replaces an earlier one, value and error.
type requestDecoder struct {
	rd *conv.Reader
	r  *conv.Request

	sawContents bool
	open        []conv.Part // calls not yet answered, in order
	roleErr     error       // the first content of an unknown role
	extra       map[string]json.RawMessage
	genExtra    map[string]json.RawMessage // generationConfig's members the model does not carry
	// errs holds, by member, why its last occurrence was refused; they
	// are returned once the whole body is known to be JSON, in the order
	// of errOrder (the order the members were checked in before the
	// decoder read in one pass).
	errs conv.Refusals
}

var errOrder = []string{"model", "systemInstruction", "contents", "tools", "toolConfig", "generationConfig"}

func (d *requestDecoder) decode() error {
	if err := d.rd.Body(d.checked, "the body is not a JSON object"); err != nil {
		return err
	}
	for _, name := range errOrder {
		if name == "contents" && !d.sawContents {
			return errors.New("contents: missing")
		}
		if err := d.errs[name]; err != nil {
			return err
		}
		if name == "contents" && d.roleErr != nil {
			return d.roleErr
		}
	}
	if len(d.genExtra) > 0 {
		d.setExtra("generationConfig", conv.Marshal(d.genExtra))
	}
	d.r.Extra = d.extra
	return nil
}

// checked reads one top-level member; a member it refuses is skipped (and
// so checked to be JSON) and its error kept for the end.
func (d *requestDecoder) checked(key []byte) error {
	name := string(key)
	return d.errs.Read(d.rd, name, func() error { return d.member(name) })
}

// member reads one top-level member, from scratch: a duplicate replaces
// what an earlier one read.
func (d *requestDecoder) member(name string) error {
	rd, r := d.rd, d.r
	var err error
	switch name {
	case "model":
		r.Model = ""
		err = rd.String(&r.Model)
	case "systemInstruction":
		err = d.system()
	case "contents":
		err = d.contents()
	case "tools":
		return d.tools()
	case "toolConfig":
		err = d.toolConfig()
	case "generationConfig":
		return d.generationConfig()
	default:
		raw, err := rd.Raw()
		if err != nil {
			return err
		}
		d.setExtra(name, raw)
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func (d *requestDecoder) setExtra(name string, raw json.RawMessage) {
	if d.extra == nil {
		d.extra = make(map[string]json.RawMessage)
	}
	d.extra[name] = raw
}

func (d *requestDecoder) drop(what string) {
	for _, w := range d.r.Dropped {
		if w == what {
			return
		}
	}
	d.r.Dropped = append(d.r.Dropped, what)
}

// system reads systemInstruction: its non-empty texts.
func (d *requestDecoder) system() error {
	d.r.System = nil
	if null, err := d.rd.Null(); null || err != nil {
		return err
	}
	var sys wireContent
	if err := readContent(d.rd, &sys); err != nil {
		return err
	}
	for _, p := range sys.Parts {
		if p.Text != nil && *p.Text != "" {
			d.r.System = append(d.r.System, conv.Part{Kind: conv.PartText, Text: *p.Text})
		}
	}
	return nil
}

// contents reads the turns, each made into a message as soon as it is
// read; a null is no contents.
func (d *requestDecoder) contents() error {
	d.r.Messages, d.open, d.roleErr = nil, nil, nil
	if null, err := d.rd.Null(); null || err != nil {
		d.sawContents = false
		return err
	}
	d.sawContents = true
	return d.rd.Array(func(i int) error {
		var c wireContent
		if err := readContent(d.rd, &c); err != nil {
			return err
		}
		d.content(i, &c)
		return nil
	})
}

// content makes contents[i] a message. Calls without an id get one made
// up from their place in the history, and a result without an id is
// paired with the first call of its name not yet answered, else the first
// one not yet answered at all (Gemini pairs results with calls by name
// and order).
func (d *requestDecoder) content(i int, c *wireContent) {
	if d.roleErr != nil {
		return
	}
	var role conv.Role
	switch c.Role {
	case "user", "", "function":
		role = conv.RoleUser
	case "model":
		role = conv.RoleAssistant
	default:
		d.roleErr = fmt.Errorf("contents[%d]: unknown role %q", i, c.Role)
		return
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
			d.open = append(d.open, p)
			// The thinking an answer began with goes back at the start
			// of its turn, where the Messages API wants it.
			if thinking, ok := carriedThinking(c.Parts[j].ThoughtSignature); ok && !hasSignedThinking(m.Parts) {
				m.Parts = append(thinking, m.Parts...)
			}
		case conv.PartToolResult:
			p.CallID, d.open = pairResult(p, d.open)
		}
		m.Parts = appendPart(m.Parts, p)
	}
	if len(m.Parts) > 0 {
		d.r.Messages = append(d.r.Messages, m)
	}
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
	var text string
	if fr.read.ok {
		text, p.IsError = fr.read.text, fr.read.isError
	} else {
		text, p.IsError = responseText(fr.Response)
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

// responseText is the text of a response already decoded as raw JSON (a
// function response in an answer): what readResponse makes of one as it
// reads a request.
func responseText(raw json.RawMessage) (text string, isError bool) {
	text = string(bytes.TrimSpace(raw))
	var one map[string]json.RawMessage
	if json.Unmarshal(raw, &one) == nil && len(one) == 1 {
		for k, v := range one {
			var s string
			if (k == "output" || k == "error") && json.Unmarshal(v, &s) == nil {
				text, isError = s, k == "error"
			}
		}
	}
	return text, isError
}

// tools reads the tool entries: their function declarations; an entry
// without any (a hosted tool) is named in Dropped.
func (d *requestDecoder) tools() error {
	d.r.Tools, d.r.Dropped = nil, nil
	rd := d.rd
	if k := rd.Kind(); k != '[' && k != 'n' {
		return fmt.Errorf("tools: %w", rd.Array(nil))
	}
	return rd.Array(func(i int) error {
		var t wireTool
		hosted, err := readTool(rd, &t)
		if err != nil {
			return fmt.Errorf("tools[%d]: %w", i, err)
		}
		if t.FunctionDeclarations == nil {
			d.drop(hosted)
			return nil
		}
		for _, f := range t.FunctionDeclarations {
			d.r.Tools = append(d.r.Tools, conv.Tool{
				Kind: conv.ToolFunction, Name: f.Name, Description: f.Description, Schema: schemaIn(&f),
			})
		}
		return nil
	})
}

func (d *requestDecoder) toolConfig() error {
	d.r.ToolChoice = conv.ToolChoice{}
	var tc wireToolConfig
	if err := readToolConfig(d.rd, &tc); err != nil {
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

// genOrder are the generationConfig members the model carries, in the
// order their errors were checked in.
var genOrder = []string{"maxOutputTokens", "temperature", "topP", "stopSequences", "thinkingConfig"}

// generationConfig takes the members the model carries (names matched
// exactly); the others stay in Extra["generationConfig"], for a Gemini
// upstream.
func (d *requestDecoder) generationConfig() error {
	rd, r := d.rd, d.r
	r.MaxTokens, r.Temperature, r.TopP, r.Stop, r.Reasoning = nil, nil, nil, nil, conv.Reasoning{}
	d.genExtra = nil
	var thinking *wireThinking
	var errs conv.Refusals
	err := rd.Object(func(key []byte) error {
		var read func() error
		switch string(key) {
		case "maxOutputTokens":
			read = func() error { return rd.Int64(&r.MaxTokens) }
		case "temperature":
			read = func() error { return rd.Float64(&r.Temperature) }
		case "topP":
			read = func() error { return rd.Float64(&r.TopP) }
		case "stopSequences":
			read = func() error { return rd.Strings(&r.Stop) }
		case "thinkingConfig":
			read = func() error {
				thinking = nil
				return conv.ObjectInto(rd, &thinking, thinkingMember(rd, &thinking))
			}
		default:
			raw, err := rd.Raw()
			if err != nil {
				return err
			}
			if d.genExtra == nil {
				d.genExtra = make(map[string]json.RawMessage)
			}
			d.genExtra[string(key)] = raw
			return nil
		}
		return errs.Read(rd, string(key), read)
	})
	if err != nil {
		return fmt.Errorf("generationConfig: %w", err)
	}
	for _, name := range genOrder {
		if errs[name] != nil {
			return fmt.Errorf("generationConfig.%s: %w", name, errs[name])
		}
	}
	if thinking != nil {
		r.Reasoning = reasoningIn(thinking)
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
