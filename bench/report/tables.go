package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

var targets = []string{"direct", "baseline", "nginx", "ccmesh"}

// Metrics.
var (
	p50       = func(r result) float64 { return r.P50Us }
	p99       = func(r result) float64 { return r.P99Us }
	maxLat    = func(r result) float64 { return r.MaxUs }
	rps       = func(r result) float64 { return r.RPS }
	errs      = func(r result) float64 { return float64(r.Errors) }
	cpuReq    = func(r result) float64 { return r.CPUPerReqUs }
	cpuUtil   = func(r result) float64 { return r.CPUUtil }
	capacity  = func(r result) float64 { return 1e6 / r.CPUPerReqUs }
	rssMax    = func(r result) float64 { return float64(r.RSSMaxKB) / 1024 }
	rssEnd    = func(r result) float64 { return float64(r.RSSEndKB) / 1024 }
	evP50     = func(r result) float64 { return r.EventP50Us }
	evP99     = func(r result) float64 { return r.EventP99Us }
	first     = func(r result) float64 { return r.FirstP50Us }
	content   = func(r result) float64 { return r.ContentP50Us }
	streams   = func(r result) float64 { return float64(r.Streams) }
	broken    = func(r result) float64 { return float64(r.Incomplete) }
	notAlone  = func(r result) float64 { return float64(r.NotAlone - r.PreludeNotAlone) }
	preludeNA = func(r result) float64 { return float64(r.PreludeNotAlone) }
)

// num formats a figure; NaN (no data, or a meaningless ratio) is "—".
func num(v float64, format string) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf(format, v)
}

type row struct {
	name   string
	format string
	value  func(target string) float64
	skip   map[string]bool // targets for which the figure means nothing
}

func table(b *strings.Builder, cols []string, rows []row) { namedTable(b, cols, nil, rows) }

// namedTable is table with column headings other than the target names:
// names[col], where set.
func namedTable(b *strings.Builder, cols []string, names map[string]string, rows []row) {
	heads := make([]string, len(cols))
	for i, c := range cols {
		heads[i] = cmp.Or(names[c], c)
	}
	fmt.Fprintf(b, "| | %s |\n|---|%s\n", strings.Join(heads, " | "), strings.Repeat("---:|", len(cols)))
	for _, r := range rows {
		cells := make([]string, len(cols))
		for i, c := range cols {
			cells[i] = "—"
			if !r.skip[c] {
				cells[i] = num(r.value(c), r.format)
			}
		}
		fmt.Fprintf(b, "| %s | %s |\n", r.name, strings.Join(cells, " | "))
	}
	b.WriteString("\n")
}

var noDirect = map[string]bool{"direct": true}

func medRow(rs runs, name, format, test string, m func(result) float64) row {
	return row{name: name, format: format, value: func(t string) float64 { return rs.med(test, t, m) }}
}

func addRow(rs runs, name, test string, m func(result) float64) row {
	return row{name: name, format: "%.0f", skip: noDirect, value: func(t string) float64 { return rs.added(test, t, m) }}
}

func sumRow(rs runs, name, test string, m func(result) float64) row {
	return row{name: name, format: "%.0f", value: func(t string) float64 { return rs.sum(test, t, m) }}
}

