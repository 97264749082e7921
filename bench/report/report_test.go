package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMedianAndRatio(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
	}
	for _, tt := range tests {
		if got := median(tt.xs); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median(nil) is not NaN")
	}
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
			writeTargets(&b, rs)
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
	// the translations +60 and +80 over it, claude-code-router +400.
	var lines []string
	for round, slow := range []float64{0, 1000, 0} {
		for target, p50 := range map[string]float64{"direct": 100, "ccmesh": 150, "direct-chat": 110,
			"tr-claude": 170, "tr-responses": 190, "ccr": 510} {
			for _, mode := range []string{"latency", "rate"} {
				lines = append(lines, fmt.Sprintf(`{"mode":%q,"target":%q,"round":%d,"p50_us":%v,"p99_us":%v,"cpu_per_req_us":%v}`,
					mode, target, round+1, p50+slow, 2*(p50+slow), p50))
			}
		}
		for target, ev := range map[string]float64{"direct": 100, "ccmesh": 300, "direct-chat": 100, "tr-claude": 400} {
			lines = append(lines, fmt.Sprintf(`{"mode":"sse","target":%q,"round":%d,"conns":8,"event_p50_us":%v,"streams":4}`, target, round+1, ev))
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
		"| translation Claude→Chat added p50, c=1 (÷ pass-through) | 1.20× | ≤ 1.3× | met | translation +60 µs, pass-through +50 µs |",
		"| translation Responses→Chat added p50, 1000 RPS (÷ pass-through) | 1.60× | ≤ 1.3× | **not met** |",
		"| translation Claude→Chat added p99, c=1 (÷ pass-through) | 1.20× | (no limit) | — |",
		"| translation Claude→Chat CPU per request at 1000 RPS (÷ pass-through) | 1.13× | (no limit) | — | 170 µs vs 150 µs |",
		"| translation Claude→Chat added p50, c=1 (÷ claude-code-router's) | 0.15× | ≤ 0.5× | met | ccmesh +60 µs, claude-code-router +400 µs |",
		"| translated SSE Claude→Chat added per-event p50, 8 streams (÷ pass-through) | 1.50× | ≤ 1.3× | **not met** | translation +300 µs, pass-through +200 µs |",
		"| translated SSE Claude→Chat added per-event p50, 64 streams (÷ pass-through) | — | ≤ 1.3× | no data |",
		"| translated SSE incomplete streams | 0 | 0 | met | of 212 streams |",
		"| RSS peak with 200 translated streams (Claude→Chat, 4 s each) | 50.0 MiB | ≤ 64 MiB | met | pass-through, the same load: 40.0 MiB |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("translation checks lack %q:\n%s", want, b.String())
		}
	}
	var tb strings.Builder
	writeTranslation(&tb, rs)
	for _, want := range []string{
		"| | direct (Chat) | ccmesh pass-through | ccmesh Claude→Chat | ccmesh Responses→Chat | claude-code-router Claude→Chat |",
		"| c=1 added p50 | — | 50 | 60 | 80 | 400 |",
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
