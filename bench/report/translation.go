package main

import (
	"fmt"
	"math"
	"strings"
)

// Translation (docs/BEHAVIOUR.md#translation; bench/NOTES.md): run.sh's
// targets for it. Each translating target's added latency is taken over
// direct-chat, the same upstream's /v1/chat/completions without a proxy;
// the pass-through's (ccmesh) over direct, as in the tables above.
const (
	directChat  = "direct-chat"
	trClaude    = "tr-claude"    // ccmesh, Claude client → openai-chat endpoint
	trResponses = "tr-responses" // ccmesh, Responses client → openai-chat endpoint
	trGemini    = "tr-gemini"    // ccmesh, Gemini client → openai-chat endpoint
	ccr         = "ccr"          // claude-code-router, Claude client → Chat provider
	passThrough = "ccmesh"       // ccmesh, Claude client → anthropic endpoint
)

var trNames = map[string]string{
	directChat:  "direct (Chat)",
	passThrough: "ccmesh pass-through",
	trClaude:    "ccmesh Claude→Chat",
	trResponses: "ccmesh Responses→Chat",
	trGemini:    "ccmesh Gemini→Chat",
	ccr:         "claude-code-router Claude→Chat",
}

// ref is the reference a target's added figures are taken over.
func ref(target string) string {
	if target == passThrough {
		return "direct"
	}
	return directChat
}

// trAdded is what target adds over its reference, median of rounds.
func (rs runs) trAdded(test, target string, m func(result) float64) float64 {
	return rs.addedTo(test, target, ref(target), m)
}

// vsPass compares a translation's added figure with the pass-through's.
func vsPass(rs runs, what, test, target string, m func(result) float64, limit float64) check {
	tr, pass := rs.trAdded(test, target, m), rs.trAdded(test, passThrough, m)
	c := check{what: what, got: ratio(tr, pass), format: "%.2f×",
		note: fmt.Sprintf("translation %+.0f µs, pass-through %+.0f µs", tr, pass)}
	if limit > 0 {
		c.limit, c.met = fmt.Sprintf("≤ %g×", limit), c.got <= limit
	} else {
		c.limit, c.verdict = "(no limit)", "—"
	}
	return c
}

