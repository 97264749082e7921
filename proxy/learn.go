package proxy

import (
	"slices"
	"sync"
	"time"

	"github.com/ccmesh/ccmesh/internal/logcode"
)

// Learned is a part an endpoint refused, learned when the request sent
// again without it succeeded (docs/BEHAVIOUR.md#refused-fields).
type Learned struct {
	Drop Drop
	At   time.Time
	// Error is the refusal that taught it, as the upstream worded it
	// (keys masked), at most a few hundred bytes.
	Error string
}

// learnedDrops holds what the proxy learned since the configuration last
// carried it: the app persists each Learned it is told of and pushes a
// new Config with it, after which the entry here is no longer needed.
type learnedDrops struct {
	mu sync.Mutex
	m  map[int64]Drops
}

// get is what was learned for endpoint id and is not in its config yet.
func (l *learnedDrops) get(id int64) Drops {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[id]
}

func (l *learnedDrops) add(id int64, ds []Drop) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[int64]Drops{}
	}
	for _, d := range ds {
		if !l.m[id].Has(d) {
			l.m[id] = append(l.m[id], d)
		}
	}
}

// settle forgets what cfg now carries, and everything of endpoints cfg
// no longer has.
func (l *learnedDrops) settle(cfg *Config) {
	l.mu.Lock()
	defer l.mu.Unlock()
	byID := make(map[int64]Drops, len(cfg.Endpoints))
	for i := range cfg.Endpoints {
		byID[cfg.Endpoints[i].ID] = cfg.Endpoints[i].Drops
	}
	for id, ds := range l.m {
		have, ok := byID[id]
		if !ok {
			delete(l.m, id)
			continue
		}
		ds = slices.DeleteFunc(ds, have.Has)
		if len(ds) == 0 {
			delete(l.m, id)
		} else {
			l.m[id] = ds
		}
	}
}

// dropsFor is every part left out of requests to e now.
func (s *Server) dropsFor(e *endpoint) Drops {
	learned := s.learned.get(e.ID)
	if len(learned) == 0 {
		return e.Drops
	}
	out := slices.Clone(e.Drops)
	for _, d := range learned {
		if !out.Has(d) {
			out = append(out, d)
		}
	}
	return out
}

// learn keeps ds for e and tells the app, which persists them.
func (s *Server) learn(e *endpoint, ds []Drop, refusal string) {
	s.learned.add(e.ID, ds)
	s.log.Info().Str("endpoint", e.Name).Strs("dropped", dropNames(ds)).Str(logcode.Field, logcode.LearnedDrop).
		Msg("endpoint refused parts of a request; they are left out of its requests from now on")
	if s.onLearn == nil {
		return
	}
	now := time.Now()
	for _, d := range ds {
		s.onLearn(e.ID, Learned{Drop: d, At: now, Error: refusal})
	}
}

func dropNames(ds []Drop) []string {
	if len(ds) == 0 {
		return nil
	}
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = string(d)
	}
	return out
}
