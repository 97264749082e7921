package breaker

import (
	"math"
	"sync"
	"time"
)

// DefaultPermitTTL is how long a HalfOpen probe permit taken with a zero
// deadline stays out before it is considered lost and released.
const DefaultPermitTTL = 10 * time.Minute

// Escalation of the Broken cooldown after repeated probe failures (docs/BEHAVIOUR.md#repeated-failure).
const (
	// reopensBeforeEscalation reopenings in a row keep the plain Timeout.
	reopensBeforeEscalation = 3
	// maxEscalationShift caps the doubling at 1<<4 = 16 × Timeout.
	maxEscalationShift = 4
)

// Breaker guards one endpoint. It is safe for concurrent use; every method
// takes one short lock and never blocks otherwise.
//
// The zero Breaker is usable: Closed, with the Defaults of both profiles and
// no OnTransition callback. Breakers made by a Set get the Set's settings and
// callback.
type Breaker struct {
	id int64
	// notify is set once at creation and never changed, so it is read
	// without the lock.
	notify func(Transition)

	mu         sync.Mutex
	settings   [2]Settings // resolved, indexed by profileIndex
	settingsOK bool

	state    State
	reason   Reason // of the Open state; kept through HalfOpen for display
	openedAt time.Time
	until    time.Time
	gen      uint64
	// byBalance: a balance reading opened it (BalanceOpen), so a reading
	// with credit closes it; with a zero until it holds until then.
	byBalance bool

	probeOut      bool
	probeTicket   uint64 // tells a re-issued probe from an expired one
	probeDeadline time.Time

	consecutiveFailures int
	halfOpenSuccesses   int
	reopens             int
	win                 window
	totalSuccesses      uint64
	totalFailures       uint64
}

// permitKind says how Done treats an outcome. The generation check makes the
// state at Done the state the permit was taken in, so the kind only has to
// tell apart permits that coexist in one state.
type permitKind uint8

const (
	permitClosed  permitKind = iota // Closed: counts toward the thresholds
	permitProbe                     // the HalfOpen probe: holds the single slot
	permitShadow                    // Bypass in HalfOpen: a probe result without the slot
	permitDisplay                   // Bypass in Open, or a disabled profile: display counters only
)

// Permit is the second step of Allow: report the attempt's outcome once.
// A value type (not a closure) so that Allow+Done does not allocate.
// The zero Permit's Done does nothing.
type Permit struct {
	b       *Breaker
	gen     uint64
	ticket  uint64
	profile Profile
	kind    permitKind
}

// notice carries at most one transition out of the lock: no operation of the
// breaker makes more than one.
type notice struct {
	tr Transition
	ok bool
}

// ID is the endpoint id.
func (b *Breaker) ID() int64 { return b.id }

// Done reports the outcome. Calling it on a stale permit (the breaker moved
// on: force-close, expiry, a newer state) changes nothing; neither does a
// probe's Done after its deadline passed.
func (p Permit) Done(o Outcome) {
	if p.b == nil {
		return
	}
	p.b.done(p, o, time.Now())
}

func (b *Breaker) done(p Permit, o Outcome, now time.Time) {
	b.mu.Lock()
	b.expireProbe(now)
	if p.gen != b.gen {
		b.mu.Unlock()
		return
	}
	st := b.settingsFor(p.profile)
	kind := p.kind
	if st.Disabled && kind != permitProbe {
		kind = permitDisplay
	}
	var n notice
	switch kind {
	case permitClosed:
		n = b.closedOutcome(st, o, now)
	case permitProbe:
		if !b.probeOut || p.ticket != b.probeTicket {
			break // expired, and perhaps re-issued to someone else
		}
		b.probeOut = false
		n = b.probeOutcome(st, o, now)
	case permitShadow:
		n = b.probeOutcome(st, o, now)
	case permitDisplay:
		b.countForDisplay(o, now, b.state == Closed)
	}
	b.mu.Unlock()
	b.emit(n)
}

// Available reports whether routing may consider the breaker now; it
// reserves nothing. It applies the lazy Open → HalfOpen step. A breaker whose
// settings are Disabled for any profile is available: Allow under that
// profile always succeeds.
func (b *Breaker) Available(now time.Time) bool {
	b.mu.Lock()
	n := b.advance(now)
	ok := b.anyDisabled()
	switch b.state {
	case Closed:
		ok = true
	case HalfOpen:
		ok = ok || !b.probeOut
	}
	b.mu.Unlock()
	b.emit(n)
	return ok
}

