package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/ccmesh/ccmesh/bench/internal/stat"
)

// check is one performance target (see bench/NOTES.md).
type check struct {
	what   string
	got    float64
	format string
	limit  string
	met    bool
	note   string
	// verdict, when set, replaces met / not met (a check the data cannot
	// decide, or a figure without a limit).
	verdict string
}

func (c check) render(b *strings.Builder) {
	verdict := "**not met**"
	switch {
	case c.verdict != "":
		verdict = c.verdict
	case math.IsNaN(c.got):
		verdict = "no data"
	case c.met:
		verdict = "met"
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", c.what, num(c.got, c.format), c.limit, verdict, c.note)
}

// ratioCheck compares ccmesh's added figure with the baseline's.
func ratioCheck(rs runs, what, test string, m func(result) float64, limit float64) check {
	return refCheck(rs, what, test, "baseline", m, limit)
}

// refCheck compares ccmesh's added figure with that of the target ref.
func refCheck(rs runs, what, test, ref string, m func(result) float64, limit float64) check {
	cc, base := rs.added(test, "ccmesh", m), rs.added(test, ref, m)
	r := ratio(cc, base)
	return check{what: what, got: r, format: "%.2f×", limit: fmt.Sprintf("≤ %g×", limit),
		met: r <= limit, note: fmt.Sprintf("ccmesh %+.0f µs, %s %+.0f µs", cc, ref, base)}
}

func writeTargets(b *strings.Builder, rs runs, gs []goBench) {
	b.WriteString("## Targets\n\n| target | ccmesh | limit | verdict | detail |\n|---|---:|---|---|---|\n")
	var cs []check
	cs = append(cs,
		ratioCheck(rs, "added p50, c=1 (÷ baseline)", "latency", p50, 1.2),
		ratioCheck(rs, "added p99, c=1 (÷ baseline)", "latency", p99, 1.5),
		ratioCheck(rs, "added p50, 1000 RPS (÷ baseline)", "rate", p50, 1.2),
		ratioCheck(rs, "added p99, 1000 RPS (÷ baseline)", "rate", p99, 1.5),
	)
	var nerr float64
	for _, test := range []string{"latency", "rate", "max"} {
		nerr += rs.sum(test, "ccmesh", errs)
	}
	cs = append(cs, check{what: "errors (c=1, 1000 RPS, max)", got: nerr, format: "%.0f", limit: "0", met: nerr == 0})
	cpuCC, cpuBase := rs.med("rate", "ccmesh", cpuReq), rs.med("rate", "baseline", cpuReq)
	cs = append(cs, check{what: "CPU per request at 1000 RPS (÷ baseline)", got: ratio(cpuCC, cpuBase), format: "%.2f×",
		limit: "≤ 1.3×", met: ratio(cpuCC, cpuBase) <= 1.3, note: fmt.Sprintf("%.0f µs vs %.0f µs", cpuCC, cpuBase)})
	maxCC, maxBase := rs.med("max", "ccmesh", rps), rs.med("max", "baseline", rps)
	cs = append(cs, check{what: "max RPS on one core, measured (÷ baseline)", got: ratio(maxCC, maxBase), format: "%.2f×",
		limit: "≥ 0.6×", met: ratio(maxCC, maxBase) >= 0.6,
		note: fmt.Sprintf("%.0f vs %.0f RPS at core use %.2f vs %.2f", maxCC, maxBase, rs.med("max", "ccmesh", cpuUtil), rs.med("max", "baseline", cpuUtil))})
	capCC, capBase := rs.med("max", "ccmesh", capacity), rs.med("max", "baseline", capacity)
	cs = append(cs, check{what: "max RPS on one core, capacity (÷ baseline)", got: ratio(capCC, capBase), format: "%.2f×",
		limit: "≥ 0.6×", met: ratio(capCC, capBase) >= 0.6, note: fmt.Sprintf("%.0f vs %.0f RPS per core", capCC, capBase)})
	// Per event, ccmesh should add no more than a bare proxy; the first
	// content event, which the prelude hold releases, at most a fifth more.
	cs = append(cs,
		ratioCheck(rs, "SSE added per-event p50, 8 streams (÷ baseline)", "sse8", evP50, 1.1),
		ratioCheck(rs, "SSE added per-event p50, 64 streams (÷ baseline)", "sse64", evP50, 1.2),
		heldNote(rs, ratioCheck(rs, "SSE added first content event p50, 8 streams (÷ baseline)", "sse8", content, 1.2)),
		heldNote(rs, ratioCheck(rs, "SSE added first content event p50, 64 streams (÷ baseline)", "sse64", content, 1.2)),
		// The same bare proxy holding the prelude as ccmesh does: the
		// hold's own cost is out of this ratio (bench/NOTES.md).
		refCheck(rs, "SSE added first content event p50, 8 streams (÷ baseline holding the prelude)", "sse8", "held", content, 1.2),
		refCheck(rs, "SSE added first content event p50, 64 streams (÷ baseline holding the prelude)", "sse64", "held", content, 1.2),
	)
	firstAdded := rs.added("sse64", "ccmesh", first)
	cs = append(cs, check{what: "SSE added first-event p50, 64 streams", got: firstAdded / 1000, format: "%.2f ms",
		limit: "≤ 1 ms", met: firstAdded <= 1000,
		note: fmt.Sprintf("first content event: +%.2f ms (baseline +%.2f ms)",
			rs.added("sse64", "ccmesh", content)/1000, rs.added("sse64", "baseline", content)/1000)})
	var inc, sent float64
	for _, test := range []string{"sse8", "sse64", "sse200"} {
		inc += rs.sum(test, "ccmesh", broken)
		sent += rs.sum(test, "ccmesh", streams)
	}
	// Delivery is judged at 8 and 64 streams, by the median round: when
	// the shared machine stalls the load core, it reads several events at
	// once whatever the target (direct included), and at 200 streams it
	// always falls behind. The sums are in the detail.
	var lone, sumLone, sumDirect, prelude float64
	for _, test := range []string{"sse8", "sse64"} {
		lone += rs.med(test, "ccmesh", notAlone)
		sumLone += rs.sum(test, "ccmesh", notAlone)
		sumDirect += rs.sum(test, "direct", notAlone)
		prelude += rs.sum(test, "ccmesh", preludeNA)
	}
	cs = append(cs,
		check{what: "SSE incomplete streams", got: inc, format: "%.0f", limit: "0", met: inc == 0, note: fmt.Sprintf("of %.0f streams", sent)},
		check{what: "SSE events not delivered alone, 8 and 64 streams, median round (after the prelude)", got: lone, format: "%.0f", limit: "0", met: lone == 0,
			note: fmt.Sprintf("all rounds: %.0f (direct, no proxy at all: %.0f); plus %.0f held message_start events (prelude hold, by design)", sumLone, sumDirect, prelude)},
		check{what: "RSS idle", got: rs.med("idle", "ccmesh", rssEnd), format: "%.1f MiB", limit: "≤ 20 MiB", met: rs.med("idle", "ccmesh", rssEnd) <= 20},
		check{what: "RSS at 1000 RPS", got: rs.med("rate", "ccmesh", rssMax), format: "%.1f MiB", limit: "≤ 40 MiB", met: rs.med("rate", "ccmesh", rssMax) <= 40},
		check{what: "RSS peak with 200 streams", got: rs.med("sse200", "ccmesh", rssMax), format: "%.1f MiB", limit: "≤ 64 MiB", met: rs.med("sse200", "ccmesh", rssMax) <= 64},
	)
	cs = append(cs, logChecks(rs)...)
	cs = append(cs, translationChecks(rs)...)
	cs = append(cs, breakerCheck(gs))
	cs = append(cs, bigTranslationChecks(gs)...)
	cs = append(cs, extraChecks(rs)...)
	for _, c := range cs {
		c.render(b)
	}
	b.WriteString("\n")
}

// logChecks judge request logging by rounds: log-off and log-on run back
// to back in each round, so each round gives one paired difference. If
// every round has log-on slower, that is no longer noise (a sign test: by
// chance with probability 2/2ⁿ for n rounds, 6% at 5); mixed signs are
// within noise.
func logChecks(rs runs) []check {
	ds := rs.paired("rate", "log-on", "log-off", p99)
	slower := 0
	for _, d := range ds {
		if d > 0 {
			slower++
		}
	}
	c := check{what: "request log on − off, p99 at 1000 RPS (median of paired rounds)", got: stat.Median(ds), format: "%+.0f µs",
		limit: "within noise", met: slower < len(ds),
		note: fmt.Sprintf("log-on slower in %d of %d rounds; per round: %s", slower, len(ds), signed(ds))}
	if len(ds) < 3 {
		c.verdict = "too few rounds"
	}
	cpuOn, cpuOff := rs.med("rate", "log-on", cpuReq), rs.med("rate", "log-off", cpuReq)
	more := 100 * (cpuOn/cpuOff - 1)
	return []check{c, {what: "request log on − off, CPU per request", got: more, format: "%+.0f%%",
		limit: "≤ +10%", met: more <= 10, note: fmt.Sprintf("%.0f vs %.0f µs (%+.0f µs)", cpuOn, cpuOff, cpuOn-cpuOff)}}
}

func signed(ds []float64) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%+.0f", d)
	}
	return strings.Join(parts, ", ") + " µs"
}

// heldNote adds to a first-content check what the held baseline added:
// the share of the figure the prelude hold costs by itself.
func heldNote(rs runs, c check) check {
	test := "sse8"
	if strings.Contains(c.what, "64 streams") {
		test = "sse64"
	}
	if h := rs.added(test, "held", content); !math.IsNaN(h) {
		c.note += fmt.Sprintf("; the baseline holding the prelude %+.0f µs", h)
	}
	return c
}
