package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/internal/logcode"
	"github.com/ccmesh/ccmesh/store"
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
	// OtherModel24h counts the answers of the last 24 hours that named
	// another model than the one forwarded (docs/BEHAVIOUR.md#the-answers-model).
	OtherModel24h int64 `json:"other_model_24h"`
	// Keys is the health of each key of its pool (docs/BEHAVIOUR.md#key-pools).
	Keys []KeyHealth `json:"keys"`
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
		out = append(out, a.endpointHealth(e, now))
	}
	return out
}

func (a *App) getHealth(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, a.Health())
	return nil
}

// endpointHealth is e's health with its keys'.
func (a *App) endpointHealth(e store.Endpoint, now time.Time) Health {
	h := a.healthOf(e.ID, e.Name, e.Enabled, now)
	h.Keys = a.keyHealth(e, now)
	return h
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
	h.LastTest = (*TestResult)(a.tests.Last(id))
	// LastError and LastTest hold upstream text already masked where it was
	// recorded (the proxy's attempt messages, Test before it stores).
	return h
}

// healthPublisher sends the health list (and info, when request log rows
// were lost) to the live stream when something that shapes it happened: a
// breaker transition, a request, a lost log row. Nothing ticks: an idle
// ccmesh does not wake up (the UI counts an Open endpoint down itself from
// retry_in_ms). Changes close together are sent once, healthDebounce
// after the first, which keeps "within a second" in the UI and costs the
// request path one atomic operation.
type healthPublisher struct {
	a      *App
	armed  atomic.Bool
	mu     sync.Mutex // one publish at a time; guards the fields below
	last   []byte
	lost   [3]uint64 // log rows dropped and failed, captures dropped, as last published
	closed bool
}

const healthDebounce = 250 * time.Millisecond

// changed notes that health may have changed. Cheap and never blocking:
// it runs on the request path.
func (p *healthPublisher) changed() {
	if p.armed.CompareAndSwap(false, true) {
		time.AfterFunc(healthDebounce, p.publish)
	}
}

func (p *healthPublisher) publish() {
	p.armed.Store(false) // a change from now on arms the next publish
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	a := p.a
	if now := [3]uint64{a.logw.Dropped(), a.logw.Failed(), a.logw.CapturesDropped()}; now != p.lost {
		p.lost = now
		a.events.Publish("info", a.Info())
	}
	if a.events.Subscribers() == 0 {
		p.last = nil
		a.events.Wake()
		return
	}
	data, err := json.Marshal(a.Health())
	if err != nil || bytes.Equal(data, p.last) {
		return
	}
	p.last = data
	a.events.Send(Event{Name: "health", Data: data})
}

// close stops publishing (at shutdown); a publish under way finishes.
func (p *healthPublisher) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
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
	other       [24]hourCount // answers from another model, per hour
	lat         [latencySamples]int64
	latN        int
	latNext     int
	lastError   string
	lastFailure time.Time
}

// hourCount is a count within one hour (unix hours).
type hourCount struct {
	hour, n int64
}

func newEndpointStats() *endpointStats { return &endpointStats{m: map[int64]*epStats{}} }

// get is endpoint id's figures, made when it has none; s.mu is held.
func (s *endpointStats) get(id int64) *epStats {
	e := s.m[id]
	if e == nil {
		e = &epStats{}
		s.m[id] = e
	}
	return e
}

// loadOtherModels counts the answers from another model of the 24 hours
// before now that the log holds (those that reached the client: the row
// keeps the answering attempt's model), so a restart keeps the figure.
func (a *App) loadOtherModels(ctx context.Context, now time.Time) {
	counts, err := a.db.OtherModelCounts(ctx, now.Add(-24*time.Hour), now)
	if err != nil {
		if ctx.Err() == nil {
			a.log.Warn().Err(err).Str(logcode.Field, logcode.OtherModelsUncount).Msg("counting answers from another model failed; the figure starts at 0")
		}
		return
	}
	for _, c := range counts {
		a.stats.otherModel(c.EndpointID, time.Unix(c.Hour*3600, 0), c.N)
	}
	if len(counts) > 0 {
		a.health.changed()
	}
}

// otherModel counts n answers from another model on endpoint id in the
// hour of at.
func (s *endpointStats) otherModel(id int64, at time.Time, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hour := at.Unix() / 3600
	c := &s.get(id).other[hour%24]
	if c.hour != hour {
		*c = hourCount{hour: hour}
	}
	c.n += n
}

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
	nowHour := now.Unix() / 3600
	for _, c := range e.other {
		if c.hour > nowHour-24 {
			h.OtherModel24h += c.n
		}
	}
	h.LastError = e.lastError
	if !e.lastFailure.IsZero() {
		t := e.lastFailure
		h.LastFailureAt = &t
	}
}
