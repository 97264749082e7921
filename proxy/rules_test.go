package proxy

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/proxy/proxytest"
)

// Bodies of the samples the rule tests route.
const (
	mainBody     = `{"model":"claude-sonnet-4-5","max_tokens":64,"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=sdk-cli;"}],"messages":[{"role":"user","content":"hi"}]}`
	subBody      = `{"model":"claude-sonnet-4-5","max_tokens":64,"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.332; cc_entrypoint=sdk-cli; cc_is_subagent=true;"},{"type":"text","text":"You are an agent"}],"messages":[{"role":"user","content":"hi"}]}`
	markerInChat = `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"what does cc_is_subagent=true; mean?"}]}`
	thinkBody    = `{"model":"claude-sonnet-4-5","max_tokens":64,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"hi"}]}`
	webBody      = `{"model":"claude-sonnet-4-5","max_tokens":64,"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":5}],"messages":[{"role":"user","content":"search"}]}`
	funcToolBody = `{"model":"claude-sonnet-4-5","max_tokens":64,"tools":[{"name":"Read","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"read"}]}`
	imageBody    = `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},{"type":"text","text":"what is it"}]}]}`
	toolImage    = `{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"look"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]}]}]}`
	respWebBody  = `{"model":"gpt-5","input":"search","tools":[{"type":"web_search"}]}`
)

// longBody is a Messages request of many thousand tokens.
func longBody() string {
	b, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 64,
		"messages": []any{map[string]any{"role": "user", "content": strings.Repeat("the quick brown fox jumps over the lazy dog ", 800)}}})
	return string(b)
}

// factsOf are the live facts of a request of protocol p with body and
// the header pairs hdr.
func factsOf(t *testing.T, p Protocol, body string, hdr ...string) (*liveFacts, *request) {
	t.Helper()
	s := New(Options{Logger: zerolog.Nop()})
	s.Update(Config{})
	r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/v1/messages", nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	q := &request{s: s, snap: s.snap.Load(), proto: p, pi: p.index(), r: r, body: []byte(body), rec: &Record{}}
	info, err := scanBody(q.body)
	if err != nil {
		t.Fatalf("scan %s: %v", body, err)
	}
	q.info, q.model = info, info.model
	return &liveFacts{q: q}, q
}

func yes() *bool { v := true; return &v }
func no() *bool  { v := false; return &v }

