package app

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/app/config"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// rulesHarness is an App with endpoints A (tag cheap) and B, both a fake
// Anthropic.
func rulesHarness(t *testing.T) (*harness, EndpointReply, EndpointReply) {
	t.Helper()
	h := newHarness(t)
	upA, _ := fakeAnthropic(t)
	upB, _ := fakeAnthropic(t)
	a := h.mustCreate(`{"name":"A","base_url":"` + upA.URL + `","protocol":"anthropic","api_key":"sk-a","tags":["cheap"]}`)
	b := h.mustCreate(`{"name":"B","base_url":"` + upB.URL + `","protocol":"anthropic","api_key":"sk-b"}`)
	return h, a, b
}

// PUT /api/settings refuses a bad rule with 400 invalid_rule naming the
// field, and keeps the rules it had.
func TestRulesValidation(t *testing.T) {
	h, a, _ := rulesHarness(t)
	if !slices.Equal(a.Tags, []string{"cheap"}) {
		t.Fatalf("endpoint A's tags = %v", a.Tags)
	}
	rule := func(name, when, then string) string {
		return `{"name":` + name + `,"when":` + when + `,"then":` + then + `}`
	}
	ok := rule(`"ok"`, `{}`, `{"endpoints":["A"]}`)
	for _, tt := range []struct {
		name, rules, field string
	}{
		{"unknown endpoint", rule(`"r"`, `{}`, `{"endpoints":["A","nope"]}`), "rules[0].then.endpoints[1]"},
		{"unknown tag", rule(`"r"`, `{}`, `{"endpoints":["tag:dear"]}`), "rules[0].then.endpoints[0]"},
		{"no endpoints", rule(`"r"`, `{}`, `{"endpoints":[]}`), "rules[0].then.endpoints"},
		{"bad agent", rule(`"r"`, `{"agent":"robot"}`, `{"endpoints":["A"]}`), "rules[0].when.agent"},
		{"bad tools", rule(`"r"`, `{"tools":"bash"}`, `{"endpoints":["A"]}`), "rules[0].when.tools"},
		{"bad strategy", rule(`"r"`, `{}`, `{"endpoints":["A"],"strategy":"random"}`), "rules[0].then.strategy"},
		{"bad model pattern", rule(`"r"`, `{"models":["claude-?"]}`, `{"endpoints":["A"]}`), "rules[0].when.models[0]"},
		{"bad header pattern", rule(`"r"`, `{"header":{"name":"x-team","pattern":"[a]"}}`, `{"endpoints":["A"]}`), "rules[0].when.header.pattern"},
		{"bad header name", rule(`"r"`, `{"header":{"name":"x team","pattern":"*"}}`, `{"endpoints":["A"]}`), "rules[0].when.header.name"},
		{"bad protocol", rule(`"r"`, `{"protocol":"grpc"}`, `{"endpoints":["A"]}`), "rules[0].when.protocol"},
		{"negative tokens", rule(`"r"`, `{"input_tokens_over":-1}`, `{"endpoints":["A"]}`), "rules[0].when.input_tokens_over"},
		{"empty model_map target", rule(`"r"`, `{}`, `{"endpoints":["A"],"model_map":{"claude-*":" "}}`), "rules[0].then.model_map"},
		{"duplicate name", ok + "," + ok, "rules[1].name"},
		{"empty name", ok + "," + rule(`""`, `{}`, `{"endpoints":["A"]}`), "rules[1].name"},
		{"the statistics' own name", rule(`"(no rule)"`, `{}`, `{"endpoints":["A"]}`), "rules[0].name"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := h.do("PUT", "/api/settings", `{"rules":[`+tt.rules+`]}`)
			var e struct {
				Error apiError `json:"error"`
			}
			r.decode(t, &e)
			if r.status != http.StatusBadRequest || e.Error.Code != config.CodeInvalidRule || e.Error.Field != tt.field {
				t.Errorf("status %d %+v, want 400 %s on %s", r.status, e.Error, config.CodeInvalidRule, tt.field)
			}
		})
	}
	if s := okAs[Settings](t, h.do("GET", "/api/settings", "")); len(s.Rules) != 0 {
		t.Errorf("rules after refused PUTs: %+v", s.Rules)
	}
}