// WouldBeAvailable is what Available would answer at now, without taking
// the lazy Open → HalfOpen step: a dry run of routing changes nothing.
func (b *Breaker) WouldBeAvailable(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.anyDisabled() {
		return true
	}
	switch b.state {
	case Closed:
		return true
	case HalfOpen:
		return !b.probeOut || now.After(b.probeDeadline)
	}
	return !b.held() && !now.Before(b.until)
}

// View returns the breaker as routing and the UI see it at now. Reading
// never changes a breaker (docs/BEHAVIOUR.md#breaker-persistence): an Open
// breaker whose cooldown is over stays Open here, with ProbeDue set, until
// a request asks (Available, Allow) and the lazy Open → HalfOpen step is
// taken and reported. A probe permit past its deadline shows as free. A
// breaker Disabled in both profiles shows as Closed whatever state it held
// before it was disabled (that state resumes if it is enabled again). In
// HalfOpen, Reason and OpenedAt are those of the Open state it came from.
func (b *Breaker) View(now time.Time) View {
	b.mu.Lock()
	defer b.mu.Unlock()
	reqs, fails := b.win.counts(now)
	v := View{
		State:         b.state,
		Reason:        b.reason,
		OpenedAt:      b.openedAt,
		Until:         b.until,
		ProbeInFlight: b.state == HalfOpen && b.probeOut && !now.After(b.probeDeadline),
		ProbeDue:      b.state == Open && !b.held() && !now.Before(b.until),
		Balance:       b.byBalance,
		Counts: Counts{
			ConsecutiveFailures: b.consecutiveFailures,
			HalfOpenSuccesses:   b.halfOpenSuccesses,
			WindowRequests:      reqs,
			WindowFailures:      fails,
			Reopens:             b.reopens,
			TotalSuccesses:      b.totalSuccesses,
			TotalFailures:       b.totalFailures,
		},
	}
	if b.allDisabled() {
		v.State, v.Reason, v.OpenedAt, v.Until, v.ProbeInFlight, v.ProbeDue = Closed, ReasonNone, time.Time{}, time.Time{}, false, false
	}
	return v
}

// Allow takes a permit for one attempt under profile p. In HalfOpen only one
// permit is out at a time (ErrProbeInFlight for the others); a probe permit
// not reported by deadline expires, and a zero deadline means
// DefaultPermitTTL from now. Open refuses with ErrOpen. A profile whose
// settings are Disabled is never refused.
func (b *Breaker) Allow(p Profile, deadline time.Time) (Permit, error) {
	b.mu.Lock()
	n, now := b.advanceUnlessClosed()
	permit := Permit{b: b, gen: b.gen, profile: p}
	var err error
	switch {
	case b.settingsFor(p).Disabled:
		permit.kind = permitDisplay
	case b.state == Closed:
		permit.kind = permitClosed
	case b.state == HalfOpen && !b.probeOut:
		if deadline.IsZero() {
			deadline = now.Add(DefaultPermitTTL)
		}
		b.probeOut = true
		b.probeTicket++
		b.probeDeadline = deadline
		permit.kind, permit.ticket = permitProbe, b.probeTicket
	case b.state == HalfOpen:
		permit, err = Permit{}, ErrProbeInFlight
	default:
		permit, err = Permit{}, ErrOpen
	}
	b.mu.Unlock()
	b.emit(n)
	return permit, err
}

// Bypass takes a permit for an explicit request (docs/BEHAVIOUR.md#explicit-endpoint): never refused,
// outcome still counted. In Closed it counts like any permit; in HalfOpen
// it counts as a probe result without taking the probe slot; in Open only
// the display counters (totals, window) change, and Open(Manual) never
// changes by any outcome. The deadline is accepted for symmetry with Allow:
// a bypass permit holds nothing, so it has nothing to expire.
func (b *Breaker) Bypass(p Profile, deadline time.Time) Permit {
	b.mu.Lock()
	n, _ := b.advanceUnlessClosed()
	permit := Permit{b: b, gen: b.gen, profile: p}
	switch b.state {
	case Closed:
		permit.kind = permitClosed
	case HalfOpen:
		permit.kind = permitShadow
	default:
		permit.kind = permitDisplay
	}
	b.mu.Unlock()
	b.emit(n)
	return permit
}

