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
