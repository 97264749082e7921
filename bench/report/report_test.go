package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRatio(t *testing.T) {
	ratios := []struct{ a, b, want float64 }{{3, 2, 1.5}, {1, 0, math.NaN()}, {1, -1, math.NaN()}}
	for _, tt := range ratios {
		if got := ratio(tt.a, tt.b); got != tt.want && !(math.IsNaN(got) && math.IsNaN(tt.want)) {
			t.Errorf("ratio(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// writeResults writes latency results: p50 per target per round.
func writeResults(t *testing.T, p50 map[string][]float64) string {
	t.Helper()
	var b strings.Builder
	for target, vs := range p50 {
		for i, v := range vs {
			fmt.Fprintf(&b, `{"mode":"latency","target":%q,"round":%d,"conns":1,"p50_us":%v,"p99_us":%v}`+"\n", target, i+1, v, 2*v)
		}
	}
	path := filepath.Join(t.TempDir(), "results.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAddedIsPerRound(t *testing.T) {
	// Round 2 is slow for everyone: per-round differences ignore it.
	path := writeResults(t, map[string][]float64{
		"direct":   {100, 1000, 100},
		"baseline": {150, 1050, 150},
		"ccmesh":   {160, 1060, 170},
	})
	rs, err := load(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target string
		want   float64
	}{{"baseline", 50}, {"ccmesh", 60}}
	for _, tt := range tests {
		if got := rs.added("latency", tt.target, p50); got != tt.want {
			t.Errorf("added(%s) = %v, want %v", tt.target, got, tt.want)
		}
	}
	if got := rs.med("latency", "ccmesh", p50); got != 170 {
		t.Errorf("med(ccmesh) = %v, want 170", got)
	}
}

func TestTargetsVerdicts(t *testing.T) {
	tests := []struct {
		name    string
		ccmesh  []float64
		wantRow string
	}{
		{"within", []float64{155, 1055, 155}, "| added p50, c=1 (÷ baseline) | 1.10× | ≤ 1.2× | met |"},
		{"over", []float64{200, 1100, 200}, "| added p50, c=1 (÷ baseline) | 2.00× | ≤ 1.2× | **not met** |"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := load(writeResults(t, map[string][]float64{
				"direct": {100, 1000, 100}, "baseline": {150, 1050, 150}, "ccmesh": tt.ccmesh,
			}))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			writeTargets(&b, rs, nil)
			if !strings.Contains(b.String(), tt.wantRow) {
				t.Errorf("targets table lacks %q:\n%s", tt.wantRow, b.String())
			}
		})
	}
}

func TestRunWritesReport(t *testing.T) {
	dir := t.TempDir()
	results := writeResults(t, map[string][]float64{"direct": {100}, "baseline": {150}, "nginx": {140}, "ccmesh": {160}})
	gobench := filepath.Join(dir, "gobench.txt")
	if err := os.WriteFile(gobench, []byte("BenchmarkX-2 10 5 ns/op\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "BENCHMARKS.md")
	err := run(options{results: results, gobench: gobench, pprofTop: gobench, pprofCum: gobench,
		notes: filepath.Join(dir, "missing.md"), perfDir: filepath.Join(dir, "missing"), machine: "test box", out: out})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- Machine: test box", "| c=1 added p50 | — | 50 | 40 | 60 |", "BenchmarkX-2", "## Targets"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(string(b), "## Notes") {
		t.Error("report has a Notes section although the notes file is missing")
	}
	if err := run(options{results: filepath.Join(dir, "nope.jsonl"), out: out}); err == nil {
		t.Error("run with a missing results file returned no error")
	}
}

func TestLogChecks(t *testing.T) {
	tests := []struct {
		name        string
		off, on     []float64
		wantVerdict string
	}{
		{"on slower every round", []float64{100, 200, 100}, []float64{150, 250, 120}, "**not met**"},
		{"mixed", []float64{100, 200, 100}, []float64{150, 150, 120}, "met"},
		{"two rounds", []float64{100, 200}, []float64{150, 250}, "too few rounds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			for i := range tt.off {
				fmt.Fprintf(&b, `{"mode":"rate","target":"log-off","round":%d,"conns":64,"p99_us":%v}`+"\n", i+1, tt.off[i])
				fmt.Fprintf(&b, `{"mode":"rate","target":"log-on","round":%d,"conns":64,"p99_us":%v}`+"\n", i+1, tt.on[i])
			}
			path := filepath.Join(t.TempDir(), "r.jsonl")
			if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			rs, err := load(path)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			logChecks(rs)[0].render(&out)
			if !strings.Contains(out.String(), "| "+tt.wantVerdict+" |") {
				t.Errorf("verdict row %q, want verdict %q", out.String(), tt.wantVerdict)
			}
		})
	}
}

// The log's CPU cost per request is judged against +10% of log-off's.
func TestLogCPUCheck(t *testing.T) {
	for _, tt := range []struct {
		on      float64
		wantRow string
	}{
		{208, "| request log on − off, CPU per request | +4% | ≤ +10% | met | 208 vs 200 µs (+8 µs) |"},
		{244, "| request log on − off, CPU per request | +22% | ≤ +10% | **not met** | 244 vs 200 µs (+44 µs) |"},
	} {
		path := writeLines(t, []string{
			`{"mode":"rate","target":"log-off","round":1,"conns":64,"p99_us":100,"cpu_per_req_us":200}`,
			fmt.Sprintf(`{"mode":"rate","target":"log-on","round":1,"conns":64,"p99_us":100,"cpu_per_req_us":%v}`, tt.on),
		})
		rs, err := load(path)
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		logChecks(rs)[1].render(&out)
		if got := strings.TrimSpace(out.String()); got != tt.wantRow {
			t.Errorf("row %q\nwant %q", got, tt.wantRow)
		}
	}
}

// writeLines writes raw result lines.
func writeLines(t *testing.T, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTranslationChecks(t *testing.T) {
	// Per round: direct 100, pass-through +50 over it; direct-chat 110,
	// the translations +60, +80 and +65 over it, claude-code-router +400.
	// Gemini→Chat has one error in round 1 and one broken stream in
	// round 2.
	var lines []string
	for round, slow := range []float64{0, 1000, 0} {
		for target, p50 := range map[string]float64{"direct": 100, "ccmesh": 150, "direct-chat": 110,
			"tr-claude": 170, "tr-responses": 190, "tr-gemini": 175, "ccr": 510} {
			for _, mode := range []string{"latency", "rate"} {
				nerr := 0
				if target == "tr-gemini" && mode == "latency" && round == 0 {
					nerr = 1
				}
				lines = append(lines, fmt.Sprintf(`{"mode":%q,"target":%q,"round":%d,"p50_us":%v,"p99_us":%v,"cpu_per_req_us":%v,"errors":%d}`,
					mode, target, round+1, p50+slow, 2*(p50+slow), p50, nerr))
			}
		}
		for target, ev := range map[string]float64{"direct": 100, "ccmesh": 300, "direct-chat": 100, "tr-claude": 400, "tr-gemini": 380} {
			inc := 0
			if target == "tr-gemini" && round == 1 {
				inc = 1
			}
			lines = append(lines, fmt.Sprintf(`{"mode":"sse","target":%q,"round":%d,"conns":8,"event_p50_us":%v,"streams":4,"incomplete":%d}`, target, round+1, ev, inc))
		}
	}
	lines = append(lines,
		`{"mode":"sse","test":"sse200slow","target":"tr-claude","conns":200,"rss_max_kb":51200,"streams":200}`,
		`{"mode":"sse","test":"sse200slow","target":"ccmesh","conns":200,"rss_max_kb":40960,"streams":200,"incomplete":1}`)
	rs, err := load(writeLines(t, lines))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range translationChecks(rs) {
		c.render(&b)
	}
	for _, want := range []string{
		"| translation Claude→Chat added p50, c=1 (÷ pass-through) | 1.20× | ≤ 1.15× | **not met** | translation +60 µs, pass-through +50 µs |",
		"| translation Responses→Chat added p50, 1000 RPS (÷ pass-through) | 1.60× | ≤ 1.15× | **not met** |",
		"| translation Claude→Chat added p99, c=1 (÷ pass-through) | 1.20× | (no limit) | — |",
		"| translation Claude→Chat CPU per request at 1000 RPS (÷ pass-through) | 1.13× | ≤ 1.2× | met | 170 µs vs 150 µs |",
		"| translation Gemini→Chat added p50, c=1 (÷ pass-through) | 1.30× | ≤ 1.15× | **not met** | translation +65 µs, pass-through +50 µs |",
		"| translation Gemini→Chat added p50, 1000 RPS (÷ pass-through) | 1.30× | ≤ 1.15× | **not met** | translation +65 µs, pass-through +50 µs |",
		"| translation Gemini→Chat added p99, c=1 (÷ pass-through) | 1.30× | (no limit) | — | translation +130 µs, pass-through +100 µs |",
		"| translation Gemini→Chat added p99, 1000 RPS (÷ pass-through) | 1.30× | (no limit) | — |",
		"| translation Gemini→Chat CPU per request at 1000 RPS (÷ pass-through) | 1.17× | ≤ 1.2× | met | 175 µs vs 150 µs |",
		"| translation errors (c=1, 1000 RPS) | 1 | 0 | **not met** |",
		"| translation Claude→Chat added p50, c=1 (÷ claude-code-router's) | 0.15× | ≤ 0.5× | met | ccmesh +60 µs, claude-code-router +400 µs |",
		"| translated SSE Claude→Chat added per-event p50, 8 streams (÷ pass-through) | 1.50× | ≤ 1.3× | **not met** | translation +300 µs, pass-through +200 µs |",
		"| translated SSE Claude→Chat added per-event p50, 64 streams (÷ pass-through) | — | ≤ 1.3× | no data |",
		"| translated SSE Gemini→Chat added per-event p50, 8 streams (÷ pass-through) | 1.40× | ≤ 1.3× | **not met** | translation +280 µs, pass-through +200 µs |",
		"| translated SSE Gemini→Chat added per-event p50, 64 streams (÷ pass-through) | — | ≤ 1.3× | no data |",
		"| translated SSE incomplete streams | 1 | 0 | **not met** | of 224 streams |",
		"| RSS peak with 200 translated streams (Claude→Chat, 4 s each) | 50.0 MiB | ≤ 64 MiB | met | pass-through, the same load: 40.0 MiB |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("translation checks lack %q:\n%s", want, b.String())
		}
	}
	var tb strings.Builder
	writeTranslation(&tb, rs)
	for _, want := range []string{
		"| | direct (Chat) | ccmesh pass-through | ccmesh Claude→Chat | ccmesh Responses→Chat | ccmesh Gemini→Chat | claude-code-router Claude→Chat |",
		"| c=1 added p50 | — | 50 | 60 | 80 | 65 | 400 |",
		"| CPU µs per request at 1000 RPS | 110 | 150 | 170 | 190 | 175 | 510 |",
		"| errors (c=1 and 1000 RPS) | 0 | 0 | 0 | 0 | 1 | 0 |",
		"- ccmesh Gemini→Chat: 1 errors in c=1/1000 RPS runs",
		"| | direct (Chat) | ccmesh pass-through | ccmesh Claude→Chat | ccmesh Gemini→Chat | claude-code-router Claude→Chat |",
		"| added per-event p50 | — | 200 | 300 | 280 | — |",
		"| incomplete streams | 0 | 0 | 0 | 1 | 0 |",
	} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("translation section lacks %q:\n%s", want, tb.String())
		}
	}
}

func TestTranslationWithoutCCR(t *testing.T) {
	rs, err := load(writeLines(t, []string{
		`{"mode":"latency","target":"direct-chat","round":1,"p50_us":100}`,
		`{"mode":"latency","target":"tr-claude","round":1,"p50_us":150}`,
		`{"mode":"skipped","target":"ccr","error_example":"node or npm not found"}`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range translationChecks(rs) {
		c.render(&b)
	}
	want := "| translation Claude→Chat added p50, c=1 (÷ claude-code-router's) | — | ≤ 0.5× | no data | claude-code-router did not run: node or npm not found |"
	if !strings.Contains(b.String(), want) {
		t.Errorf("checks lack %q:\n%s", want, b.String())
	}
	var tb strings.Builder
	writeTranslation(&tb, rs)
	if !strings.Contains(tb.String(), "- claude-code-router did not run: node or npm not found") {
		t.Errorf("translation section does not say why claude-code-router is missing:\n%s", tb.String())
	}
}

// checkRows renders checks as Targets rows.
func checkRows(cs []check) string {
	var b strings.Builder
	for _, c := range cs {
		c.render(&b)
	}
	return b.String()
}

func loadLines(t *testing.T, lines ...string) runs {
	t.Helper()
	rs, err := load(writeLines(t, lines))
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func startLines(target string, ms ...float64) []string {
	var out []string
	for i, v := range ms {
		out = append(out, fmt.Sprintf(`{"mode":"startup","target":%q,"round":%d,"startup_ms":%v}`, target, i+1, v))
	}
	return out
}

func TestStartupChecks(t *testing.T) {
	failed := `{"mode":"startup","target":"filled","round":6,"errors":1,"error_example":"ccmesh exited before answering"}`
	fill := `{"mode":"filldb","target":"filled","rows":50000,"days":30,"endpoints":4,"db_kb":46080,"wall_ms":3500}`
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"met and not met", slices.Concat(startLines("empty", 90, 80, 100, 85, 95), startLines("filled", 160, 140, 170, 155, 120), []string{fill}), []string{
			"| start-up to first byte, new empty data dir (median) | 90 ms | ≤ 150 ms | met | max 100 ms of 5 starts |",
			"| start-up to first byte, filled data dir (median) | 155 ms | ≤ 150 ms | **not met** | max 170 ms of 5 starts; 50 000 request log rows over 30 days, 4 endpoints, 45 MiB |",
		}},
		{"no data", nil, []string{
			"| start-up to first byte, new empty data dir (median) | — | ≤ 150 ms | no data |  |",
			"| start-up to first byte, filled data dir (median) | — | ≤ 150 ms | no data |  |",
		}},
		{"the phase failed", []string{`{"mode":"skipped","target":"extra","error_example":"bench/extra.sh failed: filldb failed"}`}, []string{
			"| start-up to first byte, filled data dir (median) | — | ≤ 150 ms | no data | not measured: bench/extra.sh failed: filldb failed |",
		}},
		{"too few starts", startLines("empty", 90, 80, 100), []string{
			"| start-up to first byte, new empty data dir (median) | 90 ms | ≤ 150 ms | too few starts (3 < 5) | max 100 ms of 3 starts |",
		}},
		{"a failed start", append(startLines("filled", 90, 80, 100, 85, 95), failed), []string{
			"| start-up to first byte, filled data dir (median) | 90 ms | ≤ 150 ms | **not met** | max 100 ms of 5 starts; 1 failed: ccmesh exited before answering |",
		}},
		{"every start failed", []string{failed}, []string{
			"| start-up to first byte, filled data dir (median) | — | ≤ 150 ms | **not met** | 1 failed: ccmesh exited before answering |",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkRows(startupChecks(loadLines(t, append(tt.lines, `{"mode":"other"}`)...)))
			for _, want := range tt.want {
				if !strings.Contains(got, want) {
					t.Errorf("start-up checks lack %q:\n%s", want, got)
				}
			}
		})
	}
}

func TestIdleChecks(t *testing.T) {
	idle := func(build string, secs, cpu float64) string {
		return fmt.Sprintf(`{"mode":"idle-cost","target":%q,"secs":%v,"cpu_ms":%v,"ctx_switches":4,"main_cpu_ms":1.5,"main_ctx_switches":2,"procs":3,"threads":30}`, build, secs, cpu)
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"met and not met", []string{idle("headless", 60.02, 2.5), idle("desktop", 60, 480)}, []string{
			"| idle CPU per 60 s, headless | 2.5 ms | ≤ 10 ms | met | 2.5 ms and 4 context switches over 60 s (3 processes; ccmesh's own: 1.5 ms, 2 switches) |",
			"| idle CPU per 60 s, desktop, window hidden | 480.0 ms | ≤ 10 ms | **not met** |",
		}},
		{"split by thread", []string{`{"mode":"idle-cost","target":"desktop","secs":60,"cpu_ms":90,"ctx_switches":57,"main_cpu_ms":41.5,"main_ctx_switches":37,"main_threads":"main 30.0 ms, go 1.5 ms, gmain 10.0 ms","procs":3,"threads":32}`}, []string{
			"| idle CPU per 60 s, desktop, window hidden | 90.0 ms | ≤ 10 ms | **not met** | 90.0 ms and 57 context switches over 60 s (3 processes; ccmesh's own: 41.5 ms, 37 switches; by thread: main 30.0 ms, go 1.5 ms, gmain 10.0 ms) |",
		}},
		{"desktop not measured", []string{idle("headless", 60, 0),
			`{"mode":"skipped","target":"idle-desktop","error_example":"no desktop binary at bin/ccmesh-desktop"}`}, []string{
			"| idle CPU per 60 s, headless | 0.0 ms | ≤ 10 ms | met |",
			"| idle CPU per 60 s, desktop, window hidden | — | ≤ 10 ms | no data | not measured: no desktop binary at bin/ccmesh-desktop |",
		}},
		{"the phase failed", []string{`{"mode":"skipped","target":"extra","error_example":"bench/extra.sh failed: filldb failed"}`}, []string{
			"| idle CPU per 60 s, headless | — | ≤ 10 ms | no data | not measured: bench/extra.sh failed: filldb failed |",
		}},
		{"period too short", []string{idle("headless", 5, 0.5)}, []string{
			"| idle CPU per 60 s, headless | 6.0 ms | ≤ 10 ms | period too short (5 s < 60 s) | scaled from 0.5 ms and 4 context switches over 5 s",
		}},
		{"longer period, scaled", []string{idle("headless", 120, 30)}, []string{
			"| idle CPU per 60 s, headless | 15.0 ms | ≤ 10 ms | **not met** | scaled from 30.0 ms and 4 context switches over 120 s",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkRows(idleChecks(loadLines(t, tt.lines...)))
			for _, want := range tt.want {
				if !strings.Contains(got, want) {
					t.Errorf("idle checks lack %q:\n%s", want, got)
				}
			}
		})
	}
}

func TestAPIChecks(t *testing.T) {
	call := func(seq int, name string, p99us float64, errors int) string {
		return fmt.Sprintf(`{"mode":"api","target":%q,"seq":%d,"path":"/api/x","calls":50,"errors":%d,"error_example":"GET /api/x: 500","p50_us":1000,"p99_us":%v,"max_us":%v}`,
			name, seq, errors, p99us, p99us+1000)
	}
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"met and not met, in apiload's order", []string{call(2, "stats 30 days", 250_000, 0), call(1, "stats hour", 12_000, 0)}, []string{
			"| admin API p99: stats hour | 12.0 ms | ≤ 100 ms | met | p50 1.0 ms, max 13.0 ms, 50 calls |\n" +
				"| admin API p99: stats 30 days | 250.0 ms | ≤ 100 ms | **not met** | p50 1.0 ms, max 251.0 ms, 50 calls |",
		}},
		{"errors", []string{call(1, "logs", 12_000, 3), call(2, "logs filtered", 0, 50)}, []string{
			"| admin API p99: logs | 12.0 ms | ≤ 100 ms | **not met** | p50 1.0 ms, max 13.0 ms, 50 calls; 3 failed: GET /api/x: 500 |",
			"| admin API p99: logs filtered | — | ≤ 100 ms | **not met** |",
		}},
		{"no data", nil, []string{
			"| admin API p99 (GET /api/stats, /api/logs) on the filled data dir | — | ≤ 100 ms | no data | not measured |",
		}},
		{"the phase failed", []string{`{"mode":"skipped","target":"extra","error_example":"bench/extra.sh failed: filldb failed"}`}, []string{
			"| admin API p99 (GET /api/stats, /api/logs) on the filled data dir | — | ≤ 100 ms | no data | not measured: bench/extra.sh failed: filldb failed |",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkRows(apiChecks(loadLines(t, append(tt.lines, `{"mode":"other"}`)...)))
			for _, want := range tt.want {
				if !strings.Contains(got, want) {
					t.Errorf("API checks lack %q:\n%s", want, got)
				}
			}
		})
	}
}

