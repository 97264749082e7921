package breaker

import "time"

// A balance reading steers a breaker from outside the request path
// (docs/BEHAVIOUR.md#balance): nothing left opens it as QuotaExhausted
// until the reading's reset time, or with none until a reading shows
// credit; credit closes a breaker a reading opened. Both report
// CauseBalance, so the audit trail says why.

// held reports an Open state with no cooldown: Manual, or opened by a
// balance reading that gave no reset time. b.mu must be held.
func (b *Breaker) held() bool {
	return b.reason == Manual || (b.byBalance && b.until.IsZero())
}

// BalanceOpen opens the breaker as QuotaExhausted until until (zero: until
// BalanceClose or a force). A breaker forced open stays as it is, and so
// does one a reading already holds until the same time; otherwise it
// reports the transition and returns true.
func (b *Breaker) BalanceOpen(until time.Time) bool {
	now := time.Now()
	b.mu.Lock()
	if b.state == Open && (b.reason == Manual || b.byBalance && b.until.Equal(until)) {
		b.mu.Unlock()
		return false
	}
	from := b.state
	b.enterOpen(QuotaExhausted, now, 0)
	b.until = until
	b.byBalance = true
	n := b.transition(from, CauseBalance, now)
	b.mu.Unlock()
	b.emit(n)
	return true
}

// BalanceClose closes a breaker a balance reading opened (Open or, after
// its reset time, HalfOpen), keeping its totals like a probe's close, and
// returns true; a breaker opened otherwise is left to its own rules.
func (b *Breaker) BalanceClose() bool {
	now := time.Now()
	b.mu.Lock()
	if !b.byBalance || b.state == Closed {
		b.mu.Unlock()
		return false
	}
	from := b.state
	totalS, totalF := b.totalSuccesses, b.totalFailures
	b.resetAll()
	b.totalSuccesses, b.totalFailures = totalS, totalF
	b.gen++
	n := b.transition(from, CauseBalance, now)
	b.mu.Unlock()
	b.emit(n)
	return true
}
