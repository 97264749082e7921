package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
)

// Health is one endpoint's row of GET /api/health (docs/BEHAVIOUR.md#health).
type Health struct {
	ID                  int64       `json:"id"`
	Name                string      `json:"name"`
	Status              string      `json:"status"` // healthy | unhealthy | recovering | disabled
	State               string      `json:"state"`
	Reason              string      `json:"reason"`
	ConsecutiveFailures int         `json:"consecutive_failures"`
	SuccessRate         *float64    `json:"success_rate"`
	P50Ms               *int64      `json:"p50_ms"`
	LastError           string      `json:"last_error"`
	LastFailureAt       *time.Time  `json:"last_failure_at"`
	RetryInMs           int64       `json:"retry_in_ms"`
	LastTest            *TestResult `json:"last_test"`
}

// statusOf maps a breaker view to docs/BEHAVIOUR.md#health's words.
func statusOf(enabled bool, v breaker.View) string {
	switch {
	case !enabled:
		return "disabled"
	case v.State == breaker.Open:
		return "unhealthy"
	case v.State == breaker.HalfOpen:
		return "recovering"
	}
	return "healthy"
}

// Health computes every endpoint's health now, in list order.
func (a *App) Health() []Health {
	now := time.Now()
	st := a.state.Load()
	out := make([]Health, 0, len(st.Endpoints))
	for _, e := range st.Endpoints {
		out = append(out, a.healthOf(e.ID, e.Name, e.Enabled, now))
	}
	return out
}

func (a *App) getHealth(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, a.Health())
	return nil
}

func (a *App) healthOf(id int64, name string, enabled bool, now time.Time) Health {
	v := a.breakers.Get(id).View(now)
	h := Health{
		ID: id, Name: name,
		Status:              statusOf(enabled, v),
		State:               v.State.String(),
		Reason:              v.Reason.String(),
		ConsecutiveFailures: v.Counts.ConsecutiveFailures,
	}
	if v.State == breaker.Open && !v.Until.IsZero() {
		h.RetryInMs = max(0, v.Until.Sub(now).Milliseconds())
	}
	a.stats.fill(id, now, &h)
	a.testsMu.Lock()
	if t, ok := a.tests[id]; ok {
		h.LastTest = &t
	}
	a.testsMu.Unlock()
	// Both hold upstream text; the proxy and Test mask what they record,
	// and this masks it again with the key the endpoint has now.
	if e, ok := a.endpointByID(id); ok {
		h.LastError = a.redact(e, h.LastError)
		if h.LastTest != nil {
			h.LastTest.Message = a.redact(e, h.LastTest.Message)
		}
	}
	return h
}

// healthLoop publishes the health list when it changed, checking once a
// second: often enough for "within a second" in the UI, and an Open
// endpoint's countdown is derived by the UI from retry_in_ms. It also
// publishes info when request log rows were lost since the last check.
func (a *App) healthLoop(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var last []byte
	var lost [2]uint64 // log rows dropped and failed, as last published
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// The counts change on the request path and the log writer's
		// goroutine, where nothing may be published; info carries them.
		if now := [2]uint64{a.logw.Dropped(), a.logw.Failed()}; now != lost {
			lost = now
			a.events.Publish("info", a.Info())
		}
		if a.events.Subscribers() == 0 {
			last = nil
			continue
		}
		hs := a.Health()
		// retry_in_ms changes every tick; compare without it so an unchanged
		// list is not re-sent, but re-send while something counts down.
		counting := false
		for i := range hs {
			if hs[i].RetryInMs > 0 {
				counting = true
			}
		}
		data, err := json.Marshal(hs)
		if err != nil {
			continue
		}
		if !counting && bytes.Equal(data, last) {
			continue
		}
		last = data
		a.events.send(Event{Name: "health", Data: data})
	}
}

// endpointStats keeps the per-endpoint figures of docs/BEHAVIOUR.md#health in memory, fed
// by the request log sink: success rate over the last hour (minute buckets)
// and p50 latency over the latest successful attempts.
type endpointStats struct {
	mu sync.Mutex
	m  map[int64]*epStats
}

type minuteBucket struct {
	minute   int64
	ok, fail int
}

const latencySamples = 256

type epStats struct {
	buckets     [60]minuteBucket
	lat         [latencySamples]int64
	latN        int
	latNext     int
	lastError   string
	lastFailure time.Time
}

func newEndpointStats() *endpointStats { return &endpointStats{m: map[int64]*epStats{}} }

// observe records one attempt on endpoint id.
func (s *endpointStats) observe(id int64, at time.Time, ok bool, dur time.Duration, errMsg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[id]
	if e == nil {
		e = &epStats{}
		s.m[id] = e
	}
	minute := at.Unix() / 60
	b := &e.buckets[minute%60]
	if b.minute != minute {
		*b = minuteBucket{minute: minute}
	}
	if ok {
		b.ok++
		e.lat[e.latNext] = dur.Milliseconds()
		e.latNext = (e.latNext + 1) % latencySamples
		e.latN = min(e.latN+1, latencySamples)
	} else {
		b.fail++
		e.lastError = errMsg
		e.lastFailure = at
	}
}

func (s *endpointStats) fill(id int64, now time.Time, h *Health) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[id]
	if e == nil {
		return
	}
	nowMin := now.Unix() / 60
	ok, fail := 0, 0
	for _, b := range e.buckets {
		if b.minute > nowMin-60 {
			ok += b.ok
			fail += b.fail
		}
	}
	if ok+fail > 0 {
		r := float64(ok) / float64(ok+fail)
		h.SuccessRate = &r
	}
	if e.latN > 0 {
		l := slices.Clone(e.lat[:e.latN])
		slices.Sort(l)
		p := l[(len(l)-1)/2]
		h.P50Ms = &p
	}
	h.LastError = e.lastError
	if !e.lastFailure.IsZero() {
		t := e.lastFailure
		h.LastFailureAt = &t
	}
}