const goBenchOut = `goos: linux
goarch: amd64
pkg: github.com/ccmesh/ccmesh/breaker
cpu: AMD EPYC
BenchmarkAvailable-2           	40568732	        34.42 ns/op	       0 B/op	       0 allocs/op
BenchmarkAllowDone-2           	 8800821	       133.4 ns/op	       0 B/op	       0 allocs/op
BenchmarkAllowDoneParallel-2   	 9311733	       132.2 ns/op	       0 B/op	       0 allocs/op
PASS
ok  	github.com/ccmesh/ccmesh/breaker	6.021s
pkg: github.com/ccmesh/ccmesh/proxy
BenchmarkProxyNonStreamCapture/errors-2         	    5210	    212859 ns/op	 282.30 MB/s	  151812 B/op	     264 allocs/op
`

func TestParseGoBench(t *testing.T) {
	gs := parseGoBench(goBenchOut)
	if len(gs) != 4 {
		t.Fatalf("parsed %d benchmarks, want 4: %+v", len(gs), gs)
	}
	g, ok := find(gs, "proxy", "BenchmarkProxyNonStreamCapture/errors")
	if !ok || g.nsOp != 212859 || g.bOp != 151812 || g.allocs != 264 {
		t.Errorf("proxy benchmark = %+v, %v; want 212859 ns, 151812 B, 264 allocs", g, ok)
	}
	if _, ok := find(gs, "proxy", "BenchmarkAllowDone"); ok {
		t.Error("found BenchmarkAllowDone in proxy, which has none")
	}
}