// ForceOpen holds the breaker Open(Manual) until ForceClose. Restore keeps
// it, so it survives restarts. It always reports a transition (CauseForceOpen)
// so the caller's audit trail sees every action, even a repeated one.
func (b *Breaker) ForceOpen() {
	now := time.Now()
	b.mu.Lock()
	from := b.state
	b.enterOpen(Manual, now, 0)
	n := b.transition(from, CauseForceOpen, now)
	b.mu.Unlock()
	b.emit(n)
}

// ForceClose moves to Closed with every counter zeroed, totals included, and
// reports a transition (CauseForceClose) even if it was Closed already.
func (b *Breaker) ForceClose() {
	now := time.Now()
	b.mu.Lock()
	from := b.state
	b.resetAll()
	b.gen++
	n := b.transition(from, CauseForceClose, now)
	b.mu.Unlock()
	b.emit(n)
}

// configure installs the settings resolved for both profiles.
func (b *Breaker) configure(cfg Config, o Overrides) {
	b.mu.Lock()
	b.settings[0] = Resolve(cfg, Claude, o)
	b.settings[1] = Resolve(cfg, OpenAI, o)
	b.settingsOK = true
	b.mu.Unlock()
}

// settingsFor returns p's settings; b.mu must be held.
func (b *Breaker) settingsFor(p Profile) *Settings {
	if !b.settingsOK {
		b.settings[0], b.settings[1] = Defaults(Claude), Defaults(OpenAI)
		b.settingsOK = true
	}
	return &b.settings[profileIndex(p)]
}

func (b *Breaker) anyDisabled() bool {
	return b.settingsFor(Claude).Disabled || b.settingsFor(OpenAI).Disabled
}

func (b *Breaker) allDisabled() bool {
	return b.settingsFor(Claude).Disabled && b.settingsFor(OpenAI).Disabled
}

// advance applies the lazy steps due at now: a lost probe permit is released
// once its deadline passed, and an Open breaker whose cooldown ended (now ≥
// Until) becomes HalfOpen. Open(Manual) has no cooldown.
func (b *Breaker) advance(now time.Time) notice {
	b.expireProbe(now)
	if b.state != Open || b.held() || now.Before(b.until) {
		return notice{}
	}
	b.state = HalfOpen
	b.until = time.Time{}
	b.halfOpenSuccesses = 0
	b.probeOut = false
	b.gen++
	return b.transition(Open, CauseRequest, now)
}

// advanceUnlessClosed is advance at time.Now for Allow and Bypass. Closed
// has no lazy step, and its permits need no time, so the clock is not read:
// on some virtual machines time.Now costs more than the rest of Allow.
// b.mu must be held.
func (b *Breaker) advanceUnlessClosed() (notice, time.Time) {
	if b.state == Closed {
		return notice{}, time.Time{}
	}
	now := time.Now()
	return b.advance(now), now
}

func (b *Breaker) expireProbe(now time.Time) {
	if b.probeOut && now.After(b.probeDeadline) {
		b.probeOut = false
	}
}

// closedOutcome counts o in Closed and opens the breaker when o trips it.
func (b *Breaker) closedOutcome(st *Settings, o Outcome, now time.Time) notice {
	if o.Kind == Neutral {
		return notice{}
	}
	b.countForDisplay(o, now, true)
	if o.Kind != Failure {
		return notice{}
	}
	reason := failureReason(o.Reason)
	immediate := reason == QuotaExhausted || (reason == RateLimited && o.RetryAfter > 0)
	if !immediate && !b.thresholdReached(st) {
		return notice{}
	}
	b.enterOpen(reason, now, b.cooldown(st, reason, o.RetryAfter))
	return b.transition(Closed, CauseRequest, now)
}

// thresholdReached applies docs/BEHAVIOUR.md#breaker-states's two trip rules after a counted failure.
// Only a failure can trip the breaker: the reason of the Open state is the
// tripping failure's.
func (b *Breaker) thresholdReached(st *Settings) bool {
	if b.consecutiveFailures >= st.FailureThreshold {
		return true
	}
	reqs, fails := b.win.reqs, b.win.fails
	return reqs >= st.MinRequests && float64(fails)/float64(reqs) >= st.ErrorRateThreshold
}

