package health

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// Figures is what the request log says of one endpoint's health.
type Figures struct {
	SuccessRate   *float64 // over the last hour; nil without attempts
	P50Ms         *int64   // over the latest successful attempts; nil without any
	LastError     string
	LastFailureAt *time.Time
	OtherModel24h int64 // answers of the last 24 hours from another model than the one forwarded
}

// Stats keeps the per-endpoint figures of docs/BEHAVIOUR.md#health in
// memory, fed by the request log sink: success rate over the last hour
// (minute buckets) and p50 latency over the latest successful attempts.
type Stats struct {
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

// NewStats keeps no figures yet.
func NewStats() *Stats { return &Stats{m: map[int64]*epStats{}} }

// get is endpoint id's figures, made when it has none; s.mu is held.
func (s *Stats) get(id int64) *epStats {
	e := s.m[id]
	if e == nil {
		e = &epStats{}
		s.m[id] = e
	}
	return e
}

// Observe takes a request record's attempts: each one on an endpoint
// that the breaker counted, and each answer from another model.
func (s *Stats) Observe(rec *proxy.Record) {
	for i := range rec.Attempts {
		at := &rec.Attempts[i]
		if at.Outcome == breaker.Neutral || at.EndpointID == 0 {
			continue
		}
		s.observe(at.EndpointID, at.StartedAt, at.Outcome == breaker.Success,
			time.Duration(at.DurationMs)*time.Millisecond, at.Message)
		if at.ModelAnswered != "" {
			s.OtherModel(at.EndpointID, at.StartedAt, 1)
		}
	}
}

// Counter is the store's count of answers from another model.
type Counter interface {
	OtherModelCounts(ctx context.Context, from, to time.Time) ([]store.HourCount, error)
}

// LoadOtherModels counts the answers from another model of the 24 hours
// before now that the log holds (those that reached the client: the row
// keeps the answering attempt's model), so a restart keeps the figure. It
// says whether there were any.
func (s *Stats) LoadOtherModels(ctx context.Context, db Counter, now time.Time) (bool, error) {
	counts, err := db.OtherModelCounts(ctx, now.Add(-24*time.Hour), now)
	if err != nil {
		return false, err
	}
	for _, c := range counts {
		s.OtherModel(c.EndpointID, time.Unix(c.Hour*3600, 0), c.N)
	}
	return len(counts) > 0, nil
}

// OtherModel counts n answers from another model on endpoint id in the
// hour of at.
func (s *Stats) OtherModel(id int64, at time.Time, n int64) {
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
func (s *Stats) observe(id int64, at time.Time, ok bool, dur time.Duration, errMsg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.get(id)
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

// Endpoint is endpoint id's figures now.
func (s *Stats) Endpoint(id int64, now time.Time) Figures {
	var f Figures
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.m[id]
	if e == nil {
		return f
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
		f.SuccessRate = &r
	}
	if e.latN > 0 {
		l := slices.Clone(e.lat[:e.latN])
		slices.Sort(l)
		p := l[(len(l)-1)/2]
		f.P50Ms = &p
	}
	nowHour := now.Unix() / 3600
	for _, c := range e.other {
		if c.hour > nowHour-24 {
			f.OtherModel24h += c.n
		}
	}
	f.LastError = e.lastError
	if !e.lastFailure.IsZero() {
		t := e.lastFailure
		f.LastFailureAt = &t
	}
	return f
}

// KeyFailures keeps each pool key's last failure, from the request log's
// attempts (docs/BEHAVIOUR.md#key-pools). The zero value is empty.
type KeyFailures struct {
	mu sync.Mutex
	m  map[int64]keyFailure
}

type keyFailure struct {
	msg string
	at  time.Time
}

// Observe takes a request record's failed attempts with a pool key.
func (f *KeyFailures) Observe(rec *proxy.Record) {
	for i := range rec.Attempts {
		at := &rec.Attempts[i]
		if at.KeyID == 0 || at.Outcome != breaker.Failure {
			continue
		}
		f.mu.Lock()
		if f.m == nil {
			f.m = map[int64]keyFailure{}
		}
		f.m[at.KeyID] = keyFailure{msg: at.Message, at: at.StartedAt}
		f.mu.Unlock()
	}
}

// Last is pool key id's last failure: its message and when; nil when it
// has none.
func (f *KeyFailures) Last(id int64) (string, *time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.m[id]
	if !ok {
		return "", nil
	}
	return v.msg, &v.at
}
