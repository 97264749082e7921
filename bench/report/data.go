package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/ccmesh/ccmesh/bench/internal/stat"
)

// result is the part of bench/loadgen's JSON line the report uses (and
// run.sh's idle lines: mode "idle" or "idle-after" with rss_end_kb; and
// bench/extra.sh's lines, see extra.go).
type result struct {
	Mode    string  `json:"mode"`
	Test    string  `json:"test"`
	Target  string  `json:"target"`
	Round   int     `json:"round"`
	Conns   int     `json:"conns"`
	Errors  int     `json:"errors"`
	ErrorEg string  `json:"error_example"`
	RPS     float64 `json:"rps"`
	P50Us   float64 `json:"p50_us"`
	P99Us   float64 `json:"p99_us"`
	MaxUs   float64 `json:"max_us"`

	Streams         int     `json:"streams"`
	Incomplete      int     `json:"incomplete"`
	EventP50Us      float64 `json:"event_p50_us"`
	EventP99Us      float64 `json:"event_p99_us"`
	FirstP50Us      float64 `json:"first_p50_us"`
	ContentP50Us    float64 `json:"content_p50_us"`
	NotAlone        int     `json:"not_alone"`
	PreludeNotAlone int     `json:"prelude_not_alone"`

	CPUPerReqUs float64 `json:"cpu_per_req_us"`
	CPUUtil     float64 `json:"cpu_util"`
	RSSMaxKB    int64   `json:"rss_max_kb"`
	RSSEndKB    int64   `json:"rss_end_kb"`

	extraFields
}

// test names a kind of run: the name run.sh gave it, else the mode, and
// for SSE the stream count.
func (r result) test() string {
	if r.Test != "" {
		return r.Test
	}
	if r.Mode == "sse" {
		return "sse" + strconv.Itoa(r.Conns)
	}
	return r.Mode
}

// runs indexes results by test and target; each list is in file order.
type runs map[string]map[string][]result

func load(path string) (runs, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	out := runs{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("results line %d: %w", line, err)
		}
		if out[r.test()] == nil {
			out[r.test()] = map[string][]result{}
		}
		out[r.test()][r.Target] = append(out[r.test()][r.Target], r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	return out, nil
}

// med is the median of metric over a target's runs of a test.
func (rs runs) med(test, target string, metric func(result) float64) float64 {
	var xs []float64
	for _, r := range rs[test][target] {
		xs = append(xs, metric(r))
	}
	return stat.Median(xs)
}

// added is the median over rounds of (target − direct) in the same round:
// what the proxy adds, compared within one round so drift cancels.
func (rs runs) added(test, target string, metric func(result) float64) float64 {
	return rs.addedTo(test, target, "direct", metric)
}

// addedTo is added with another reference than direct: the same upstream
// reached without a proxy, in the protocol the target's upstream speaks.
func (rs runs) addedTo(test, target, ref string, metric func(result) float64) float64 {
	direct := map[int]float64{}
	for _, r := range rs[test][ref] {
		direct[r.Round] = metric(r)
	}
	var xs []float64
	for _, r := range rs[test][target] {
		if d, ok := direct[r.Round]; ok {
			xs = append(xs, metric(r)-d)
		}
	}
	return stat.Median(xs)
}

// paired is metric(a) − metric(b) for every round both ran, in round
// order: run back to back, the pair shares the machine's state.
func (rs runs) paired(test, a, b string, metric func(result) float64) []float64 {
	other := map[int]float64{}
	for _, r := range rs[test][b] {
		other[r.Round] = metric(r)
	}
	var ds []float64
	for _, r := range rs[test][a] {
		if v, ok := other[r.Round]; ok {
			ds = append(ds, metric(r)-v)
		}
	}
	return ds
}

// sum adds metric over a target's runs of a test.
func (rs runs) sum(test, target string, metric func(result) float64) float64 {
	var s float64
	for _, r := range rs[test][target] {
		s += metric(r)
	}
	return s
}

// spread is max − min of metric over a target's runs: the run-to-run noise.
func (rs runs) spread(test, target string, metric func(result) float64) float64 {
	var xs []float64
	for _, r := range rs[test][target] {
		xs = append(xs, metric(r))
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	return slices.Max(xs) - slices.Min(xs)
}

// errorExample is the first error any run of target reported.
func (rs runs) errorExample(target string) string {
	for _, byTarget := range rs {
		for _, r := range byTarget[target] {
			if r.ErrorEg != "" {
				return r.ErrorEg
			}
		}
	}
	return ""
}

// ratio is a/b, NaN when b ≤ 0 (a ratio of an added latency to a
// non-positive one means nothing).
func ratio(a, b float64) float64 {
	if b <= 0 || math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return a / b
}
