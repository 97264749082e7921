package gemini

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// fallbackSignature is the value Google documents for a function call
// whose signature is unknown — history from another model, or calls the
// client made up — to skip Gemini 3's signature check
// (ai.google.dev/gemini-api/docs/thought-signatures, FAQ; Vertex AI
// documents the same value, so it serves both).
const fallbackSignature = "skip_thought_signature_validator"

// maxStops is the most stopSequences the API takes (GenerationConfig).
const maxStops = 5

// EncodeRequest writes r as a generateContent body. r.Model and r.Stream
// are not in it: they go in the path (Path).
func (c codec) EncodeRequest(r *conv.Request) ([]byte, error) {
	if r.PreviousResponseID != "" {
		return nil, conv.Unsupported("the Gemini API has no previous_response_id; the whole history must be sent")
	}
	out := map[string]any{}
	if r.From == Protocol {
		for k, v := range r.Extra {
			out[k] = v
		}
	}
	e := &requestEncoder{c: c, own: r.From == Protocol, names: map[string]string{}}
	contents, system := e.messages(r)
	if len(contents) == 0 {
		return nil, conv.Unsupported("the Gemini API needs at least one content and the request has none")
	}
	out["contents"] = contents
	system = append(textParts(r.System), system...)
	if len(system) > 0 {
		out["systemInstruction"] = wireContent{Parts: system}
	} else {
		delete(out, "systemInstruction")
	}
	if len(r.Tools) > 0 {
		out["tools"] = []wireTool{{FunctionDeclarations: declarations(r.Tools)}}
		if tc := toolConfigOut(r.ToolChoice); tc != nil {
			out["toolConfig"] = tc
		}
	}
	if gc := generationConfigOut(r); len(gc) > 0 {
		out["generationConfig"] = gc
	} else {
		delete(out, "generationConfig")
	}
	return conv.MarshalObject(out, r.SizeHint()), nil
}

type requestEncoder struct {
	c     codec
	own   bool              // the request came from a Gemini client
	names map[string]string // call id → function name, for the results
}