// Each condition, alone, holds for the requests it names and for no other.
func TestRuleConditions(t *testing.T) {
	tests := []struct {
		name  string
		when  RuleWhen
		proto Protocol
		body  string
		hdr   []string
		want  bool
	}{
		{"protocol holds", RuleWhen{Protocol: ProtocolAnthropic}, ProtocolAnthropic, mainBody, nil, true},
		{"protocol other", RuleWhen{Protocol: ProtocolOpenAIResponses}, ProtocolAnthropic, mainBody, nil, false},
		{"models match", RuleWhen{Models: []string{"gpt-*", "claude-sonnet-*"}}, ProtocolAnthropic, mainBody, nil, true},
		{"models miss", RuleWhen{Models: []string{"claude-haiku-*"}}, ProtocolAnthropic, mainBody, nil, false},
		{"subagent by header", RuleWhen{Agent: AgentSubagent}, ProtocolAnthropic, mainBody, []string{"X-Claude-Code-Agent-Id", "a1b2c3d4e5f607182"}, true},
		{"subagent by billing line", RuleWhen{Agent: AgentSubagent}, ProtocolAnthropic, subBody, nil, true},
		{"subagent: the marker in a message is not the billing line", RuleWhen{Agent: AgentSubagent}, ProtocolAnthropic, markerInChat, nil, false},
		{"subagent: main conversation", RuleWhen{Agent: AgentSubagent}, ProtocolAnthropic, mainBody, nil, false},
		{"main: main conversation", RuleWhen{Agent: AgentMain}, ProtocolAnthropic, mainBody, nil, true},
		{"main: a subagent", RuleWhen{Agent: AgentMain}, ProtocolAnthropic, subBody, nil, false},
		{"thinking on", RuleWhen{Thinking: yes()}, ProtocolAnthropic, thinkBody, nil, true},
		{"thinking on, asked off", RuleWhen{Thinking: yes()}, ProtocolAnthropic, mainBody, nil, false},
		{"thinking off", RuleWhen{Thinking: no()}, ProtocolAnthropic, mainBody, nil, true},
		{"thinking off, asked on", RuleWhen{Thinking: no()}, ProtocolAnthropic, thinkBody, nil, false},
		{"long context", RuleWhen{InputTokensOver: 2000}, ProtocolAnthropic, longBody(), nil, true},
		{"short context", RuleWhen{InputTokensOver: 2000}, ProtocolAnthropic, mainBody, nil, false},
		{"web search, Messages", RuleWhen{Tools: ToolsWebSearch}, ProtocolAnthropic, webBody, nil, true},
		{"web search, Responses", RuleWhen{Tools: ToolsWebSearch}, ProtocolOpenAIResponses, respWebBody, nil, true},
		{"function tools only", RuleWhen{Tools: ToolsWebSearch}, ProtocolAnthropic, funcToolBody, nil, false},
		{"image in a message", RuleWhen{Images: yes()}, ProtocolAnthropic, imageBody, nil, true},
		{"image in a tool result", RuleWhen{Images: yes()}, ProtocolAnthropic, toolImage, nil, true},
		{"no image", RuleWhen{Images: yes()}, ProtocolAnthropic, mainBody, nil, false},
		{"header matches", RuleWhen{Header: &RuleHeader{Name: "x-team", Pattern: "infra*"}}, ProtocolAnthropic, mainBody, []string{"X-Team", "infra-eu"}, true},
		{"header other value", RuleWhen{Header: &RuleHeader{Name: "X-TEAM", Pattern: "infra*"}}, ProtocolAnthropic, mainBody, []string{"x-team", "web"}, false},
		{"header absent", RuleWhen{Header: &RuleHeader{Name: "x-team", Pattern: "*"}}, ProtocolAnthropic, mainBody, nil, false},
		{"empty when", RuleWhen{}, ProtocolOpenAIChat, `{"model":"gpt-5","messages":[]}`, nil, true},
		{"all of them", RuleWhen{Protocol: ProtocolAnthropic, Agent: AgentSubagent, Thinking: no(), Models: []string{"claude-*"}}, ProtocolAnthropic, subBody, nil, true},
		{"all but one", RuleWhen{Protocol: ProtocolAnthropic, Agent: AgentSubagent, Thinking: yes()}, ProtocolAnthropic, subBody, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := factsOf(t, tt.proto, tt.body, tt.hdr...)
			rules := compileRules([]Rule{{Name: "r", When: tt.when, Then: RuleThen{Endpoints: []string{"a"}}}}, nil)
			got, trace := matchRules(rules, f)
			if (got != nil) != tt.want || len(trace) != 1 || trace[0].Matched != tt.want || trace[0].Why == "" {
				t.Errorf("matched %v (trace %+v), want %v", got != nil, trace, tt.want)
			}
		})
	}
}

// The first rule that holds decides; the trace has every rule's verdict
// up to and including it, each with why.
func TestRuleOrder(t *testing.T) {
	rules := compileRules([]Rule{
		{Name: "long", When: RuleWhen{InputTokensOver: 60000}},
		{Name: "haiku", When: RuleWhen{Models: []string{"claude-haiku-*"}}},
		{Name: "subagents", When: RuleWhen{Agent: AgentSubagent}},
		{Name: "anthropic", When: RuleWhen{Protocol: ProtocolAnthropic}},
		{Name: "never reached", When: RuleWhen{}},
	}, nil)
	f, _ := factsOf(t, ProtocolAnthropic, subBody)
	got, trace := matchRules(rules, f)
	if got == nil || got.Name != "subagents" {
		t.Fatalf("matched %v, want subagents", got)
	}
	var names []string
	for _, m := range trace {
		names = append(names, m.Name)
	}
	if want := []string{"long", "haiku", "subagents"}; !slices.Equal(names, want) || trace[2].Why != "every condition holds" || trace[0].Matched || trace[1].Matched {
		t.Errorf("trace %+v, want the verdicts of %v", trace, want)
	}
	if !strings.HasPrefix(trace[0].Why, "input tokens ") || !strings.HasSuffix(trace[0].Why, " are not over 60000") {
		t.Errorf("why long did not match: %q", trace[0].Why)
	}
	if want := "model claude-sonnet-4-5 matches none of claude-haiku-*"; trace[1].Why != want {
		t.Errorf("why haiku did not match: %q, want %q", trace[1].Why, want)
	}
}

