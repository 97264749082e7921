package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// stopIn maps a finishReason (ai.google.dev/api/generate-content#FinishReason)
// to a stop reason: STOP ends the turn (a tool use when the answer calls a
// function — Gemini says STOP then too); MAX_TOKENS is max_tokens; the
// safety and policy stops (SAFETY, RECITATION, BLOCKLIST,
// PROHIBITED_CONTENT, SPII, IMAGE_SAFETY, …) are refusals; the others
// (a malformed function call, OTHER, LANGUAGE) end the turn.
func stopIn(reason string, called bool) conv.StopReason {
	switch reason {
	case "MAX_TOKENS":
		return conv.StopMaxTokens
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
		"IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return conv.StopRefusal
	}
	if called {
		return conv.StopToolUse
	}
	return conv.StopEnd
}

// stopOut is the finishReason a Gemini client gets. Gemini has no
// tool-use stop (its clients read the function calls) and no stop
// sequence report: both are STOP.
func stopOut(s conv.StopReason) string {
	switch s {
	case conv.StopMaxTokens:
		return "MAX_TOKENS"
	case conv.StopRefusal:
		return "SAFETY"
	}
	return "STOP"
}

// DecodeResponse reads a generateContent answer: the first candidate's
// parts. A prompt blocked before any candidate is a refusal without
// content; a 200 with neither candidates nor prompt feedback is no answer.
func (c codec) DecodeResponse(body []byte) (*conv.Response, error) {
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		return c.decodeArray(b)
	}
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, fmt.Errorf("gemini response: %w", err)
	}
	if w.Error != nil {
		return nil, fmt.Errorf("gemini response: %s: %s", w.Error.Status, w.Error.Message)
	}
	resp := &conv.Response{ID: w.ResponseID, Model: w.ModelVersion, Usage: usageIn(w.UsageMetadata), Parts: []conv.Part{}}
	cand := first(w.Candidates)
	if cand == nil {
		if w.PromptFeedback == nil || w.PromptFeedback.BlockReason == "" {
			return nil, errors.New("gemini response: no candidates")
		}
		resp.Stop = conv.StopRefusal
		return resp, nil
	}
	called := false
	if cand.Content != nil {
		for i := range cand.Content.Parts {
			p, ok := partIn(&cand.Content.Parts[i])
			if !ok || p.Kind == conv.PartToolResult {
				continue
			}
			if p.Kind == conv.PartToolCall {
				if p.CallID == "" {
					p.CallID = newCallID()
				}
				c.store.Put(c.key, p.CallID, p.GeminiSignature)
				called = true
			}
			resp.Parts = appendPart(resp.Parts, p)
		}
	}
	resp.Stop = stopIn(cand.FinishReason, called)
	return resp, nil
}

// first is the first candidate (index 0; with candidateCount above one a
// stream's chunk may carry the others too), nil when there is none.
func first(cands []wireCandidate) *wireCandidate {
	for i := range cands {
		if cands[i].Index == 0 {
			return &cands[i]
		}
	}
	return nil
}

// decodeArray reads the JSON-array form of streamGenerateContent (what
// Gemini answers a stream asked for without alt=sse): its chunks run
// through the stream decoder and are collected into one answer.
func (c codec) decodeArray(body []byte) (*conv.Response, error) {
	var chunks []json.RawMessage
	if err := json.Unmarshal(body, &chunks); err != nil {
		return nil, fmt.Errorf("gemini response: %w", err)
	}
	d := c.StreamDecoder()
	col := conv.NewCollect()
	for _, ch := range chunks {
		if err := d.Decode("", ch, col.Add); err != nil {
			return nil, fmt.Errorf("gemini response: %w", err)
		}
	}
	complete := d.End(col.Add)
	if col.Err != nil {
		return nil, fmt.Errorf("gemini response: %s: %s", col.Err.Type, col.Err.Message)
	}
	resp, _ := col.Response()
	if !complete {
		return nil, errors.New("gemini response: a streamed answer without a finish reason")
	}
	if resp.Parts == nil {
		resp.Parts = []conv.Part{}
	}
	return resp, nil
}

// outResponse is a GenerateContentResponse as a Gemini client reads it.
type outResponse struct {
	Candidates    []outCandidate `json:"candidates"`
	UsageMetadata *outUsage      `json:"usageMetadata,omitempty"`
	ModelVersion  string         `json:"modelVersion,omitempty"`
	ResponseID    string         `json:"responseId,omitempty"`
}

type outCandidate struct {
	Content      wireContent `json:"content"`
	FinishReason string      `json:"finishReason,omitempty"`
	Index        int         `json:"index"`
}

// EncodeResponse writes resp as a generateContent answer for a client
// that sent req.
func (codec) EncodeResponse(resp *conv.Response, req *conv.Request) ([]byte, error) {
	resp = req.ClientResponse(resp)
	out := outResponse{ModelVersion: resp.Model, ResponseID: resp.ID, UsageMetadata: usageOut(resp.Usage)}
	if req != nil && req.Model != "" {
		out.ModelVersion = req.Model
	}
	content := wireContent{Role: "model", Parts: []wirePart{}}
	for i := range resp.Parts {
		if w, ok := answerPart(&resp.Parts[i]); ok {
			content.Parts = append(content.Parts, w)
		}
	}
	carryCalls(content.Parts, resp.Parts)
	out.Candidates = []outCandidate{{Content: content, FinishReason: stopOut(resp.Stop)}}
	return conv.Marshal(out), nil
}

// answerPart writes one part of an answer for a Gemini client. An
// Anthropic thinking signature (or redacted thinking) rides in the
// thought part's thoughtSignature, marked, so that the client's next turn
// gives it back to an Anthropic upstream (the request decoder reads the
// marks; the request encoder never sends them to Gemini).
func answerPart(p *conv.Part) (wirePart, bool) {
	switch p.Kind {
	case conv.PartText:
		return wirePart{Text: ptr(p.Text), ThoughtSignature: p.GeminiSignature}, p.Text != "" || p.GeminiSignature != ""
	case conv.PartReasoning:
		w := wirePart{Text: ptr(p.Text), Thought: true, ThoughtSignature: thoughtSignatureOut(p)}
		return w, p.Text != "" || w.ThoughtSignature != ""
	case conv.PartToolCall:
		return wirePart{
			FunctionCall:     &wireCall{ID: wireID(p.CallID), Name: p.Name, Args: json.RawMessage(conv.CanonicalArgs(p.Args))},
			ThoughtSignature: p.GeminiSignature,
		}, true
	}
	return wirePart{}, false
}

func thoughtSignatureOut(p *conv.Part) string {
	switch {
	case p.GeminiSignature != "":
		return p.GeminiSignature
	case p.Signature != "":
		return conv.SignaturePrefix + p.Signature
	case p.Redacted != "":
		return conv.RedactedPrefix + p.Redacted
	}
	return ""
}
