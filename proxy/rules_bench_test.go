package proxy

import (
	"net/http"
	"os"
	"testing"

	"github.com/rs/zerolog"
)

// BenchmarkRuleMatch is what matching one rule costs a real Claude Code
// request (49 KB, proxy/translate/testdata/captured): "none" asks nothing
// of the body; agent scans it for the subagent marker; thinking decodes
// it (a decode a translating attempt reuses); tokens is under a threshold
// its size cannot reach (TokensAtMost), tokens-counted over one it can
// (the BPE count).
func BenchmarkRuleMatch(b *testing.B) {
	body, err := os.ReadFile("translate/testdata/captured/claude-code-turn1.json")
	if err != nil {
		b.Fatal(err)
	}
	s := New(Options{Logger: zerolog.Nop()})
	s.Update(Config{})
	info, err := scanBody(body)
	if err != nil {
		b.Fatal(err)
	}
	r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/v1/messages", nil)
	f := false
	for _, bc := range []struct {
		name string
		when RuleWhen
	}{
		{"none", RuleWhen{Protocol: ProtocolOpenAIChat}},
		{"agent", RuleWhen{Agent: AgentSubagent}},
		{"thinking", RuleWhen{Thinking: &f}},
		{"tokens", RuleWhen{InputTokensOver: 60000}},
		{"tokens-counted", RuleWhen{InputTokensOver: 40000}},
	} {
		rules := compileRules([]Rule{{Name: "r", When: bc.when}}, nil)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q := &request{s: s, snap: s.snap.Load(), proto: ProtocolAnthropic, pi: 0, shape: ProtocolAnthropic.Spec(), r: r, body: body, info: info, model: info.model, rec: &Record{}}
				matchRules(rules, &liveFacts{q: q})
			}
		})
	}
}