// probeOutcome counts a probe result in HalfOpen: enough successes close the
// breaker, any failure reopens it with that failure's reason and cooldown.
func (b *Breaker) probeOutcome(st *Settings, o Outcome, now time.Time) notice {
	switch o.Kind {
	case Success:
		b.countForDisplay(o, now, true)
		b.halfOpenSuccesses++
		if b.halfOpenSuccesses < st.SuccessThreshold {
			return notice{}
		}
		totalS, totalF := b.totalSuccesses, b.totalFailures
		b.resetAll()
		b.totalSuccesses, b.totalFailures = totalS, totalF
		b.gen++
		return b.transition(HalfOpen, CauseRequest, now)
	case Failure:
		b.countForDisplay(o, now, true)
		b.reopens++
		reason := failureReason(o.Reason)
		b.enterOpen(reason, now, b.cooldown(st, reason, o.RetryAfter))
		return b.transition(HalfOpen, CauseRequest, now)
	}
	return notice{}
}

// countForDisplay records o in the totals and the window and, when
// consecutive is set, in the consecutive-failure count.
func (b *Breaker) countForDisplay(o Outcome, now time.Time, consecutive bool) {
	switch o.Kind {
	case Success:
		b.totalSuccesses++
		b.win.add(now, false)
		if consecutive {
			b.consecutiveFailures = 0
		}
	case Failure:
		b.totalFailures++
		b.win.add(now, true)
		if consecutive {
			b.consecutiveFailures++
		}
	}
}

// failureReason maps the reason of a Failure outcome to the reason of the
// Open state it may cause; anything but a rate limit or spent quota is a
// broken endpoint.
func failureReason(r Reason) Reason {
	if r == RateLimited || r == QuotaExhausted {
		return r
	}
	return Broken
}

// cooldown is how long an Open state with reason lasts, computed when the
// breaker opens, from the settings of the request that opened it.
//
// Broken escalates with b.reopens, the probe failures in a row (docs/BEHAVIOUR.md#repeated-failure): the
// first three reopenings keep Timeout, each further one doubles it, capped
// at 16×: reopen #1..#3 → 1×, #4 → 2×, #5 → 4×, #6 → 8×, #7 and later → 16×.
// A Retry-After is capped by MaxRateLimitTimeout; without one a rate limit
// lasts RateLimitTimeout.
func (b *Breaker) cooldown(st *Settings, reason Reason, retryAfter time.Duration) time.Duration {
	switch reason {
	case RateLimited:
		if retryAfter > 0 {
			return min(retryAfter, st.MaxRateLimitTimeout)
		}
		return st.RateLimitTimeout
	case QuotaExhausted:
		return st.QuotaTimeout
	}
	shift := min(max(b.reopens-reopensBeforeEscalation, 0), maxEscalationShift)
	if st.Timeout > math.MaxInt64>>shift {
		return math.MaxInt64
	}
	return st.Timeout << shift
}

// enterOpen moves to Open with reason for d (Manual: no end).
func (b *Breaker) enterOpen(reason Reason, now time.Time, d time.Duration) {
	b.state, b.reason = Open, reason
	b.byBalance = false
	b.openedAt = now
	b.until = time.Time{}
	if reason != Manual {
		b.until = now.Add(d)
	}
	b.halfOpenSuccesses = 0
	b.probeOut = false
	b.gen++
}

// resetAll zeroes the state and every counter except the generation.
func (b *Breaker) resetAll() {
	b.state, b.reason = Closed, ReasonNone
	b.openedAt, b.until = time.Time{}, time.Time{}
	b.byBalance = false
	b.probeOut = false
	b.consecutiveFailures, b.halfOpenSuccesses, b.reopens = 0, 0, 0
	b.win.reset()
	b.totalSuccesses, b.totalFailures = 0, 0
}

// transition describes the change from `from` to the current state.
func (b *Breaker) transition(from State, cause Cause, now time.Time) notice {
	return notice{ok: true, tr: Transition{
		ID:         b.id,
		From:       from,
		To:         b.state,
		Reason:     b.reason,
		Cause:      cause,
		At:         now,
		Snapshot:   b.snapshotLocked(),
		Generation: b.gen,
	}}
}

// emit calls the OnTransition callback; b.mu must NOT be held, so the
// callback may use the breaker.
func (b *Breaker) emit(n notice) {
	if n.ok && b.notify != nil {
		b.notify(n.tr)
	}
}
