package responses

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// wireItem is one input or output item, with the members this codec reads
// of every item type it translates.
type wireItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments json.RawMessage `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
	Summary   []wireText      `json:"summary"`
	Encrypted *string         `json:"encrypted_content"`
}

// wirePart is one element of a message's content or of a tool output.
type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL string `json:"image_url"`
	FileID   string `json:"file_id"`
	FileData string `json:"file_data"`
	FileURL  string `json:"file_url"`
	Filename string `json:"filename"`
}

// arguments is a function_call's arguments text: a JSON string as the API
// defines it, or (leniently) an object written inline.
func (it *wireItem) arguments() string {
	if isNull(it.Arguments) {
		return ""
	}
	var s string
	if json.Unmarshal(it.Arguments, &s) == nil {
		return s
	}
	return string(it.Arguments)
}

// contentParts reads a content member: a string (one text part) or an
// array of parts. Empty texts are left out; dropped collects the part
// types that cannot be translated.
func contentParts(raw json.RawMessage, dropped *[]string) ([]conv.Part, error) {
	if isNull(raw) {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, nil
		}
		return []conv.Part{{Kind: conv.PartText, Text: s}}, nil
	}
	var wps []wirePart
	if err := json.Unmarshal(raw, &wps); err != nil {
		return nil, fmt.Errorf("content is neither a string nor an array of parts: %w", err)
	}
	return partsOf(wps, dropped)
}

// partsOf translates content parts; dropped collects the part types that
// cannot be translated.
func partsOf(wps []wirePart, dropped *[]string) ([]conv.Part, error) {
	parts := make([]conv.Part, 0, len(wps))
	for _, wp := range wps {
		p, ok, err := partOf(wp)
		if err != nil {
			return nil, err
		}
		if !ok {
			if wp.Type != "" && !isText(wp.Type) {
				*dropped = append(*dropped, "content part "+wp.Type)
			}
			continue
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// isText reports whether a content part type carries text.
func isText(typ string) bool {
	switch typ {
	case "input_text", "output_text", "text", "refusal", "summary_text", "reasoning_text":
		return true
	}
	return false
}

// partOf translates one content part; ok is false for an empty text or a
// part type with no neutral equivalent.
func partOf(wp wirePart) (conv.Part, bool, error) {
	switch wp.Type {
	case "input_text", "output_text", "text":
		return conv.Part{Kind: conv.PartText, Text: wp.Text}, wp.Text != "", nil
	case "refusal":
		t := wp.Refusal
		if t == "" {
			t = wp.Text
		}
		return conv.Part{Kind: conv.PartText, Text: t}, t != "", nil
	case "input_image":
		if wp.ImageURL == "" {
			if wp.FileID != "" {
				return conv.Part{}, false, fmt.Errorf("input_image %q refers to an uploaded file (file_id), which cannot be translated; send the image as a data URL in image_url", wp.FileID)
			}
			return conv.Part{}, false, nil
		}
		if mt, data, ok := parseDataURI(wp.ImageURL); ok {
			return conv.Part{Kind: conv.PartImage, MediaType: mt, Data: data}, true, nil
		}
		return conv.Part{Kind: conv.PartImage, URL: wp.ImageURL}, true, nil
	case "input_file":
		return filePart(wp)
	}
	return conv.Part{}, false, nil
}

// filePart translates an input_file: inline file_data (a data URI, or bare
// base64 typed by the file name) or a file_url. A text/plain file becomes
// a plain-text document (Text).
func filePart(wp wirePart) (conv.Part, bool, error) {
	p := conv.Part{Kind: conv.PartDocument, Filename: wp.Filename}
	switch {
	case wp.FileData != "":
		mt, data, ok := parseDataURI(wp.FileData)
		if !ok {
			mt, data = mediaTypeOf(wp.Filename), wp.FileData
		}
		p.MediaType, p.Data = mt, data
		if isPlainText(mt) {
			if text, err := base64.StdEncoding.DecodeString(data); err == nil {
				p.MediaType, p.Data, p.Text = "text/plain", "", string(text)
			}
		}
	case wp.FileURL != "":
		p.URL = wp.FileURL
	case wp.FileID != "":
		return p, false, fmt.Errorf("input_file %q refers to an uploaded file (file_id), which cannot be translated; send the file inline as file_data", wp.FileID)
	default:
		return p, false, nil
	}
	return p, true, nil
}

// mediaTypeOf guesses a file's media type from its name (PDF when unknown,
// the one file type every Responses model takes).
func mediaTypeOf(filename string) string {
	if mt := mime.TypeByExtension(path.Ext(filename)); mt != "" {
		mt, _, _ = strings.Cut(mt, ";")
		return mt
	}
	return "application/pdf"
}

// reasoningText is a reasoning item's text: its summaries joined by a blank
// line, or its raw reasoning_text content when it has no summary.
func reasoningText(it *wireItem) string {
	var b strings.Builder
	for _, s := range it.Summary {
		if s.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(s.Text)
	}
	if b.Len() > 0 || isNull(it.Content) {
		return b.String()
	}
	var content []wireText
	if json.Unmarshal(it.Content, &content) != nil {
		return ""
	}
	for _, c := range content {
		if c.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// reasoningPart translates a reasoning item. On the client side
// (fromClient) an encrypted_content carrying an Anthropic signature or
// redacted thinking becomes Signature / Redacted again.
func reasoningPart(it *wireItem, fromClient bool) conv.Part {
	return reasoningPartText(it, reasoningText(it), fromClient)
}

// reasoningPartText is reasoningPart of an item whose text is known.
func reasoningPartText(it *wireItem, text string, fromClient bool) conv.Part {
	p := conv.Part{Kind: conv.PartReasoning, Text: text, ItemID: it.ID}
	if it.Encrypted == nil {
		return p
	}
	enc := *it.Encrypted
	if fromClient {
		if sig, ok := strings.CutPrefix(enc, conv.SignaturePrefix); ok {
			p.Signature = sig
			return p
		}
		if red, ok := strings.CutPrefix(enc, conv.RedactedPrefix); ok {
			p.Redacted = red
			return p
		}
	}
	p.Encrypted = enc
	return p
}

// isEmptyReasoning reports whether a reasoning part holds nothing a
// protocol could send back.
func isEmptyReasoning(p conv.Part) bool {
	return p.Text == "" && p.Signature == "" && p.Redacted == "" && p.Encrypted == ""
}

// callPart translates a function_call or custom_tool_call item.
func callPart(it *wireItem) conv.Part { return callPartArgs(it, it.arguments()) }

// callPartArgs is callPart of an item whose arguments text is known.
func callPartArgs(it *wireItem, args string) conv.Part {
	p := conv.Part{Kind: conv.PartToolCall, CallID: it.CallID, Name: flatName(it.Namespace, it.Name)}
	if p.CallID == "" {
		p.CallID = it.ID
	}
	if it.Type == "custom_tool_call" {
		p.Args = conv.CustomArgs(it.Input)
	} else {
		p.Args = conv.CanonicalArgs(args)
	}
	return p
}

// messageText is the text of an output message item's content.
func messageText(it *wireItem) string {
	var dropped []string
	parts, _ := contentParts(it.Content, &dropped)
	var b strings.Builder
	for _, p := range parts {
		if p.Kind == conv.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
