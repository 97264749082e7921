package proxy

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// Routing rules (docs/BEHAVIOUR.md#routing-rules): in order, the first
// rule whose When holds decides a request's candidates. The proxy and the
// dry run (Server.ExplainSample) both ask matchRules; they differ only in
// where the facts come from (a request, or a sample).

// Rule is one routing rule, in the settings' shape.
type Rule struct {
	Name string   `json:"name"`
	When RuleWhen `json:"when"`
	Then RuleThen `json:"then"`
}

// RuleWhen is a rule's conditions; every one given must hold, and an empty
// When always holds.
type RuleWhen struct {
	Protocol Protocol  `json:"protocol,omitempty"`
	Models   []string  `json:"models,omitempty"` // model patterns, as an endpoint's models
	Agent    RuleAgent `json:"agent,omitempty"`
	Thinking *bool     `json:"thinking,omitempty"`
	// InputTokensOver holds when the local estimate of the input tokens is
	// above it; 0 is no condition.
	InputTokensOver int64       `json:"input_tokens_over,omitempty" range:"0,100000000,0 (no condition) to 100 million"`
	Tools           RuleTools   `json:"tools,omitempty"`
	Images          *bool       `json:"images,omitempty"`
	Header          *RuleHeader `json:"header,omitempty"`
}

// RuleHeader holds when the request has header Name (any case) with a
// value matching Pattern ('*' is the wildcard, as in model patterns).
type RuleHeader struct {
	Name    string `json:"name"`
	Pattern string `json:"pattern"`
}

// RuleThen is what a matching rule does.
type RuleThen struct {
	// Endpoints are endpoint names or tag:<tag> (every enabled endpoint
	// with the tag, in list order), tried in this order.
	Endpoints []string `json:"endpoints"`
	// ModelMap rewrites the model for the rule's endpoints, before an
	// endpoint's own model_map.
	ModelMap map[string]string `json:"model_map,omitempty"`
	Strategy Strategy          `json:"strategy,omitempty"` // "" is the setting's
	// Fallback: the normal candidates follow the rule's endpoints.
	Fallback bool `json:"fallback"`
}

// RuleAgent is which of Claude Code's conversations sent a request.
type RuleAgent string

const (
	AgentMain     RuleAgent = "main"
	AgentSubagent RuleAgent = "subagent"
)

// RuleAgents are the agents a rule can name.
var RuleAgents = []RuleAgent{AgentMain, AgentSubagent}

// Valid reports whether a is one of RuleAgents.
func (a RuleAgent) Valid() bool { return slices.Contains(RuleAgents, a) }

// RuleTools is a kind of tool a request offers.
type RuleTools string

// ToolsWebSearch: a hosted web-search tool is offered.
const ToolsWebSearch RuleTools = "web_search"

// RuleToolKinds are the tool kinds a rule can name.
var RuleToolKinds = []RuleTools{ToolsWebSearch}

// Valid reports whether t is one of RuleToolKinds.
func (t RuleTools) Valid() bool { return slices.Contains(RuleToolKinds, t) }

// TagPrefix marks a tag in a rule's endpoints.
const TagPrefix = "tag:"

// RuleMatch is one rule's verdict in a dry run (and why).
type RuleMatch struct {
	Name    string `json:"name"`
	Matched bool   `json:"matched"`
	Why     string `json:"why"`
}

// Headers of Claude Code's subagents (docs/BEHAVIOUR.md#routing-rules).
const (
	agentIDHeader  = "X-Claude-Code-Agent-Id"
	subagentMarker = "cc_is_subagent=true;"
)

// rule is a Rule compiled for the request path.
type rule struct {
	Rule
	models   []pattern
	header   pattern
	modelMap []mapping
	// endpoints are Then.Endpoints resolved: enabled endpoints, each once,
	// in the rule's order; pos is each one's index, by endpoint id.
	endpoints []*endpoint
	pos       map[int64]int
}

func compileRules(rules []Rule, all []*endpoint) []*rule {
	byName := make(map[string]*endpoint, len(all))
	inOrder := slices.Clone(all)
	slices.SortStableFunc(inOrder, func(a, b *endpoint) int {
		return cmp.Or(cmp.Compare(a.SortOrder, b.SortOrder), cmp.Compare(a.ID, b.ID))
	})
	for _, e := range all {
		byName[e.Name] = e
	}
	out := make([]*rule, 0, len(rules))
	for _, r := range rules {
		c := &rule{Rule: r, pos: map[int64]int{}, modelMap: compileMap(r.Then.ModelMap)}
		for _, m := range r.When.Models {
			c.models = append(c.models, compilePattern(m))
		}
		if h := r.When.Header; h != nil {
			c.header = compilePattern(h.Pattern)
		}
		add := func(e *endpoint) {
			if _, dup := c.pos[e.ID]; !dup && e.Enabled {
				c.pos[e.ID] = len(c.endpoints)
				c.endpoints = append(c.endpoints, e)
			}
		}
		for _, name := range r.Then.Endpoints {
			if tag, ok := strings.CutPrefix(name, TagPrefix); ok {
				for _, e := range inOrder {
					if slices.Contains(e.Tags, tag) {
						add(e)
					}
				}
			} else if e := byName[name]; e != nil {
				add(e)
			}
		}
		out = append(out, c)
	}
	return out
}