func writeRequests(b *strings.Builder, rs runs) {
	b.WriteString("## Non-streamed requests\n\nLatencies in µs, medians over rounds.\n\n")
	table(b, targets, []row{
		medRow(rs, "c=1 p50", "%.0f", "latency", p50),
		medRow(rs, "c=1 p99", "%.0f", "latency", p99),
		addRow(rs, "c=1 added p50", "latency", p50),
		addRow(rs, "c=1 added p99", "latency", p99),
		medRow(rs, "1000 RPS p50", "%.0f", "rate", p50),
		medRow(rs, "1000 RPS p99", "%.0f", "rate", p99),
		addRow(rs, "1000 RPS added p50", "rate", p50),
		addRow(rs, "1000 RPS added p99", "rate", p99),
		medRow(rs, "1000 RPS achieved", "%.0f", "rate", rps),
		sumRow(rs, "errors at 1000 RPS", "rate", errs),
		medRow(rs, "max RPS, one core", "%.0f", "max", rps),
		medRow(rs, "core use at max RPS", "%.2f", "max", cpuUtil),
		medRow(rs, "capacity, RPS per core", "%.0f", "max", capacity),
		medRow(rs, "CPU µs per request at 1000 RPS", "%.0f", "rate", cpuReq),
		medRow(rs, "CPU µs per request at max RPS", "%.0f", "max", cpuReq),
		sumRow(rs, "errors at max RPS", "max", errs),
		medRow(rs, "RSS idle, MiB", "%.1f", "idle", rssEnd),
		medRow(rs, "RSS at 1000 RPS (max), MiB", "%.1f", "rate", rssMax),
		medRow(rs, "RSS at max RPS (max), MiB", "%.1f", "max", rssMax),
		medRow(rs, "RSS idle after the run, MiB", "%.1f", "idle-after", rssEnd),
	})
	// Errors of the latency and max runs count too.
	for _, t := range targets {
		n := rs.sum("latency", t, errs) + rs.sum("rate", t, errs) + rs.sum("max", t, errs)
		if n > 0 {
			fmt.Fprintf(b, "- %s: %.0f errors in c=1/1000 RPS/max runs, e.g. `%s`\n", t, n, rs.errorExample(t))
		}
	}
	b.WriteString("\n")
}

func writeStreams(b *strings.Builder, rs runs) {
	b.WriteString("## SSE streams\n\nDelays in µs, medians over rounds; counts summed over rounds.\n\n")
	for _, n := range []string{"8", "64"} {
		test := "sse" + n
		fmt.Fprintf(b, "### %s concurrent streams\n\n", n)
		table(b, append(slices.Clone(targets), "held"), []row{
			medRow(rs, "per-event delay p50", "%.0f", test, evP50),
			medRow(rs, "per-event delay p99", "%.0f", test, evP99),
			addRow(rs, "added per-event p50", test, evP50),
			addRow(rs, "added per-event p99", test, evP99),
			medRow(rs, "first event p50 (from request start)", "%.0f", test, first),
			addRow(rs, "added first event p50", test, first),
			medRow(rs, "first content event delay p50", "%.0f", test, content),
			addRow(rs, "added first content p50", test, content),
			sumRow(rs, "streams", test, streams),
			sumRow(rs, "incomplete streams", test, broken),
			sumRow(rs, "events not alone (after prelude)", test, notAlone),
			sumRow(rs, "prelude events not alone", test, preludeNA),
		})
	}
	b.WriteString("### 200 concurrent streams (one run)\n\n")
	table(b, targets, []row{
		medRow(rs, "peak RSS, MiB", "%.1f", "sse200", rssMax),
		medRow(rs, "per-event delay p50", "%.0f", "sse200", evP50),
		medRow(rs, "per-event delay p99", "%.0f", "sse200", evP99),
		sumRow(rs, "incomplete streams", "sse200", broken),
		sumRow(rs, "events not alone (after prelude)", "sse200", notAlone),
	})
}

func writeLogging(b *strings.Builder, rs runs) {
	b.WriteString("## Request logging off vs on\n\n" +
		"ccmesh has no switch to turn the request log off, so `bench/logab` serves ccmesh's `proxy` package " +
		"with a nil sink (off) or with `store.LogWriter` writing batches to SQLite (on), the way the app wires it " +
		"(the app's in-memory health figures are left out of both). 1000 RPS over 64 connections, 5 s, " +
		"interleaved rounds; latencies in µs.\n\n")
	cols := []string{"log-off", "log-on"}
	table(b, cols, []row{
		medRow(rs, "p50", "%.0f", "rate", p50),
		medRow(rs, "p99", "%.0f", "rate", p99),
		{name: "p99 spread over rounds (max − min)", format: "%.0f", value: func(t string) float64 { return rs.spread("rate", t, p99) }},
		medRow(rs, "max latency", "%.0f", "rate", maxLat),
		medRow(rs, "CPU µs per request", "%.0f", "rate", cpuReq),
		medRow(rs, "RSS (max), MiB", "%.1f", "rate", rssMax),
		sumRow(rs, "errors", "rate", errs),
	})
}
