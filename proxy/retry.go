package proxy

import (
	"bytes"
	"net/http"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Failover can move a conversation between protocols midway, and what one
// upstream produced another may refuse. Two such refusals get one more try
// on the same endpoint with the request adjusted, not counted by the
// breaker (docs/BEHAVIOUR.md#translation): an Anthropic upstream refusing a
// thinking block (a signature it did not make, or blocks in an order it
// does not accept) gets the request without thinking blocks; an upstream
// refusing a reasoning effort gets the next lower level, or none when it
// takes no effort at all; an endpoint of another protocol refusing the
// output limit (Claude Code asks for up to 128000 tokens, many providers
// allow 8192) gets none, or 8192 where its protocol requires one.

// adjustment is how a retried request differs from the client's.
type adjustment uint8

const (
	adjustNone          adjustment = iota
	adjustStripThinking            // reasoning parts and their signatures left out
	adjustStepEffort               // the reasoning effort one level lower
	adjustDropEffort               // no reasoning effort at all
	adjustMaxTokens                // no output limit, or a small one where required
	// adjustDropRefused names, in the log, an attempt sent again without
	// the parts its endpoint refused (refused.go); it changes nothing itself.
	adjustDropRefused
)

func (a adjustment) String() string { return string(a.word()) }

// word is what the request log calls a; "" for adjustNone.
func (a adjustment) word() Adjustment {
	switch a {
	case adjustStripThinking:
		return AdjustStripThinking
	case adjustStepEffort:
		return AdjustStepEffort
	case adjustDropEffort:
		return AdjustDropEffort
	case adjustMaxTokens:
		return AdjustMaxTokens
	case adjustDropRefused:
		return AdjustDropRefused
	}
	return ""
}

// apply changes r, a copy of the client's request bound for protocol to,
// as a says.
func (a adjustment) apply(r *conv.Request, to Protocol) {
	switch a {
	case adjustStripThinking:
		msgs := make([]conv.Message, 0, len(r.Messages))
		for _, m := range r.Messages {
			parts := make([]conv.Part, 0, len(m.Parts))
			for _, p := range m.Parts {
				if p.Kind != conv.PartReasoning {
					parts = append(parts, p)
				}
			}
			if len(parts) > 0 {
				msgs = append(msgs, conv.Message{Role: m.Role, Parts: parts})
			}
		}
		r.Messages = msgs
	case adjustStepEffort:
		effort := r.Reasoning.Effort
		if effort == "" {
			effort = conv.EffortForBudget(r.Reasoning.BudgetTokens)
		}
		if next := conv.StepDown(effort); next != "" {
			r.Reasoning.Effort, r.Reasoning.BudgetTokens = next, conv.BudgetForEffort(next)
		} else {
			r.Reasoning = conv.Reasoning{}
		}
	case adjustDropEffort:
		r.Reasoning = conv.Reasoning{}
	case adjustMaxTokens:
		r.MaxTokens = nil
		if n := to.Spec().RequiredMaxTokens; n > 0 {
			r.MaxTokens = &n
		}
	}
}

var (
	wordSignature = []byte("signature")
	wordThinking  = []byte("thinking")
	wordEffort    = []byte("effort")
	wordMaxTokens = [][]byte{[]byte("max_tokens"), []byte("max_completion_tokens"), []byte("max_output_tokens")}
	// Words of an upstream that takes no such parameter at all.
	wordsUnsupported = [][]byte{[]byte("not supported"), []byte("unsupported parameter"), []byte("unrecognized"), []byte("unknown parameter"), []byte("extra inputs")}
)

func containsAny(b []byte, words [][]byte) bool {
	for _, w := range words {
		if bytes.Contains(b, w) {
			return true
		}
	}
	return false
}

// adjustmentFor decides whether a 400 from e refuses something an
// adjusted request would leave out. Only the first refusal is retried.
func (q *request) adjustmentFor(e *endpoint, status int, body []byte) adjustment {
	if status != http.StatusBadRequest || q.adjusted != adjustNone || q.inbound.Count {
		return adjustNone
	}
	lower := bytes.ToLower(body)
	thinking := e.spec.SignedThinking && (bytes.Contains(lower, wordSignature) || bytes.Contains(lower, wordThinking))
	effort := bytes.Contains(lower, wordEffort)
	limit := containsAny(lower, wordMaxTokens)
	if !thinking && !effort && !limit {
		return adjustNone
	}
	r, err := q.clientRequest()
	if err != nil {
		return adjustNone
	}
	switch {
	case thinking && hasReasoning(r):
		return adjustStripThinking
	case effort && (r.Reasoning.Effort != "" || r.Reasoning.BudgetTokens > 0):
		if containsAny(lower, wordsUnsupported) {
			return adjustDropEffort
		}
		return adjustStepEffort
	case limit && e.protocol != q.pi && r.MaxTokens != nil && (e.spec.RequiredMaxTokens == 0 || *r.MaxTokens > e.spec.RequiredMaxTokens):
		// Only translated: a client of the endpoint's own protocol chose
		// its limit for it.
		return adjustMaxTokens
	}
	return adjustNone
}

func hasReasoning(r *conv.Request) bool {
	for _, m := range r.Messages {
		for _, p := range m.Parts {
			if p.Kind == conv.PartReasoning {
				return true
			}
		}
	}
	return false
}
