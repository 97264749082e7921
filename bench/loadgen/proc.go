package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/ccmesh/ccmesh/bench/internal/stat"
	"os"
	"strconv"
	"sync"
	"time"
)

// clockTicks is USER_HZ, the unit of utime/stime in /proc/<pid>/stat: 100
// on every Linux architecture Go supports (getconf CLK_TCK).
const clockTicks = 100

// sampler watches the target processes during a run.
type sampler struct {
	pids     []int
	cpuStart time.Duration
	start    time.Time
	cancel   context.CancelFunc
	done     chan struct{}
	mu       sync.Mutex
	rssMax   int64
}

func startSampler(ctx context.Context, pids []int, every time.Duration) (*sampler, error) {
	if len(pids) == 0 {
		return nil, nil
	}
	cpu, err := cpuTime(pids)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &sampler{pids: pids, cpuStart: cpu, start: time.Now(), cancel: cancel, done: make(chan struct{})}
	go s.loop(ctx, every)
	return s, nil
}

func (s *sampler) loop(ctx context.Context, every time.Duration) {
	defer close(s.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if rss, _, err := memory(s.pids); err == nil {
			s.mu.Lock()
			s.rssMax = max(s.rssMax, rss)
			s.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// finish stops sampling and writes the figures into r; CPU per request
// uses r.Requests (streams for sse).
func (s *sampler) finish(r *Result) {
	s.cancel()
	<-s.done
	wall := time.Since(s.start)
	if cpu, err := cpuTime(s.pids); err == nil {
		d := cpu - s.cpuStart
		r.CPUMs = stat.Ms(d)
		r.CPUUtil = float64(d) / float64(wall)
		if n := max(r.Requests, r.Streams); n > 0 {
			r.CPUPerReqUs = stat.Us(d) / float64(n)
		}
	}
	rss, hwm, err := memory(s.pids)
	if err == nil {
		r.RSSEndKB, r.HWMKB = rss, hwm
	}
	s.mu.Lock()
	r.RSSMaxKB = max(s.rssMax, rss)
	s.mu.Unlock()
}

// cpuTime sums utime+stime of pids.
func cpuTime(pids []int) (time.Duration, error) {
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, fmt.Errorf("read cpu time of %d: %w", pid, err)
		}
		t, err := statTicks(b)
		if err != nil {
			return 0, fmt.Errorf("read cpu time of %d: %w", pid, err)
		}
		ticks += t
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// statTicks parses utime+stime (fields 14 and 15) of a /proc/<pid>/stat
// line. The command name (field 2) may hold spaces and parentheses, so
// fields are counted after its last ')'.
func statTicks(stat []byte) (int64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat line")
	}
	f := bytes.Fields(stat[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("stat line has %d fields after the name, want ≥ 13", len(f))
	}
	u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse utime/stime %q %q", f[11], f[12])
	}
	return u + s, nil
}

// memory sums VmRSS and VmHWM (KiB) of pids.
func memory(pids []int) (rss, hwm int64, err error) {
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return 0, 0, fmt.Errorf("read memory of %d: %w", pid, err)
		}
		rss += statusKB(b, "VmRSS:")
		hwm += statusKB(b, "VmHWM:")
	}
	return rss, hwm, nil
}

// statusKB returns the value of a "Key:   123 kB" line of
// /proc/<pid>/status, 0 if absent.
func statusKB(status []byte, key string) int64 {
	for line := range bytes.Lines(status) {
		if rest, ok := bytes.CutPrefix(line, []byte(key)); ok {
			f := bytes.Fields(rest)
			if len(f) > 0 {
				v, _ := strconv.ParseInt(string(f[0]), 10, 64)
				return v
			}
		}
	}
	return 0
}