func textParts(parts []conv.Part) []wirePart {
	var out []wirePart
	for _, p := range parts {
		if p.Text != "" {
			out = append(out, wirePart{Text: ptr(p.Text)})
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// messages writes the turns; the text of system messages after the
// leading ones goes to the system instruction, as Gemini has no system
// turn.
func (e *requestEncoder) messages(r *conv.Request) (contents []wireContent, system []wirePart) {
	for _, m := range r.Messages {
		switch m.Role {
		case conv.RoleSystem:
			system = append(system, textParts(m.Parts)...)
		case conv.RoleAssistant:
			if c := e.modelTurn(m.Parts); len(c.Parts) > 0 {
				contents = append(contents, c)
			}
		default:
			if c := e.userTurn(m.Parts); len(c.Parts) > 0 {
				contents = append(contents, c)
			}
		}
	}
	return contents, system
}

// modelTurn writes an assistant message. Reasoning goes back only with a
// signature Gemini made, or as a Gemini client sent it (another
// protocol's reasoning is not Gemini's, and its signatures are refused);
// every function call gets
// its signature back — from the part, else from the store — and the first
// call of the turn the fallback when neither has it (Gemini checks the
// first call of each step; with parallel calls only that one is signed).
func (e *requestEncoder) modelTurn(parts []conv.Part) wireContent {
	c := wireContent{Role: "model"}
	firstCall := true
	for _, p := range parts {
		switch p.Kind {
		case conv.PartText:
			if p.Text != "" || p.GeminiSignature != "" {
				c.Parts = append(c.Parts, wirePart{Text: ptr(p.Text), ThoughtSignature: p.GeminiSignature})
			}
		case conv.PartReasoning:
			if p.GeminiSignature != "" || (e.own && p.Text != "" && p.Signature == "" && p.Redacted == "") {
				c.Parts = append(c.Parts, wirePart{Text: ptr(p.Text), Thought: true, ThoughtSignature: p.GeminiSignature})
			}
		case conv.PartToolCall:
			e.names[p.CallID] = p.Name
			sig := ownSignature(p.GeminiSignature)
			if sig == "" {
				sig, _ = e.c.store.Get(e.c.key, p.CallID)
			}
			if sig == "" && firstCall {
				sig = fallbackSignature
			}
			firstCall = false
			c.Parts = append(c.Parts, wirePart{
				FunctionCall:     &wireCall{ID: wireID(p.CallID), Name: p.Name, Args: json.RawMessage(conv.CanonicalArgs(p.Args))},
				ThoughtSignature: sig,
			})
		case conv.PartImage, conv.PartDocument:
			c.Parts = append(c.Parts, mediaOut(&p)...)
		}
	}
	return c
}

// userTurn writes a user message: function responses with their images,
// text, images and documents, in order.
func (e *requestEncoder) userTurn(parts []conv.Part) wireContent {
	c := wireContent{Role: "user"}
	for _, p := range parts {
		switch p.Kind {
		case conv.PartText:
			if p.Text != "" {
				c.Parts = append(c.Parts, wirePart{Text: ptr(p.Text)})
			}
		case conv.PartImage, conv.PartDocument:
			c.Parts = append(c.Parts, mediaOut(&p)...)
		case conv.PartToolResult:
			c.Parts = append(c.Parts, e.result(&p)...)
		}
	}
	return c
}

// result writes a tool result as a FunctionResponse named as its call
// (Gemini requires the name), followed by its images as parts of the
// turn, which every Gemini model reads.
func (e *requestEncoder) result(p *conv.Part) []wirePart {
	name := e.names[p.CallID]
	if name == "" {
		name = p.Name
	}
	if name == "" {
		name = "tool"
	}
	var text []string
	var images []wirePart
	for _, c := range p.Content {
		switch c.Kind {
		case conv.PartText:
			text = append(text, c.Text)
		case conv.PartImage:
			images = append(images, mediaOut(&c)...)
		}
	}
	out := []wirePart{{FunctionResponse: &wireResult{
		ID: wireID(p.CallID), Name: name, Response: responseOut(strings.Join(text, "\n"), p.IsError),
	}}}
	return append(out, images...)
}

// responseOut is a result's response object: its text when that is a
// JSON object already (what a Gemini client's function returned),
// {"error": text} for an error, else {"output": text}, Gemini CLI's form.
func responseOut(text string, isError bool) json.RawMessage {
	if isError {
		return conv.Marshal(map[string]string{"error": text})
	}
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	return conv.Marshal(map[string]string{"output": text})
}

// mediaOut writes an image or a document: base64 data inline, a URL as
// file data (the API needs its MIME type: the part's, else guessed from the
// URL's extension), a plain-text document as text.
func mediaOut(p *conv.Part) []wirePart {
	switch {
	case p.Data != "":
		return []wirePart{{InlineData: &wireBlob{MimeType: mimeOr(p.MediaType, p.Kind), Data: p.Data}}}
	case p.URL != "":
		mime := p.MediaType
		if mime == "" {
			mime = guessMime(p.URL, p.Kind)
		}
		return []wirePart{{FileData: &wireFile{MimeType: mime, FileURI: p.URL}}}
	case p.Kind == conv.PartDocument && p.Text != "":
		return []wirePart{{Text: ptr(p.Text)}}
	}
	return nil
}

func mimeOr(m string, k conv.PartKind) string {
	if m != "" {
		return m
	}
	if k == conv.PartImage {
		return "image/png"
	}
	return "application/pdf"
}

func guessMime(u string, k conv.PartKind) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	switch strings.ToLower(path.Ext(u)) {
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".png":
		return "image/png"
	case ".webp":
		return "image/webp"
	case ".gif":
		return "image/gif"
	case ".pdf":
		return "application/pdf"
	case ".txt":
		return "text/plain"
	}
	if k == conv.PartImage {
		return "image/jpeg"
	}
	return "application/pdf"
}

// declarations writes the tools as function declarations; a custom tool
// is a function of one string (conv.CustomSchema).
func declarations(tools []conv.Tool) []wireFunction {
	out := make([]wireFunction, 0, len(tools))
	for _, t := range tools {
		schema := t.Schema
		if t.Kind == conv.ToolCustom {
			schema = conv.CustomSchema
		}
		out = append(out, wireFunction{Name: t.Name, Description: t.Description, ParametersJSONSchema: schemaOut(schema)})
	}
	return out
}

// toolConfigOut maps the tool choice: auto AUTO, any ANY, none NONE, a
// named tool ANY with only that name allowed. Gemini has no switch for
// parallel calls.
func toolConfigOut(tc conv.ToolChoice) *wireToolConfig {
	var fc wireCallingConfig
	switch tc.Mode {
	case conv.ChoiceAuto:
		fc.Mode = "AUTO"
	case conv.ChoiceAny:
		fc.Mode = "ANY"
	case conv.ChoiceNone:
		fc.Mode = "NONE"
	case conv.ChoiceTool:
		fc.Mode, fc.AllowedFunctionNames = "ANY", []string{tc.Name}
	default:
		return nil
	}
	return &wireToolConfig{FunctionCallingConfig: &fc}
}

// generationConfigOut writes the limits, sampling and thinking; a Gemini
// client's other members (kept in Extra) come first.
func generationConfigOut(r *conv.Request) map[string]any {
	gc := map[string]any{}
	if raw, ok := r.Extra["generationConfig"]; ok && r.From == Protocol {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) == nil {
			for k, v := range m {
				gc[k] = v
			}
		}
	}
	if r.MaxTokens != nil {
		gc["maxOutputTokens"] = *r.MaxTokens
	}
	if r.Temperature != nil {
		gc["temperature"] = *r.Temperature
	}
	if r.TopP != nil {
		gc["topP"] = *r.TopP
	}
	if len(r.Stop) > 0 {
		gc["stopSequences"] = r.Stop[:min(len(r.Stop), maxStops)]
	}
	if t := thinkingOut(r); t != nil {
		gc["thinkingConfig"] = t
	}
	return gc
}

// thinkingOut maps the reasoning asked for to a thinkingConfig
// (ai.google.dev/gemini-api/docs/thinking): Gemini 3 models take an
// effort as thinkingLevel (minimal, low, medium, high; the levels above
// high fold into it), the others a thinkingBudget (the effort's
// conv.BudgetForEffort; -1, dynamic, when thinking is on without either);
// a budget goes as thinkingBudget to both, as Gemini 3 still takes it.
// "none" is off: budget 0, or Gemini 3's lowest level. Thoughts are
// included (includeThoughts) when the client turned thinking on, or
// asked for summaries; a Gemini client's own setting is kept.
func thinkingOut(r *conv.Request) *wireThinking {
	rs := r.Reasoning
	if rs == (conv.Reasoning{}) {
		return nil
	}
	t := &wireThinking{}
	level := strings.Contains(strings.ToLower(r.Model), "gemini-3")
	switch e := rs.Effort; {
	case rs.BudgetTokens > 0:
		t.ThinkingBudget = ptr(rs.BudgetTokens)
	case e == "none" && level:
		t.ThinkingLevel = "minimal"
	case e == "none":
		t.ThinkingBudget = ptr(int64(0))
	case e != "" && level:
		t.ThinkingLevel = e
		if e == "xhigh" || e == "max" {
			t.ThinkingLevel = "high"
		}
	case e != "" && conv.BudgetForEffort(e) > 0:
		t.ThinkingBudget = ptr(conv.BudgetForEffort(e))
	case rs.Enabled && !level:
		t.ThinkingBudget = ptr(int64(-1))
	}
	include := rs.Summary != "" && rs.Summary != "none"
	if r.From != Protocol {
		include = include || rs.Enabled
	}
	if include && rs.Effort != "none" {
		t.IncludeThoughts = ptr(true)
	}
	if *t == (wireThinking{}) {
		return nil
	}
	return t
}
