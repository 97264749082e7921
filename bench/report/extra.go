package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ccmesh/ccmesh/bench/internal/stat"
)

// bench/extra.sh's phase: start-up, idle cost and the admin API on a
// filled database (bench/NOTES.md). Its lines, by mode:
//   - filldb: the filled data dir (rows, days, endpoints, db_kb, wall_ms);
//   - startup: one start, target "empty" or "filled", startup_ms (or
//     errors 1 and error_example);
//   - idle-cost: one idle period, target "headless" or "desktop";
//   - api: one call kind of bench/apiload, p50/p99/max_us over calls;
//   - skipped: a measurement left out, target "idle-desktop" or
//     "idle-headless", the reason in error_example.
type extraFields struct {
	StartupMs float64 `json:"startup_ms"`

	Secs        float64 `json:"secs"`
	CPUMs       float64 `json:"cpu_ms"`
	SchedMs     float64 `json:"sched_ms"`
	TicksMs     float64 `json:"ticks_ms"`
	CtxSwitches int     `json:"ctx_switches"`
	MainCPUMs   float64 `json:"main_cpu_ms"`
	MainCtx     int     `json:"main_ctx_switches"`
	MainThreads string  `json:"main_threads"`
	Procs       int     `json:"procs"`
	Threads     int     `json:"threads"`
	Binary      string  `json:"binary"`

	Seq   int    `json:"seq"`
	Path  string `json:"path"`
	Calls int    `json:"calls"`
	Bytes int    `json:"bytes"`
	Items int    `json:"items"`

	Rows      int     `json:"rows"`
	Days      int     `json:"days"`
	Endpoints int     `json:"endpoints"`
	DBKB      int64   `json:"db_kb"`
	WallMs    float64 `json:"wall_ms"`
}

// Targets of the phase (bench/NOTES.md says why these numbers).
const (
	startupLimitMs = 150.0
	minStarts      = 5
	idleLimitMs    = 10.0 // CPU over idlePeriod
	idlePeriod     = 60.0 // s
	apiLimitMs     = 100.0
)

var startupKinds = []struct{ target, name string }{{"empty", "new empty data dir"}, {"filled", "filled data dir"}}

var idleBuilds = []struct{ target, name string }{{"headless", "headless"}, {"desktop", "desktop, window hidden"}}

// filled describes the filled data dir, "" when filldb's line is missing.
func (rs runs) filled() string {
	fs := rs["filldb"]["filled"]
	if len(fs) == 0 {
		return ""
	}
	f := fs[len(fs)-1]
	return fmt.Sprintf("%s request log rows over %d days, %d endpoints, %.0f MiB", thousands(f.Rows), f.Days, f.Endpoints, float64(f.DBKB)/1024)
}

// starts splits a kind's starts into the figures of those that answered
// and the failures.
func (rs runs) starts(target string) (ms []float64, failed int, example string) {
	for _, r := range rs["startup"][target] {
		if r.Errors > 0 {
			failed++
			example = cmp.Or(example, r.ErrorEg)
			continue
		}
		ms = append(ms, r.StartupMs)
	}
	return ms, failed, example
}

func startupChecks(rs runs) []check {
	var cs []check
	for _, k := range startupKinds {
		ms, failed, example := rs.starts(k.target)
		c := check{what: "start-up to first byte, " + k.name + " (median)", got: stat.Median(ms), format: "%.0f ms",
			limit: fmt.Sprintf("≤ %.0f ms", startupLimitMs), met: stat.Median(ms) <= startupLimitMs && failed == 0}
		if len(ms) > 0 {
			c.note = fmt.Sprintf("max %.0f ms of %d starts", slices.Max(ms), len(ms))
		}
		if d := rs.filled(); k.target == "filled" && d != "" {
			c.note = strings.TrimPrefix(c.note+"; "+d, "; ")
		}
		if why := rs.skipReason("extra"); len(ms) == 0 && failed == 0 && why != "" {
			c.note = "not measured: " + why
		}
		switch {
		case failed > 0:
			c.met = false
			c.note = strings.TrimPrefix(fmt.Sprintf("%s; %d failed: %s", c.note, failed, example), "; ")
			if len(ms) == 0 {
				c.verdict = "**not met**"
			}
		case len(ms) > 0 && len(ms) < minStarts:
			c.verdict = fmt.Sprintf("too few starts (%d < %d)", len(ms), minStarts)
		}
		cs = append(cs, c)
	}
	return cs
}

// skipReason is why a measurement was left out, "" if it was not.
func (rs runs) skipReason(target string) string {
	for _, r := range rs["skipped"][target] {
		if r.ErrorEg != "" {
			return r.ErrorEg
		}
	}
	return ""
}

func idleChecks(rs runs) []check {
	var cs []check
	for _, b := range idleBuilds {
		c := check{what: fmt.Sprintf("idle CPU per %.0f s, %s", idlePeriod, b.name), got: math.NaN(), format: "%.1f ms",
			limit: fmt.Sprintf("≤ %.0f ms", idleLimitMs)}
		runs := rs["idle-cost"][b.target]
		if len(runs) == 0 {
			c.note = "not measured"
			if why := cmp.Or(rs.skipReason("idle-"+b.target), rs.skipReason("extra")); why != "" {
				c.note += ": " + why
			}
			cs = append(cs, c)
			continue
		}
		r := runs[len(runs)-1]
		if r.Secs <= 0 {
			c.note = "no idle period in the result"
			cs = append(cs, c)
			continue
		}
		c.got = r.CPUMs * idlePeriod / r.Secs
		c.met = c.got <= idleLimitMs
		c.note = fmt.Sprintf("%.1f ms and %d context switches over %.0f s", r.CPUMs, r.CtxSwitches, r.Secs)
		if math.Abs(r.Secs-idlePeriod) >= 1 {
			c.note = "scaled from " + c.note
		}
		if r.Procs > 1 {
			c.note += fmt.Sprintf(" (%d processes; ccmesh's own: %.1f ms, %d switches", r.Procs, r.MainCPUMs, r.MainCtx)
			if r.MainThreads != "" {
				c.note += "; by thread: " + r.MainThreads
			}
			c.note += ")"
		}
		if r.Secs < idlePeriod-0.5 {
			c.verdict = fmt.Sprintf("period too short (%.0f s < %.0f s)", r.Secs, idlePeriod)
		}
		cs = append(cs, c)
	}
	return cs
}

// apiRuns are the call kinds of bench/apiload in its order.
func (rs runs) apiRuns() []result {
	var out []result
	for _, byKind := range rs["api"] {
		out = append(out, byKind...)
	}
	slices.SortFunc(out, func(a, b result) int { return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Target, b.Target)) })
	return out
}

func apiChecks(rs runs) []check {
	limit := fmt.Sprintf("≤ %.0f ms", apiLimitMs)
	kinds := rs.apiRuns()
	if len(kinds) == 0 {
		c := check{what: "admin API p99 (GET /api/stats, /api/logs) on the filled data dir", got: math.NaN(), limit: limit, note: "not measured"}
		if why := rs.skipReason("extra"); why != "" {
			c.note += ": " + why
		}
		return []check{c}
	}
	var cs []check
	for _, r := range kinds {
		c := check{what: "admin API p99: " + r.Target, got: r.P99Us / 1000, format: "%.1f ms", limit: limit,
			met:  r.P99Us/1000 <= apiLimitMs && r.Errors == 0,
			note: fmt.Sprintf("p50 %.1f ms, max %.1f ms, %d calls", r.P50Us/1000, r.MaxUs/1000, r.Calls)}
		if r.Errors > 0 {
			c.note += fmt.Sprintf("; %d failed: %s", r.Errors, r.ErrorEg)
			if r.Errors == r.Calls {
				c.got = math.NaN()
				c.verdict = "**not met**"
			}
		}
		cs = append(cs, c)
	}
	return cs
}

func extraChecks(rs runs) []check {
	return slices.Concat(startupChecks(rs), idleChecks(rs), apiChecks(rs))
}

const extraMethod = `Run by ` + "`bench/extra.sh`" + ` after the load rounds, on the headless
binary built for them; for start-up and the API, ccmesh is pinned to
core 1 and its client to core 0.

- **Filled data dir**: ` + "`bench/filldb`" + ` opens a new data dir with the store
  package, adds four endpoints (one takes 80 % of requests, as with the
  sticky strategy) and writes the request log rows through ` + "`store.LogWriter`" + `,
  as ccmesh logs them (a failover every tenth request on the first
  endpoint, an error every 97th, streams two times in three), with their
  statistics; its retention setting keeps them all.
- **Start-up**: ` + "`bench/startup.sh`" + ` execs ccmesh (through ` + "`taskset`" + `) and
  polls its port with bash's ` + "`/dev/tcp`" + ` until the first byte of an answer
  to ` + "`GET /v1/models`" + `; the figure is exec to that byte. The empty data dir
  is new for each start (database created, migrations run); the filled
  one is the same every time, so the page cache is warm: a first start
  after boot is slower. Starts alternate between the two.
- **Idle cost**: ` + "`bench/idle.sh`" + ` starts ccmesh on the filled data dir, waits
  for ` + "`/api/info`" + ` to answer and 3 s more (10 s for the desktop, whose hidden
  window loads the UI), then reads the CPU time and context switches of
  the process, its children (the desktop's WebKit processes) and all
  their threads from ` + "`/proc`" + ` before and after the idle period, with
  nothing talking to it. The desktop binary runs with ` + "`--minimized`" + ` under
  Xvfb and ` + "`dbus-run-session`" + `, as ` + "`make test-desktop`" + ` runs it. Shown per 60 s;
  a shorter period gets no verdict, since a timer that fires once a
  minute could fall outside it.
- **Admin API**: ccmesh on the filled data dir; ` + "`bench/apiload`" + ` makes each
  call the dashboard, the Stats tab and the Logs tab make on opening
  (with their query strings), one at a time on one keep-alive connection,
  the kinds interleaved, with the admin token; latency is from sending
  the request to reading the whole answer, cold calls included.

`

// writeExtra is the section of the phase's figures.
func writeExtra(b *strings.Builder, rs runs) {
	b.WriteString("## Start-up, idle cost and the admin API at size\n\n")
	b.WriteString(extraMethod)
	if fs := rs["filldb"]["filled"]; len(fs) > 0 {
		fmt.Fprintf(b, "Filled data dir: %s (written in %.1f s).\n\n", rs.filled(), fs[len(fs)-1].WallMs/1000)
	}
	b.WriteString("### Start-up, ms\n\n| data dir | median | max | starts | failed |\n|---|---:|---:|---|---:|\n")
	for _, k := range startupKinds {
		ms, failed, _ := rs.starts(k.target)
		each := make([]string, len(ms))
		for i, v := range ms {
			each[i] = fmt.Sprintf("%.0f", v)
		}
		mx := math.NaN()
		if len(ms) > 0 {
			mx = slices.Max(ms)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d |\n", k.name, num(stat.Median(ms), "%.0f"), num(mx, "%.0f"), strings.Join(each, ", "), failed)
	}
	b.WriteString("\n### Idle cost\n\n| build | period | CPU | on-CPU (schedstat) | utime+stime | context switches | ccmesh process: CPU, switches | processes, threads | binary |\n" +
		"|---|---:|---:|---:|---:|---:|---|---|---|\n")
	for _, bd := range idleBuilds {
		runs := rs["idle-cost"][bd.target]
		if len(runs) == 0 {
			fmt.Fprintf(b, "| %s | not measured: %s |%s\n", bd.name, cmp.Or(rs.skipReason("idle-"+bd.target), "no result"), strings.Repeat(" |", 7))
			continue
		}
		r := runs[len(runs)-1]
		fmt.Fprintf(b, "| %s | %.0f s | %.1f ms | %.1f ms | %.0f ms | %d | %.1f ms, %d | %d, %d | %s |\n", bd.name, r.Secs, r.CPUMs,
			r.SchedMs, r.TicksMs, r.CtxSwitches, r.MainCPUMs, r.MainCtx, r.Procs, r.Threads, r.Binary)
	}
	b.WriteString("\n### Admin API on the filled data dir, ms per call\n\n| call | query | p50 | p99 | max | calls | errors | items | KiB |\n" +
		"|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs.apiRuns() {
		fmt.Fprintf(b, "| %s | `%s` | %.1f | %.1f | %.1f | %d | %d | %d | %.0f |\n", r.Target, r.Path,
			r.P50Us/1000, r.P99Us/1000, r.MaxUs/1000, r.Calls, r.Errors, r.Items, float64(r.Bytes)/1024)
	}
	b.WriteString("\n")
}

// thousands writes n with thin groups: 50 000.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}