func translationChecks(rs runs) []check {
	var cs []check
	for _, tr := range []struct{ target, name string }{{trClaude, "Claude→Chat"}, {trResponses, "Responses→Chat"}, {trGemini, "Gemini→Chat"}} {
		for _, x := range []struct{ test, load string }{{"latency", "c=1"}, {"rate", "1000 RPS"}} {
			cs = append(cs,
				vsPass(rs, fmt.Sprintf("translation %s added p50, %s (÷ pass-through)", tr.name, x.load), x.test, tr.target, p50, 1.15),
				vsPass(rs, fmt.Sprintf("translation %s added p99, %s (÷ pass-through)", tr.name, x.load), x.test, tr.target, p99, 0))
		}
		cpuTr, cpuPass := rs.med("rate", tr.target, cpuReq), rs.med("rate", passThrough, cpuReq)
		cs = append(cs, check{what: fmt.Sprintf("translation %s CPU per request at 1000 RPS (÷ pass-through)", tr.name),
			got: ratio(cpuTr, cpuPass), format: "%.2f×", limit: "≤ 1.2×", met: ratio(cpuTr, cpuPass) <= 1.2,
			note: fmt.Sprintf("%.0f µs vs %.0f µs", cpuTr, cpuPass)})
	}
	var nerr float64
	for _, t := range []string{trClaude, trResponses, trGemini} {
		for _, test := range []string{"latency", "rate"} {
			nerr += rs.sum(test, t, errs)
		}
	}
	cs = append(cs, check{what: "translation errors (c=1, 1000 RPS)", got: nerr, format: "%.0f", limit: "0", met: nerr == 0})

	// Against claude-code-router: the same Claude→Chat load.
	for _, x := range []struct{ test, load string }{{"latency", "c=1"}, {"rate", "1000 RPS"}} {
		mine, theirs := rs.trAdded(x.test, trClaude, p50), rs.trAdded(x.test, ccr, p50)
		c := check{what: fmt.Sprintf("translation Claude→Chat added p50, %s (÷ claude-code-router's)", x.load),
			got: ratio(mine, theirs), format: "%.2f×", limit: "≤ 0.5×", met: ratio(mine, theirs) <= 0.5,
			note: fmt.Sprintf("ccmesh %+.0f µs, claude-code-router %s", mine, micros(theirs))}
		if x.test == "rate" && !math.IsNaN(theirs) {
			c.note += fmt.Sprintf(" (achieved %.0f RPS)", rs.med("rate", ccr, rps))
		}
		if why := rs.errorExample(ccr); why != "" && math.IsNaN(theirs) {
			c.note = "claude-code-router did not run: " + why
		}
		cs = append(cs, c)
	}

	// Streams: every translated pair is held to the same limit.
	for _, tr := range []struct{ target, name string }{{trClaude, "Claude→Chat"}, {trGemini, "Gemini→Chat"}} {
		for _, n := range []string{"8", "64"} {
			cs = append(cs, vsPass(rs, "translated SSE "+tr.name+" added per-event p50, "+n+" streams (÷ pass-through)", "sse"+n, tr.target, evP50, 1.3))
		}
	}
	var inc, sent float64
	for _, test := range []string{"sse8", "sse64", "sse200slow"} {
		for _, t := range []string{trClaude, trGemini} {
			inc += rs.sum(test, t, broken)
			sent += rs.sum(test, t, streams)
		}
	}
	cs = append(cs, check{what: "translated SSE incomplete streams", got: inc, format: "%.0f", limit: "0", met: inc == 0,
		note: fmt.Sprintf("of %.0f streams", sent)})
	rss := rs.med("sse200slow", trClaude, rssMax)
	cs = append(cs, check{what: "RSS peak with 200 translated streams (Claude→Chat, 4 s each)", got: rss, format: "%.1f MiB",
		limit: "≤ 64 MiB", met: rss <= 64,
		note: fmt.Sprintf("pass-through, the same load: %s MiB", num(rs.med("sse200slow", passThrough, rssMax), "%.1f"))})
	return cs
}

// micros formats an added latency, "—" for none.
func micros(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%+.0f µs", v)
}

// trAddRow is an added figure of each column over its own reference.
func trAddRow(rs runs, name, test string, m func(result) float64) row {
	return row{name: name, format: "%.0f", skip: map[string]bool{directChat: true},
		value: func(t string) float64 { return rs.trAdded(test, t, m) }}
}

const translationIntro = `## Translation

ccmesh translating (docs/BEHAVIOUR.md#translation): a second ccmesh process, pinned like the
others, whose one endpoint speaks ` + "`openai-chat`" + ` with ` + "`models: [\"claude-*\", \"gpt-*\", \"gemini-*\"]`" + `, in front
of the same upstream's ` + "`/v1/chat/completions`" + `. **Claude→Chat** sends it the Messages request
above (model ` + "`claude-sonnet-4-5`" + `), **Responses→Chat** the same user turn as a Responses
request (model ` + "`gpt-5-bench`" + `), **Gemini→Chat** as a Gemini client's request (Gemini CLI's:
` + "`/v1beta/models/gemini-bench:generateContent`" + `, streams ` + "`:streamGenerateContent?alt=sse`" + `,
the key in ` + "`x-goog-api-key`" + `). **claude-code-router** (bench/NOTES.md: version, configuration)
serves the Claude→Chat load with one provider, the same upstream. **direct (Chat)** is the Chat
request straight to the second upstream, run right after ` + "`direct`" + `: the translating targets' added
figures are taken over it, the pass-through's (the ` + "`ccmesh`" + ` column above) over ` + "`direct`" + `, each
within its round. These targets run in the same rounds and rotation as the four above (not in the
max RPS test).

- The Chat upstream streams, 20 ms apart like the Anthropic stream, a role chunk, 12 content
  chunks, the finish chunk, a usage chunk (only when the request asks for it) and ` + "`[DONE]`" + `.
  The content chunks carry their send time inside their text (` + "`seq=N ts=UNIXNS`" + `), which
  translation passes on unchanged; the per-event delay is taken over those content events only
  (12 a stream), at the client in whatever protocol it speaks. Everything else the client gets is
  made by the proxy.
- 200 streams held open: an upstream sending 40 events 100 ms apart (4 s a stream), one run after
  the rounds, each ccmesh's endpoint pointed at it.

Latencies in µs, medians over rounds; counts summed over rounds.

`

