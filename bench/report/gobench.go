package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// goBench is one result line of `go test -bench -benchmem` (make bench-go).
type goBench struct {
	pkg    string // import path, from the "pkg:" line before it
	name   string // without the -GOMAXPROCS suffix
	nsOp   float64
	bOp    float64
	allocs float64 // NaN without -benchmem
	// metrics are the other units the line reports (b.ReportMetric), by unit
	metrics map[string]float64
}

var procsSuffix = regexp.MustCompile(`-\d+$`)

// parseGoBench reads the result lines of go test's benchmark output; other
// lines (headers, PASS, ok) are skipped.
func parseGoBench(text string) []goBench {
	var out []goBench
	pkg := ""
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "pkg:":
			pkg = f[1]
		case len(f) >= 4 && strings.HasPrefix(f[0], "Benchmark"):
			if _, err := strconv.Atoi(f[1]); err != nil {
				continue // a benchmark's own log line
			}
			g := goBench{pkg: pkg, name: procsSuffix.ReplaceAllString(f[0], ""), nsOp: math.NaN(), bOp: math.NaN(), allocs: math.NaN()}
			for i := 2; i+1 < len(f); i += 2 {
				v, err := strconv.ParseFloat(f[i], 64)
				if err != nil {
					continue
				}
				switch f[i+1] {
				case "ns/op":
					g.nsOp = v
				case "B/op":
					g.bOp = v
				case "allocs/op":
					g.allocs = v
				default:
					if g.metrics == nil {
						g.metrics = map[string]float64{}
					}
					g.metrics[f[i+1]] = v
				}
			}
			out = append(out, g)
		}
	}
	return out
}

// find is the benchmark name of the package whose path ends in pkg.
func find(gs []goBench, pkg, name string) (goBench, bool) {
	for _, g := range gs {
		if g.name == name && (g.pkg == pkg || strings.HasSuffix(g.pkg, "/"+pkg)) {
			return g, true
		}
	}
	return goBench{}, false
}

// breakerCheck: a request's breaker Allow and Done (the request path's
// share of the breaker) stay cheap and allocate nothing.
func breakerCheck(gs []goBench) check {
	const limitNs = 200
	c := check{what: "breaker Allow + Done per request (BenchmarkAllowDone)", got: math.NaN(), format: "%.0f ns",
		limit: fmt.Sprintf("≤ %d ns, 0 allocs", limitNs)}
	g, ok := find(gs, "breaker", "BenchmarkAllowDone")
	if !ok {
		c.note = "not in the Go micro-benchmarks' output"
		return c
	}
	c.got = g.nsOp
	c.met = g.nsOp <= limitNs && g.allocs == 0
	c.note = fmt.Sprintf("%s allocs, %s B per op", num(g.allocs, "%.0f"), num(g.bOp, "%.0f"))
	if math.IsNaN(g.allocs) {
		c.verdict = "no data"
		c.note = "no allocs/op: run without -benchmem"
	}
	return c
}

// Limits of the translation of the 1 MB, 200-turn request
// (proxy/translate/internal/bigbody): the bytes a decode and encode
// allocate, as a multiple of the body, and the time they take.
const (
	bigAllocLimit  = 3.0
	bigTimeLimitMs = 5.0
)

// bigTranslationChecks: BenchmarkTranslateBig's pairs, allocation and
// time per decode+encode.
func bigTranslationChecks(gs []goBench) []check {
	var cs []check
	for _, p := range []struct{ sub, name string }{{"claude-to-chat", "Claude→Chat"}, {"responses-to-chat", "Responses→Chat"}, {"gemini-to-chat", "Gemini→Chat"}} {
		alloc := check{what: fmt.Sprintf("translation of a 1 MB request, %s: bytes allocated per decode+encode (÷ the body)", p.name),
			got: math.NaN(), format: "%.2f×", limit: fmt.Sprintf("≤ %g×", bigAllocLimit)}
		took := check{what: fmt.Sprintf("translation of a 1 MB request, %s: time per decode+encode", p.name),
			got: math.NaN(), format: "%.2f ms", limit: fmt.Sprintf("≤ %g ms", bigTimeLimitMs)}
		g, ok := find(gs, "proxy/translate", "BenchmarkTranslateBig/"+p.sub)
		body := g.metrics["body-bytes"]
		if !ok || body == 0 || math.IsNaN(g.bOp) {
			alloc.note, took.note = "not in the Go micro-benchmarks' output", "not in the Go micro-benchmarks' output"
			cs = append(cs, alloc, took)
			continue
		}
		alloc.got, alloc.met = g.bOp/body, g.bOp/body <= bigAllocLimit
		alloc.note = fmt.Sprintf("%.0f B per op, body %.0f B (BenchmarkTranslateBig)", g.bOp, body)
		took.got, took.met = g.nsOp/1e6, g.nsOp/1e6 <= bigTimeLimitMs
		took.note = fmt.Sprintf("%s allocs per op (BenchmarkTranslateBig)", num(g.allocs, "%.0f"))
		cs = append(cs, alloc, took)
	}
	return cs
}