// The body is decoded only when a rule asks about it, once, and the
// decoded request is the one translation uses.
func TestRuleBodyDecodedOnlyWhenNeeded(t *testing.T) {
	cheap := compileRules([]Rule{
		{Name: "haiku", When: RuleWhen{Models: []string{"claude-haiku-*"}, Thinking: yes()}},
		{Name: "sub", When: RuleWhen{Agent: AgentSubagent}},
		{Name: "team", When: RuleWhen{Header: &RuleHeader{Name: "x-team", Pattern: "*"}}},
	}, nil)
	f, q := factsOf(t, ProtocolAnthropic, mainBody)
	if got, _ := matchRules(cheap, f); got != nil || q.conv != nil {
		t.Errorf("matched %v, decoded %v: rules that ask nothing of this body decoded it", got, q.conv != nil)
	}
	body := compileRules([]Rule{{Name: "think", When: RuleWhen{Thinking: yes()}}, {Name: "img", When: RuleWhen{Images: yes()}}}, nil)
	f, q = factsOf(t, ProtocolAnthropic, imageBody)
	if got, _ := matchRules(body, f); got == nil || got.Name != "img" || q.conv == nil {
		t.Fatalf("matched %v, decoded %v", got, q.conv != nil)
	}
	decoded := q.conv
	if r, err := q.clientRequest(); err != nil || r != decoded {
		t.Errorf("translation decodes again: %p, want %p (%v)", r, decoded, err)
	}
}

// A matched rule sends the request to its endpoints with its model_map
// applied before theirs, and the log names it; without fallback the
// normal endpoints are not tried, with it they follow; a pinned request
// is never routed by a rule.
func TestRuleRouting(t *testing.T) {
	upA, upB, upC := upstream(t, okClaude()), upstream(t, okClaude()), upstream(t, okClaude())
	a, b, c := ep(1, "A", upA.URL), ep(2, "B", upB.URL), ep(3, "C", upC.URL)
	b.Tags, c.Tags = []string{"cheap"}, []string{"cheap"}
	c.ModelMap = map[string]string{"glm-*": "glm-4.6-c"}
	cfg := Config{Endpoints: []Endpoint{a, b, c}, Rules: []Rule{
		{Name: "subagents", When: RuleWhen{Agent: AgentSubagent}, Then: RuleThen{Endpoints: []string{"tag:cheap"}, ModelMap: map[string]string{"claude-*": "glm-4.6"}}},
		{Name: "thinking", When: RuleWhen{Thinking: yes()}, Then: RuleThen{Endpoints: []string{"C"}, Fallback: true}},
	}}
	h := newHarness(t, cfg)
	sub := []string{"X-Claude-Code-Agent-Id", "0123456789abcdef0"}
	for _, tt := range []struct {
		name, body   string
		hdr          []string
		push         map[*proxytest.Upstream][]proxytest.Response
		status       int
		endpoint     string
		rule, model  string
		fromUpstream *proxytest.Upstream
	}{
		{name: "main conversation: normal routing", body: mainBody, status: 200, endpoint: "A", model: "claude-sonnet-4-5", fromUpstream: upA},
		{name: "subagent: the rule's first endpoint, its model", body: mainBody, hdr: sub, status: 200, endpoint: "B", rule: "subagents", model: "glm-4.6", fromUpstream: upB},
		{name: "subagent: the next of the tag, the rule's map then its own", body: mainBody, hdr: sub, status: 200, endpoint: "C", rule: "subagents", model: "glm-4.6-c", fromUpstream: upC,
			push: map[*proxytest.Upstream][]proxytest.Response{upB: {proxytest.AnthropicError(500, "api_error", "down"), proxytest.AnthropicError(500, "api_error", "down")}}},
		// The rule's sticky cursor moved past B in the case before: C, then B, never A.
		{name: "subagent: no fallback to A", body: mainBody, hdr: sub, status: 500, endpoint: "B", rule: "subagents",
			push: map[*proxytest.Upstream][]proxytest.Response{
				upB: {proxytest.AnthropicError(500, "api_error", "down"), proxytest.AnthropicError(500, "api_error", "down")},
				upC: {proxytest.AnthropicError(500, "api_error", "down"), proxytest.AnthropicError(500, "api_error", "down")}}},
		{name: "thinking: fallback reaches the normal list", body: thinkBody, status: 200, endpoint: "A", rule: "thinking", model: "claude-sonnet-4-5", fromUpstream: upA,
			push: map[*proxytest.Upstream][]proxytest.Response{upC: {proxytest.AnthropicError(500, "api_error", "down"), proxytest.AnthropicError(500, "api_error", "down")}}},
		{name: "pinned: no rule", body: strings.Replace(mainBody, `"claude-sonnet-4-5"`, `"@A/claude-sonnet-4-5"`, 1), hdr: sub, status: 200, endpoint: "A", model: "claude-sonnet-4-5", fromUpstream: upA},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for up, rs := range tt.push {
				up.Push(rs...)
			}
			before := 0
			if tt.fromUpstream != nil {
				before = tt.fromUpstream.Count()
			}
			r := h.post("/v1/messages", tt.body, tt.hdr...)
			rec := h.record()
			if r.status != tt.status || r.header.Get("x-ccmesh-endpoint") != tt.endpoint || rec.Rule != tt.rule {
				t.Fatalf("status %d endpoint %q rule %q, want %d %q %q: %s", r.status, r.header.Get("x-ccmesh-endpoint"), rec.Rule, tt.status, tt.endpoint, tt.rule, r.body)
			}
			if tt.fromUpstream == nil {
				return
			}
			reqs := tt.fromUpstream.Requests()
			if len(reqs) != before+1 {
				t.Fatalf("%s got %d requests, want %d", tt.endpoint, len(reqs), before+1)
			}
			var got struct{ Model string }
			_ = json.Unmarshal(reqs[len(reqs)-1].Body, &got)
			if got.Model != tt.model || rec.ModelForwarded != tt.model {
				t.Errorf("forwarded model %q (record %q), want %q", got.Model, rec.ModelForwarded, tt.model)
			}
		})
	}
}

