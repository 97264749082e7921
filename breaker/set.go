package breaker

import "sync"

// Set holds one Breaker per endpoint id, shared by app and proxy. The zero
// Set is usable (Defaults, no callback); NewSet sets both.
type Set struct {
	mu           sync.RWMutex
	m            map[int64]*Breaker
	cfg          Config
	overrides    map[int64]Overrides
	onTransition func(Transition)
}

// NewSet makes a Set; onTransition (may be nil) is called outside any lock
// after every state change, on the goroutine that caused it. It must not
// block for long: that goroutine is usually serving a request.
func NewSet(cfg Config, onTransition func(Transition)) *Set {
	return &Set{
		m:            map[int64]*Breaker{},
		cfg:          cfg,
		overrides:    map[int64]Overrides{},
		onTransition: onTransition,
	}
}

// Get returns the breaker for id, creating it Closed if missing.
func (s *Set) Get(id int64) *Breaker {
	s.mu.RLock()
	b := s.m[id]
	s.mu.RUnlock()
	if b != nil {
		return b
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b = s.m[id]; b != nil {
		return b
	}
	if s.m == nil {
		s.m = map[int64]*Breaker{}
	}
	b = &Breaker{id: id, notify: s.onTransition}
	b.configure(s.cfg, s.overrides[id])
	s.m[id] = b
	return b
}

// SetConfig replaces the profile defaults; state is kept.
func (s *Set) SetConfig(cfg Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg = cfg
	for id, b := range s.m {
		b.configure(cfg, s.overrides[id])
	}
}

// SetOverrides sets endpoint id's overrides; state is kept. They apply to a
// breaker created later by Get as well. The zero Overrides clears them.
func (s *Set) SetOverrides(id int64, o Overrides) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.overrides == nil {
		s.overrides = map[int64]Overrides{}
	}
	if o == (Overrides{}) {
		delete(s.overrides, id)
	} else {
		// Kept for breakers Get creates later: copy the pointed-to values so
		// that a caller reusing its variables cannot change them afterwards.
		o = o.Clone()
		s.overrides[id] = o
	}
	if b := s.m[id]; b != nil {
		b.configure(s.cfg, o)
	}
}

// Remove forgets endpoint id and its overrides. A caller still holding its
// Breaker may keep using it; it is no longer in the Set.
func (s *Set) Remove(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	delete(s.overrides, id)
}
