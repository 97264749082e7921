package breaker

import "time"

// Snapshot returns the persistable state as it is: it does not apply the
// lazy Open → HalfOpen step (a restored expired Open takes it on first use).
func (b *Breaker) Snapshot() Snapshot {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.snapshotLocked()
}

// Restore replaces the state with s (from the database at start). Counters
// not in a Snapshot (window, totals) start at zero; permits taken before are
// stale. An Open snapshot whose Until has passed stays Open until the next
// call that considers the breaker moves it to HalfOpen, like any expired
// Open; a restored HalfOpen has its probe slot free.
//
// OnTransition fires (CauseRestore) only when the restored state or reason
// differs from the one replaced — at start, where the breaker is fresh and
// Closed, that is exactly "the snapshot is not Closed". Invalid values are
// repaired: an unknown state restores as Closed, an Open without a known
// reason as Open(Broken), negative counters as zero.
func (b *Breaker) Restore(s Snapshot) {
	now := time.Now()
	s = sanitizeSnapshot(s)
	b.mu.Lock()
	from, fromReason := b.state, b.reason
	b.resetAll()
	b.state, b.reason = s.State, s.Reason
	b.openedAt, b.until = s.OpenedAt, s.Until
	b.consecutiveFailures = s.ConsecutiveFailures
	b.halfOpenSuccesses = s.HalfOpenSuccesses
	b.reopens = s.Reopens
	b.byBalance = s.Balance
	b.gen++
	var n notice
	if from != s.State || fromReason != s.Reason {
		n = b.transition(from, CauseRestore, now)
	}
	b.mu.Unlock()
	b.emit(n)
}

func sanitizeSnapshot(s Snapshot) Snapshot {
	switch s.State {
	case Open:
		switch s.Reason {
		case Broken, RateLimited, QuotaExhausted:
		case Manual:
			s.Until = time.Time{}
		default:
			s.Reason = Broken
		}
	case HalfOpen:
		s.Until = time.Time{}
	default:
		s = Snapshot{State: Closed, ConsecutiveFailures: s.ConsecutiveFailures}
	}
	s.ConsecutiveFailures = max(s.ConsecutiveFailures, 0)
	s.HalfOpenSuccesses = max(s.HalfOpenSuccesses, 0)
	s.Reopens = max(s.Reopens, 0)
	s.Balance = s.Balance && s.State != Closed && s.Reason == QuotaExhausted
	return s
}

func (b *Breaker) snapshotLocked() Snapshot {
	return Snapshot{
		State:               b.state,
		Reason:              b.reason,
		OpenedAt:            b.openedAt,
		Until:               b.until,
		ConsecutiveFailures: b.consecutiveFailures,
		HalfOpenSuccesses:   b.halfOpenSuccesses,
		Reopens:             b.reopens,
		Balance:             b.byBalance,
	}
}