func TestBreakerCheck(t *testing.T) {
	tests := []struct {
		name, out, want string
	}{
		{"met", goBenchOut, "| breaker Allow + Done per request (BenchmarkAllowDone) | 133 ns | ≤ 200 ns, 0 allocs | met | 0 allocs, 0 B per op |"},
		{"too slow", strings.Replace(goBenchOut, "133.4 ns/op", "250.0 ns/op", 1), "| 250 ns | ≤ 200 ns, 0 allocs | **not met** | 0 allocs, 0 B per op |"},
		{"allocates", strings.Replace(goBenchOut, "133.4 ns/op	       0 B/op	       0 allocs/op", "133.4 ns/op	      16 B/op	       1 allocs/op", 1),
			"| 133 ns | ≤ 200 ns, 0 allocs | **not met** | 1 allocs, 16 B per op |"},
		{"without -benchmem", "pkg: github.com/ccmesh/ccmesh/breaker\nBenchmarkAllowDone-2 8800821 133.4 ns/op\n", "| 133 ns | ≤ 200 ns, 0 allocs | no data | no allocs/op: run without -benchmem |"},
		{"no data", "pkg: github.com/ccmesh/ccmesh/store\n", "| — | ≤ 200 ns, 0 allocs | no data | not in the Go micro-benchmarks' output |"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkRows([]check{breakerCheck(parseGoBench(tt.out))})
			if !strings.Contains(got, tt.want) {
				t.Errorf("breaker row %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

func TestBigTranslationChecks(t *testing.T) {
	out := "pkg: github.com/ccmesh/ccmesh/proxy/translate\n" +
		"BenchmarkTranslateBig/claude-to-chat-2  20  4500000 ns/op  233.0 MB/s  1048576 body-bytes  3000000 B/op  3000 allocs/op\n" +
		"BenchmarkTranslateBig/responses-to-chat-2  20  7000000 ns/op  150.0 MB/s  1048576 body-bytes  3500000 B/op  3100 allocs/op\n"
	got := checkRows(bigTranslationChecks(parseGoBench(out)))
	for _, want := range []string{
		"| translation of a 1 MB request, Claude→Chat: bytes allocated per decode+encode (÷ the body) | 2.86× | ≤ 3× | met | 3000000 B per op, body 1048576 B (BenchmarkTranslateBig) |",
		"| translation of a 1 MB request, Claude→Chat: time per decode+encode | 4.50 ms | ≤ 5 ms | met | 3000 allocs per op (BenchmarkTranslateBig) |",
		"| translation of a 1 MB request, Responses→Chat: bytes allocated per decode+encode (÷ the body) | 3.34× | ≤ 3× | **not met** |",
		"| translation of a 1 MB request, Responses→Chat: time per decode+encode | 7.00 ms | ≤ 5 ms | **not met** |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("big translation rows:\n%s\nwant a row containing %q", got, want)
		}
	}
	if got := checkRows(bigTranslationChecks(parseGoBench("pkg: github.com/ccmesh/ccmesh/proxy\n"))); !strings.Contains(got, "| — | ≤ 3× | no data | not in the Go micro-benchmarks' output |") {
		t.Errorf("big translation rows without the benchmark:\n%s", got)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1 000", 50000: "50 000", 1234567: "1 234 567", -50000: "-50 000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestRunWritesExtra(t *testing.T) {
	dir := t.TempDir()
	lines := slices.Concat(startLines("empty", 90, 80, 100, 85, 95), []string{
		`{"mode":"filldb","target":"filled","rows":50000,"days":30,"endpoints":4,"db_kb":46080,"wall_ms":3500}`,
		`{"mode":"idle-cost","target":"headless","binary":"built by this run","secs":60,"cpu_ms":1.2,"sched_ms":1.2,"ticks_ms":0,"ctx_switches":3,"main_cpu_ms":1.2,"main_ctx_switches":3,"procs":1,"threads":7}`,
		`{"mode":"skipped","target":"idle-desktop","error_example":"Xvfb not found"}`,
		`{"mode":"api","target":"logs, first page","seq":1,"path":"/api/logs?limit=50","calls":50,"p50_us":1500,"p99_us":4000,"max_us":5000,"bytes":49152,"items":50}`,
	})
	gobench := filepath.Join(dir, "gobench.txt")
	if err := os.WriteFile(gobench, []byte(goBenchOut), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "BENCHMARKS.md")
	if err := run(options{results: writeLines(t, lines), gobench: gobench, out: out}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| breaker Allow + Done per request (BenchmarkAllowDone) | 133 ns | ≤ 200 ns, 0 allocs | met |",
		"| start-up to first byte, new empty data dir (median) | 90 ms | ≤ 150 ms | met |",
		"| start-up to first byte, filled data dir (median) | — | ≤ 150 ms | no data |",
		"| idle CPU per 60 s, headless | 1.2 ms | ≤ 10 ms | met |",
		"| idle CPU per 60 s, desktop, window hidden | — | ≤ 10 ms | no data | not measured: Xvfb not found |",
		"| admin API p99: logs, first page | 4.0 ms | ≤ 100 ms | met |",
		"## Start-up, idle cost and the admin API at size",
		"Filled data dir: 50 000 request log rows over 30 days, 4 endpoints, 45 MiB (written in 3.5 s).",
		"| new empty data dir | 90 | 100 | 90, 80, 100, 85, 95 | 0 |",
		"| headless | 60 s | 1.2 ms | 1.2 ms | 0 ms | 3 | 1.2 ms, 3 | 1, 7 | built by this run |",
		"| desktop, window hidden | not measured: Xvfb not found | | | | | | | |",
		"| logs, first page | `/api/logs?limit=50` | 1.5 | 4.0 | 5.0 | 50 | 0 | 50 | 48 |",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestHeldBaseline: the first content event is judged against the plain
// baseline and against the baseline holding the prelude, and the first
// check says what the hold alone added.
func TestHeldBaseline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	var lines []string
	for round := 1; round <= 3; round++ {
		for target, us := range map[string]int{"direct": 100, "baseline": 200, "held": 400, "ccmesh": 460} {
			lines = append(lines, fmt.Sprintf(`{"mode":"sse","target":%q,"round":%d,"conns":8,"content_p50_us":%d}`, target, round, us))
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rs, err := load(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeTargets(&b, rs, nil)
	for _, want := range []string{
		"| SSE added first content event p50, 8 streams (÷ baseline) | 3.60× | ≤ 1.2× | **not met** | ccmesh +360 µs, baseline +100 µs; the baseline holding the prelude +300 µs |",
		"| SSE added first content event p50, 8 streams (÷ baseline holding the prelude) | 1.20× | ≤ 1.2× | met | ccmesh +360 µs, held +300 µs |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("targets table lacks %q:\n%s", want, b.String())
		}
	}
}