// has reports whether e (or the endpoint of a key variant) is one of the
// rule's endpoints.
func (r *rule) has(e *endpoint) bool {
	_, ok := r.pos[e.origin().ID]
	return ok
}

// mapModel applies the rule's model_map.
func (r *rule) mapModel(model string) string { return mapWith(r.modelMap, model) }

// facts are what rules ask of a request. A request computes each body
// fact when a rule first asks (liveFacts); a dry run has them given
// (Sample).
type facts interface {
	protocol() Protocol
	model() string
	headerValues(name string) []string
	agent() RuleAgent
	thinking() bool
	inputTokens() int64
	webSearch() bool
	images() bool
}

// matchRules is the first rule of rules whose conditions hold for f, nil
// when none does, with every rule's verdict up to and including it.
func matchRules(rules []*rule, f facts) (*rule, []RuleMatch) {
	trace := make([]RuleMatch, 0, len(rules))
	for _, r := range rules {
		why, ok := r.holds(f)
		trace = append(trace, RuleMatch{Name: r.Name, Matched: ok, Why: why})
		if ok {
			return r, trace
		}
	}
	return nil, trace
}

// holds checks r's conditions in a fixed order, cheapest first, and stops
// at the first that fails: the body is read only for a condition that
// needs it. why says which failed, or that all held.
func (r *rule) holds(f facts) (why string, ok bool) {
	w := &r.When
	if w.Protocol != "" && f.protocol() != w.Protocol {
		return fmt.Sprintf("protocol is %s, not %s", f.protocol(), w.Protocol), false
	}
	if len(r.models) > 0 && !slices.ContainsFunc(r.models, func(p pattern) bool { return p.match(f.model()) }) {
		return fmt.Sprintf("model %s matches none of %s", f.model(), strings.Join(w.Models, ", ")), false
	}
	if h := w.Header; h != nil {
		vals := f.headerValues(h.Name)
		if len(vals) == 0 {
			return fmt.Sprintf("header %s is absent", h.Name), false
		}
		if !slices.ContainsFunc(vals, r.header.match) {
			return fmt.Sprintf("header %s does not match %s", h.Name, h.Pattern), false
		}
	}
	if w.Agent != "" {
		if a := f.agent(); a != w.Agent {
			return fmt.Sprintf("agent is %s, not %s", a, w.Agent), false
		}
	}
	if w.Thinking != nil && f.thinking() != *w.Thinking {
		return "thinking is " + onOff(f.thinking()) + ", not " + onOff(*w.Thinking), false
	}
	if w.Images != nil && f.images() != *w.Images {
		if *w.Images {
			return "no image input", false
		}
		return "an image input is present", false
	}
	if w.Tools == ToolsWebSearch && !f.webSearch() {
		return "no web-search tool", false
	}
	if over := w.InputTokensOver; over > 0 {
		if n := f.inputTokens(); n <= over {
			return fmt.Sprintf("input tokens %d are not over %d", n, over), false
		}
	}
	return "every condition holds", true
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// liveFacts are a request's facts; the body's are computed at most once,
// from the request decoded by the client protocol's codec, which an
// attempt that translates then reuses (translate.go).
type liveFacts struct {
	q *request
	// each body fact, with whether it was computed
	tokens              int64
	think, web, img     bool
	haveTokens, haveReq bool
	req                 *conv.Request
}

func (f *liveFacts) protocol() Protocol { return f.q.proto }
func (f *liveFacts) model() string      { return f.q.model }

func (f *liveFacts) headerValues(name string) []string { return f.q.r.Header.Values(name) }

// agent: a subagent's requests carry its id in a header and
// cc_is_subagent=true; in the billing line at the start of the system
// prompt; the main conversation's carry neither.
func (f *liveFacts) agent() RuleAgent {
	if f.q.r.Header.Get(agentIDHeader) != "" {
		return AgentSubagent
	}
	// Most bodies do not hold the marker at all: they are not decoded.
	if !bytes.Contains(f.q.body, []byte(subagentMarker)) {
		return AgentMain
	}
	if billingLine(f.q.body) {
		return AgentSubagent
	}
	return AgentMain
}

// billingLine reports whether the system prompt of a Messages body has a
// billing line (a text block, or the string, starting with
// billingPrefix) that marks a subagent. The codec leaves that line out of
// the neutral model, so it is read here.
func billingLine(body []byte) bool {
	var doc struct {
		System json.RawMessage `json:"system"`
	}
	if json.Unmarshal(body, &doc) != nil || len(doc.System) == 0 {
		return false
	}
	var texts []string
	var one string
	if json.Unmarshal(doc.System, &one) == nil {
		texts = []string{one}
	} else {
		var blocks []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(doc.System, &blocks) != nil {
			return false
		}
		for _, b := range blocks {
			texts = append(texts, b.Text)
		}
	}
	for _, t := range texts {
		line, _, _ := strings.Cut(t, "\n")
		if strings.HasPrefix(line, billingPrefix) && strings.Contains(line, subagentMarker) {
			return true
		}
	}
	return false
}

// billingPrefix starts Claude Code's billing line.
const billingPrefix = "x-anthropic-billing-header:"

// decoded is the client's request in the neutral model; nil when the
// client's codec cannot read it (the body conditions then do not hold).
func (f *liveFacts) decoded() *conv.Request {
	if !f.haveReq {
		f.haveReq = true
		f.req, _ = f.q.clientRequest()
		if f.req != nil {
			f.think, f.web, f.img = f.req.Reasoning.Enabled, offersWebSearch(f.req), hasImage(f.req)
		}
	}
	return f.req
}

func (f *liveFacts) thinking() bool  { f.decoded(); return f.think }
func (f *liveFacts) webSearch() bool { f.decoded(); return f.web }
func (f *liveFacts) images() bool    { f.decoded(); return f.img }

func (f *liveFacts) inputTokens() int64 {
	if !f.haveTokens {
		f.haveTokens, f.tokens = true, f.q.estimateTokens()
	}
	return f.tokens
}

// offersWebSearch: the codecs leave hosted tools out of the neutral model
// and name them in Dropped (Anthropic's web_search_20250305, Responses'
// web_search and web_search_preview); Chat's search models take
// web_search_options instead of a tool.
func offersWebSearch(r *conv.Request) bool {
	if _, ok := r.Extra["web_search_options"]; ok {
		return true
	}
	return slices.ContainsFunc(r.Dropped, func(d string) bool { return strings.Contains(d, "web_search") })
}

// hasImage: an image in a message or in a tool result.
func hasImage(r *conv.Request) bool {
	for _, m := range r.Messages {
		for _, p := range m.Parts {
			if p.Kind == conv.PartImage || slices.ContainsFunc(p.Content, func(c conv.Part) bool { return c.Kind == conv.PartImage }) {
				return true
			}
		}
	}
	return false
}

// Sample is the request a dry run routes (GET /api/route): its protocol
// and model, and the facts rules ask about.
type Sample struct {
	Protocol    Protocol
	Model       string
	Agent       RuleAgent // "" is main
	Thinking    bool
	InputTokens int64
	WebSearch   bool
	Images      bool
	Header      http.Header
}

func (s *Sample) protocol() Protocol { return s.Protocol }
func (s *Sample) model() string      { return s.Model }
func (s *Sample) headerValues(name string) []string {
	return s.Header.Values(name)
}
func (s *Sample) agent() RuleAgent   { return cmp.Or(s.Agent, AgentMain) }
func (s *Sample) thinking() bool     { return s.Thinking }
func (s *Sample) inputTokens() int64 { return s.InputTokens }
func (s *Sample) webSearch() bool    { return s.WebSearch }
func (s *Sample) images() bool       { return s.Images }

// matchRule decides the request's rule, once, before routing; an explicit
// request has none (docs/BEHAVIOUR.md#explicit-endpoint wins).
func (q *request) matchRule() {
	if q.explicit != nil || len(q.snap.rules) == 0 {
		return
	}
	q.rule, _ = matchRules(q.snap.rules, &liveFacts{q: q})
	if q.rule != nil {
		q.rec.Rule = q.rule.Name
	}
}

// modelFor is the model an attempt on e forwards: a matched rule's
// model_map first for the rule's own endpoints, then e's.
func (q *request) modelFor(e *endpoint) string {
	m := q.model
	if q.rule != nil && q.rule.has(e) {
		m = q.rule.mapModel(m)
	}
	return e.mapModel(m)
}

// MatchPattern reports whether s matches model pattern p ('*' matches any
// run of characters), the rule endpoints' models and rules use.
func MatchPattern(p, s string) bool { return compilePattern(p).match(s) }