// The dry run and the proxy route a table of samples the same way: the
// same rule, the same first endpoint (rotation included), and the dry run
// moves no cursor.
func TestRuleDryRunAgrees(t *testing.T) {
	var eps []Endpoint
	for i, name := range []string{"A", "B", "C", "D"} {
		eps = append(eps, ep(int64(i+1), name, upstream(t, okClaude()).URL))
	}
	eps[1].Tags, eps[2].Tags = []string{"cheap"}, []string{"cheap"}
	h := newHarness(t, Config{Endpoints: eps, Rules: []Rule{
		{Name: "long", When: RuleWhen{InputTokensOver: 2000}, Then: RuleThen{Endpoints: []string{"D"}}},
		{Name: "sub", When: RuleWhen{Agent: AgentSubagent}, Then: RuleThen{Endpoints: []string{"tag:cheap"}, Strategy: StrategyRoundRobin}},
		{Name: "think", When: RuleWhen{Thinking: yes()}, Then: RuleThen{Endpoints: []string{"C"}, Fallback: true}},
		{Name: "web", When: RuleWhen{Tools: ToolsWebSearch}, Then: RuleThen{Endpoints: []string{"D", "A"}}},
		{Name: "img", When: RuleWhen{Images: yes()}, Then: RuleThen{Endpoints: []string{"B"}}},
		{Name: "team", When: RuleWhen{Header: &RuleHeader{Name: "x-team", Pattern: "infra*"}}, Then: RuleThen{Endpoints: []string{"C"}}},
	}})
	sub := []string{"X-Claude-Code-Agent-Id", "0123456789abcdef0"}
	for _, tt := range []struct {
		name   string
		sample Sample
		body   string
		hdr    []string
		rule   string
	}{
		{"plain", Sample{}, mainBody, nil, ""},
		{"long", Sample{InputTokens: 9000}, longBody(), nil, "long"},
		{"subagent", Sample{Agent: AgentSubagent}, subBody, nil, "sub"},
		{"subagent again: round robin moves on", Sample{Agent: AgentSubagent}, mainBody, sub, "sub"},
		{"subagent a third time", Sample{Agent: AgentSubagent}, mainBody, sub, "sub"},
		{"thinking", Sample{Thinking: true}, thinkBody, nil, "think"},
		{"web search", Sample{WebSearch: true}, webBody, nil, "web"},
		{"image", Sample{Images: true}, imageBody, nil, "img"},
		{"team header", Sample{Header: http.Header{"X-Team": {"infra-1"}}}, mainBody, []string{"x-team", "infra-1"}, "team"},
		{"other team", Sample{Header: http.Header{"X-Team": {"web"}}}, mainBody, []string{"x-team", "web"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.sample.Protocol, tt.sample.Model = ProtocolAnthropic, "claude-sonnet-4-5"
			x := h.srv.ExplainSample(tt.sample)
			if again := h.srv.ExplainSample(tt.sample); again.Candidates[0].Endpoint != x.Candidates[0].Endpoint {
				t.Fatalf("the dry run moved a cursor: %s then %s", x.Candidates[0].Endpoint, again.Candidates[0].Endpoint)
			}
			if x.Rule != tt.rule || (tt.rule != "" && x.Rules[len(x.Rules)-1].Name != tt.rule) {
				t.Fatalf("dry run rule %q (%+v), want %q", x.Rule, x.Rules, tt.rule)
			}
			r := h.post("/v1/messages", tt.body, tt.hdr...)
			rec := h.record()
			if got := r.header.Get("x-ccmesh-endpoint"); got != x.Candidates[0].Endpoint || rec.Rule != x.Rule {
				t.Errorf("the request went to %s by rule %q; the dry run said %s by %q", got, rec.Rule, x.Candidates[0].Endpoint, x.Rule)
			}
		})
	}
}
