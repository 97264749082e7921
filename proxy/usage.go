package proxy

import (
	"encoding/json"
	"strings"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy/translate"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Usage is one attempt's token counts as its upstream reported them,
// normalised across the protocols (docs/BEHAVIOUR.md#usage): Input excludes
// the tokens read from or written to the prompt cache (Anthropic's
// meaning; OpenAI's prompt_tokens and input_tokens include cached tokens,
// so their cached count is taken out); Output includes Reasoning.
// Estimated: the upstream reported nothing and ccmesh counted with its
// tokenizer.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Reasoning  int64 `json:"reasoning"`
	Estimated  bool  `json:"estimated"`
}

// PromptTotal is every input token, cached or not.
func (u Usage) PromptTotal() int64 { return u.Input + u.CacheRead + u.CacheWrite }

// Add adds v's counts to u; the sum is estimated when either is.
func (u *Usage) Add(v Usage) {
	u.Input += v.Input
	u.Output += v.Output
	u.CacheRead += v.CacheRead
	u.CacheWrite += v.CacheWrite
	u.Reasoning += v.Reasoning
	u.Estimated = u.Estimated || v.Estimated
}

// merge takes the counts a later report of the same answer gives: a
// stream may report in parts (Anthropic's message_start has the input,
// message_delta the final output), and a zero in a later report means
// "not said", not "none".
func (u *Usage) merge(v Usage) {
	for _, f := range []struct {
		dst *int64
		src int64
	}{
		{&u.Input, v.Input}, {&u.Output, v.Output}, {&u.CacheRead, v.CacheRead},
		{&u.CacheWrite, v.CacheWrite}, {&u.Reasoning, v.Reasoning},
	} {
		if f.src > 0 {
			*f.dst = f.src
		}
	}
}

// usageOf is u in the proxy's type.
func usageOf(u conv.Usage, ok bool) (Usage, bool) {
	return Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, Reasoning: u.Reasoning}, ok
}

// usageOfBody reads a non-streamed answer's top-level usage, as protocol
// p's codec reads it (conv.Spec.BodyUsage).
func usageOfBody(p Protocol, b []byte) (Usage, bool) {
	return usageOf(p.Spec().BodyUsage(b))
}

// usageOfEvent reads usage from one SSE data payload, as protocol p's
// codec reads it (conv.Spec.EventUsage): Anthropic message_start
// (message.usage) and message_delta (usage), the Chat usage chunk (usage)
// and Responses' response.completed (response.usage).
func usageOfEvent(p Protocol, data []byte) (Usage, bool) {
	return usageOf(p.Spec().EventUsage(data))
}

// meter is one attempt's usage as it is read, and the model its answer
// names (answered.go).
type meter struct {
	usage Usage
	seen  bool
	model string
	// text collects the answer's text when the upstream may not report
	// usage (a Chat stream whose client did not ask for it), for the
	// estimate; nil when not collecting.
	text *strings.Builder
}

// maxEstimateText bounds the text kept for an output estimate.
const maxEstimateText = 1 << 20

func (m *meter) add(u Usage, ok bool) {
	if ok {
		m.usage.merge(u)
		m.seen = true
	}
}

// noteText keeps s for the output estimate.
func (m *meter) noteText(s string) {
	if m.text != nil && m.text.Len() < maxEstimateText {
		m.text.WriteString(s)
	}
}

// noteBody reads the usage and the model of a non-streamed answer from e.
func (q *request) noteBody(e *endpoint, body []byte) {
	q.meter.add(usageOf(e.spec.BodyUsage(body)))
	if q.meter.model == "" {
		q.meter.model = modelOf(body)
	}
}

// noteEvent reads the usage an SSE event from e carries, and the model
// the first event that names one names.
func (q *request) noteEvent(e *endpoint, data []byte) {
	q.meter.add(usageOf(e.spec.EventUsage(data)))
	if q.meter.model == "" {
		q.meter.model = modelOf(data)
	}
}

// finishUsage is the attempt's usage once it answered: what the upstream
// reported, or an estimate — the client's request counted with the BPE
// tokenizer, and the answer's text when ccmesh kept it.
func (q *request) finishUsage() *Usage {
	if q.inbound.Count {
		return nil // counting tokens costs none
	}
	if q.meter.seen {
		u := q.meter.usage
		return &u
	}
	u := Usage{Estimated: true}
	if r, err := q.clientRequest(); err == nil {
		u.Input = translate.CountTokens(r)
	}
	if q.meter.text != nil {
		u.Output = translate.CountText(q.meter.text.String())
	}
	return &u
}

// startMeter readies the meter for an attempt on e: the text of a stream
// passed through is kept when its client did not ask for usage, which the
// upstream then does not report (conv.Spec.UsageAsked: Chat's
// stream_options.include_usage).
func (q *request) startMeter(e *endpoint) {
	q.meter = meter{}
	if e.protocol == q.pi && q.info.stream && e.spec.UsageAsked != nil && !e.spec.UsageAsked(q.body) {
		q.meter.text = &strings.Builder{}
	}
}

// attemptUsage is the usage an attempt that ended with res records: an
// answered attempt's, estimated when the upstream said nothing; a failed
// one's only as far as the upstream reported it before failing. The
// record's totals add it up.
func (q *request) attemptUsage(res result) *Usage {
	var u *Usage
	switch {
	case res.outcome.Kind == breaker.Success:
		u = q.finishUsage()
	case q.meter.seen:
		v := q.meter.usage
		u = &v
	}
	if u == nil {
		return nil
	}
	if q.rec.Usage == nil {
		q.rec.Usage = &Usage{}
	}
	q.rec.Usage.Add(*u)
	q.rec.TokensIn, q.rec.TokensOut = u.PromptTotal(), u.Output
	return u
}

// Cost is an amount in US dollars, or no price: it marshals as a number,
// or as null when no price matched the model — never as 0.
type Cost struct {
	USD    float64
	Priced bool
}

// MarshalJSON writes the amount, or null without a price.
func (c Cost) MarshalJSON() ([]byte, error) {
	if !c.Priced {
		return []byte("null"), nil
	}
	return json.Marshal(c.USD)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Cost) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*c = Cost{}
		return nil
	}
	if err := json.Unmarshal(b, &c.USD); err != nil {
		return err
	}
	c.Priced = true
	return nil
}
