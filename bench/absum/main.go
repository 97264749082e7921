// Command absum summarises a bench/ab.sh run: per test and target, the
// median over rounds of (target − direct) within each round, with each
// round's figure, and the median CPU per request. The targets named in
// -chat translate to a Chat upstream: their added figures are taken
// against direct-chat (the Chat request straight to the upstream) instead.
//
//	absum [-chat NAME,NAME] results.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"

	"github.com/ccmesh/ccmesh/bench/internal/stat"
)

// result is what absum reads of a bench/loadgen line.
type result struct {
	Test      string  `json:"test"`
	Target    string  `json:"target"`
	Round     int     `json:"round"`
	P50       float64 `json:"p50_us"`
	P99       float64 `json:"p99_us"`
	EventP50  float64 `json:"event_p50_us"`
	ContentUs float64 `json:"content_p50_us"`
	CPUPerReq float64 `json:"cpu_per_req_us"`
}

func main() {
	chat := flag.String("chat", "", "targets whose added figures are taken against direct-chat, comma-separated")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: absum [-chat NAME,NAME] results.jsonl")
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	rs, err := read(f)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(summary(rs, strings.Split(*chat, ",")))
}

func read(r io.Reader) ([]result, error) {
	var rs []result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var x result
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			return nil, fmt.Errorf("read %q: %w", sc.Text(), err)
		}
		rs = append(rs, x)
	}
	return rs, sc.Err()
}

type metric struct {
	name  string
	value func(result) float64
	added bool // minus direct's in the same round
}

func summary(rs []result, chat []string) string {
	var tests, targets []string
	for _, r := range rs {
		if !slices.Contains(tests, r.Test) {
			tests = append(tests, r.Test)
		}
		if r.Target != "direct" && r.Target != "direct-chat" && !slices.Contains(targets, r.Target) {
			targets = append(targets, r.Target)
		}
	}
	var b strings.Builder
	for _, test := range tests {
		ms := []metric{
			{"added p50", func(r result) float64 { return r.P50 }, true},
			{"added p99", func(r result) float64 { return r.P99 }, true},
			{"CPU/req", func(r result) float64 { return r.CPUPerReq }, false},
		}
		if strings.Contains(test, "sse") {
			ms = []metric{
				{"added event p50", func(r result) float64 { return r.EventP50 }, true},
				{"added first content", func(r result) float64 { return r.ContentUs }, true},
			}
		}
		fmt.Fprintf(&b, "== %s (µs; median over rounds [each round])\n", test)
		for _, t := range targets {
			fmt.Fprintf(&b, "  %-10s", t)
			for _, m := range ms {
				ref := "direct"
				if slices.Contains(chat, t) {
					ref = "direct-chat"
				}
				vs := perRound(rs, test, t, ref, m)
				fmt.Fprintf(&b, "  %s %s", m.name, format(vs))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// perRound is m of target in each round that has it (minus ref's, when m
// is added and ref ran in that round), in round order.
func perRound(rs []result, test, target, ref string, m metric) []float64 {
	byRound := map[int]map[string]result{}
	for _, r := range rs {
		if r.Test != test {
			continue
		}
		if byRound[r.Round] == nil {
			byRound[r.Round] = map[string]result{}
		}
		byRound[r.Round][r.Target] = r
	}
	rounds := make([]int, 0, len(byRound))
	for k := range byRound {
		rounds = append(rounds, k)
	}
	slices.Sort(rounds)
	var vs []float64
	for _, k := range rounds {
		x, ok := byRound[k][target]
		d, okd := byRound[k][ref]
		switch {
		case !ok:
		case !m.added:
			vs = append(vs, m.value(x))
		case okd:
			vs = append(vs, m.value(x)-m.value(d))
		}
	}
	return vs
}

func format(vs []float64) string {
	if len(vs) == 0 {
		return "—"
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.0f [%s]", stat.Median(vs), strings.Join(parts, " "))
}