// A rule an earlier one always takes the requests of is kept, with a
// warning; a PUT that leaves rules out keeps them.
func TestRulesUnreachableWarning(t *testing.T) {
	h, _, _ := rulesHarness(t)
	for _, tt := range []struct {
		name, rules string
		warned      []string
	}{
		{"catch-all first", `[{"name":"all","when":{},"then":{"endpoints":["A"]}},{"name":"sub","when":{"agent":"subagent"},"then":{"endpoints":["B"]}}]`, []string{"rules[1]"}},
		{"wider models first", `[{"name":"claude","when":{"models":["claude-*"]},"then":{"endpoints":["A"]}},` +
			`{"name":"haiku-sub","when":{"models":["claude-haiku-*"],"agent":"subagent"},"then":{"endpoints":["B"]}}]`, []string{"rules[1]"}},
		{"lower threshold first", `[{"name":"60k","when":{"input_tokens_over":60000},"then":{"endpoints":["A"]}},` +
			`{"name":"100k","when":{"input_tokens_over":100000},"then":{"endpoints":["B"]}}]`, []string{"rules[1]"}},
		{"narrower first", `[{"name":"haiku-sub","when":{"models":["claude-haiku-*"],"agent":"subagent"},"then":{"endpoints":["B"]}},` +
			`{"name":"claude","when":{"models":["claude-*"]},"then":{"endpoints":["tag:cheap"],"fallback":true}}]`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := okAs[SettingsReply](t, h.do("PUT", "/api/settings", `{"rules":`+tt.rules+`}`))
			var fields []string
			for _, w := range got.Warnings {
				if w.Code != config.CodeRuleUnreachable || w.Message == "" {
					t.Errorf("warning %+v", w)
				}
				fields = append(fields, w.Field)
			}
			if !slices.Equal(fields, tt.warned) || got.Warnings == nil {
				t.Errorf("warnings on %v, want %v", fields, tt.warned)
			}
			var want []proxy.Rule
			if err := json.Unmarshal([]byte(tt.rules), &want); err != nil {
				t.Fatal(err)
			}
			kept := okAs[Settings](t, h.do("PUT", "/api/settings", `{"notifications":false}`))
			if len(kept.Rules) != len(want) || kept.Rules[1].Name != want[1].Name || kept.Rules[1].When.Agent != want[1].When.Agent {
				t.Errorf("rules after a PUT without them: %+v, want %+v", kept.Rules, want)
			}
		})
	}
}

// A rule routes through the App: the log row and its live event name it,
// the statistics group by it, and the dry run names it with its reasons.
func TestRuleThroughTheApp(t *testing.T) {
	h, _, _ := rulesHarness(t)
	rules := `{"rules":[{"name":"long","when":{"input_tokens_over":60000},"then":{"endpoints":["A"]}},` +
		`{"name":"sub","when":{"agent":"subagent"},"then":{"endpoints":["B"],"model_map":{"claude-*":"glm-4.6"}}}]}`
	if r := h.do("PUT", "/api/settings", rules); r.status != 200 {
		t.Fatalf("PUT rules: %d %s", r.status, r.body)
	}
	body := `{"model":"claude-sonnet-4-5","max_tokens":5,"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.332; cc_is_subagent=true;"}],"messages":[{"role":"user","content":"hi"}]}`
	events, unsubscribe := h.app.Events().Subscribe()
	defer unsubscribe()
	h.postLogged(t, body)
	for ev := range events {
		if ev.Name != "log" {
			continue
		}
		var row store.RequestLog
		if err := json.Unmarshal(ev.Data, &row); err != nil || row.Rule != "sub" {
			t.Errorf("the live log row %s has rule %q, want sub (%v)", ev.Data, row.Rule, err)
		}
		break
	}
	h.postMessages(t, "claude-sonnet-4-5")
	page := okAs[struct {
		Items []store.RequestLog `json:"items"`
	}](t, h.do("GET", "/api/logs", ""))
	if len(page.Items) != 2 || page.Items[1].Rule != "sub" || page.Items[1].Endpoint != "B" || page.Items[1].ModelForwarded != "glm-4.6" || page.Items[0].Rule != "" {
		t.Fatalf("log rows %+v", page.Items)
	}
	one := okAs[store.RequestLog](t, h.do("GET", "/api/logs/"+jsonNumber(page.Items[1].ID), ""))
	if one.Rule != "sub" {
		t.Errorf("the row's detail has rule %q", one.Rule)
	}
	got := okAs[struct {
		Buckets []StatBucket `json:"buckets"`
	}](t, h.do("GET", "/api/stats?group=rule&minutes=60", ""))
	reqs := map[string]int64{}
	for _, b := range got.Buckets {
		reqs[b.Key] += b.Requests
	}
	if reqs["sub"] != 1 || reqs[noRule] != 1 || len(reqs) != 2 {
		t.Errorf("requests per rule %v, want sub 1 and %s 1", reqs, noRule)
	}
	if r := h.do("GET", "/api/stats.csv?group=rule&minutes=60", ""); r.status != 200 || !strings.Contains(string(r.body), "start,rule,") || !strings.Contains(string(r.body), noRule) {
		t.Errorf("CSV by rule: %d %s", r.status, r.body)
	}

	x := okAs[proxy.Explanation](t, h.do("GET", "/api/route?protocol=anthropic&model=claude-sonnet-4-5&agent=subagent&input_tokens=1200", ""))
	if x.Rule != "sub" || len(x.Candidates) != 1 || x.Candidates[0].Endpoint != "B" || len(x.Rules) != 2 ||
		x.Rules[0].Why != "input tokens 1200 are not over 60000" || !x.Rules[1].Matched {
		t.Errorf("dry run %+v", x)
	}
	x = okAs[proxy.Explanation](t, h.do("GET", "/api/route?protocol=anthropic&model=claude-sonnet-4-5&header=X-Team:infra", ""))
	if x.Rule != "" || len(x.Rules) != 2 || x.Candidates[0].Endpoint != "A" {
		t.Errorf("dry run without a match %+v", x)
	}
	for _, bad := range []string{"agent=robot", "thinking=maybe", "input_tokens=-3", "tools=bash", "header=novalue"} {
		if r := h.do("GET", "/api/route?protocol=anthropic&model=m&"+bad, ""); r.status != 400 || r.errCode() != "bad_query" {
			t.Errorf("%s: status %d %s", bad, r.status, r.body)
		}
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }
