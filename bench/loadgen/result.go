package main

import (
	"github.com/ccmesh/ccmesh/bench/internal/stat"
	"slices"
	"time"
)

// Result is one run's measurements, the contract with bench/report.
// Latencies are in microseconds, CPU in milliseconds, memory in KiB.
type Result struct {
	Mode   string  `json:"mode"`
	Test   string  `json:"test,omitempty"`
	Target string  `json:"target"`
	Round  int     `json:"round"`
	Conns  int     `json:"conns"`
	WallMs float64 `json:"wall_ms"`

	Requests int     `json:"requests"`
	Errors   int     `json:"errors"`
	ErrorEg  string  `json:"error_example,omitempty"`
	RPS      float64 `json:"rps"`
	P50Us    float64 `json:"p50_us"`
	P99Us    float64 `json:"p99_us"`
	MaxUs    float64 `json:"max_us"`
	// SlowestAt: latency mode, the positions of the slowest 1 % of the
	// requests in the order they were sent.
	SlowestAt []int `json:"slowest_at,omitempty"`

	// SSE
	Streams    int     `json:"streams,omitempty"`
	Incomplete int     `json:"incomplete,omitempty"`
	Events     int     `json:"events,omitempty"`
	EventP50Us float64 `json:"event_p50_us,omitempty"`
	EventP99Us float64 `json:"event_p99_us,omitempty"`
	// First is the first event (message_start) from request start; Content
	// the first content event (content_block_start) from its send time.
	FirstP50Us   float64 `json:"first_p50_us,omitempty"`
	FirstP99Us   float64 `json:"first_p99_us,omitempty"`
	ContentP50Us float64 `json:"content_p50_us,omitempty"`
	// NotAlone counts events that reached the client in the same read as
	// the event before them although sent at least half an interval
	// later; PreludeNotAlone is the part of it where the earlier event was
	// message_start (ccmesh holds it back by design, docs/BEHAVIOUR.md#streaming).
	NotAlone        int `json:"not_alone"`
	PreludeNotAlone int `json:"prelude_not_alone"`

	// Target process, when sampled.
	CPUMs       float64 `json:"cpu_ms,omitempty"`
	CPUPerReqUs float64 `json:"cpu_per_req_us,omitempty"`
	CPUUtil     float64 `json:"cpu_util,omitempty"` // CPU time / wall time
	RSSMaxKB    int64   `json:"rss_max_kb,omitempty"`
	RSSEndKB    int64   `json:"rss_end_kb,omitempty"`
	HWMKB       int64   `json:"hwm_kb,omitempty"`
}

// fillLatency sorts ds in place and sets the request percentiles.
func (r *Result) fillLatency(ds []time.Duration) {
	slices.Sort(ds)
	r.P50Us, r.P99Us = stat.Us(stat.Percentile(ds, 50)), stat.Us(stat.Percentile(ds, 99))
	if len(ds) > 0 {
		r.MaxUs = stat.Us(ds[len(ds)-1])
	}
}

// noteError counts an error and keeps the first one as an example.
func (r *Result) noteError(err error) {
	r.Errors++
	if r.ErrorEg == "" {
		r.ErrorEg = err.Error()
	}
}