func writeTranslation(b *strings.Builder, rs runs) {
	b.WriteString(translationIntro)
	cols := []string{directChat, passThrough, trClaude, trResponses, trGemini, ccr}
	namedTable(b, cols, trNames, []row{
		medRow(rs, "c=1 p50", "%.0f", "latency", p50),
		medRow(rs, "c=1 p99", "%.0f", "latency", p99),
		trAddRow(rs, "c=1 added p50", "latency", p50),
		trAddRow(rs, "c=1 added p99", "latency", p99),
		medRow(rs, "1000 RPS p50", "%.0f", "rate", p50),
		medRow(rs, "1000 RPS p99", "%.0f", "rate", p99),
		trAddRow(rs, "1000 RPS added p50", "rate", p50),
		trAddRow(rs, "1000 RPS added p99", "rate", p99),
		medRow(rs, "1000 RPS achieved", "%.0f", "rate", rps),
		{name: "errors (c=1 and 1000 RPS)", format: "%.0f", value: func(t string) float64 { return rs.sum("latency", t, errs) + rs.sum("rate", t, errs) }},
		medRow(rs, "CPU µs per request at 1000 RPS", "%.0f", "rate", cpuReq),
		medRow(rs, "RSS idle, MiB", "%.1f", "idle", rssEnd),
		medRow(rs, "RSS at 1000 RPS (max), MiB", "%.1f", "rate", rssMax),
		medRow(rs, "RSS idle after the run, MiB", "%.1f", "idle-after", rssEnd),
	})
	for _, t := range cols {
		if n := rs.sum("latency", t, errs) + rs.sum("rate", t, errs); n > 0 {
			fmt.Fprintf(b, "- %s: %.0f errors in c=1/1000 RPS runs, e.g. `%s`\n", trNames[t], n, rs.errorExample(t))
		}
	}
	if why := rs.errorExample(ccr); why != "" && len(rs["latency"][ccr]) == 0 {
		fmt.Fprintf(b, "- claude-code-router did not run: %s\n", why)
	}
	b.WriteString("\n")
	streamCols := []string{directChat, passThrough, trClaude, trGemini, ccr}
	for _, n := range []string{"8", "64"} {
		test := "sse" + n
		fmt.Fprintf(b, "### %s concurrent streams\n\n", n)
		namedTable(b, streamCols, trNames, []row{
			medRow(rs, "per-event delay p50", "%.0f", test, evP50),
			medRow(rs, "per-event delay p99", "%.0f", test, evP99),
			trAddRow(rs, "added per-event p50", test, evP50),
			trAddRow(rs, "added per-event p99", test, evP99),
			medRow(rs, "first event p50 (from request start)", "%.0f", test, first),
			medRow(rs, "first content event delay p50", "%.0f", test, content),
			trAddRow(rs, "added first content p50", test, content),
			sumRow(rs, "streams", test, streams),
			sumRow(rs, "incomplete streams", test, broken),
			sumRow(rs, "events not alone (after prelude)", test, notAlone),
		})
	}
	b.WriteString("### 200 concurrent streams, 4 s each (one run)\n\n")
	namedTable(b, []string{passThrough, trClaude}, trNames, []row{
		medRow(rs, "peak RSS, MiB", "%.1f", "sse200slow", rssMax),
		medRow(rs, "per-event delay p50", "%.0f", "sse200slow", evP50),
		medRow(rs, "per-event delay p99", "%.0f", "sse200slow", evP99),
		sumRow(rs, "streams", "sse200slow", streams),
		sumRow(rs, "incomplete streams", "sse200slow", broken),
	})
}
