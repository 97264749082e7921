package breaker

import "time"

// windowSeconds is the span of the error-rate window of docs/BEHAVIOUR.md#breaker-states.
const windowSeconds = 60

// window counts samples over the last 60 s in one bucket per second. It is a
// fixed ring with running sums, so recording is O(1) amortised and never
// allocates — it sits on every request's path.
type window struct {
	newest      int64 // Unix second of the newest bucket
	started     bool
	reqs, fails int
	buckets     [windowSeconds]bucket
}

type bucket struct{ reqs, fails int32 }

func slot(sec int64) int {
	return int(((sec % windowSeconds) + windowSeconds) % windowSeconds)
}

// roll moves the window forward to sec, dropping the buckets that fell out.
// A wall clock that steps back leaves the window where it is: the sample is
// then counted in the newest bucket rather than lost.
func (w *window) roll(sec int64) {
	if !w.started || sec-w.newest >= windowSeconds {
		w.reset()
		w.newest, w.started = sec, true
		return
	}
	for s := w.newest + 1; s <= sec; s++ {
		b := &w.buckets[slot(s)]
		w.reqs -= int(b.reqs)
		w.fails -= int(b.fails)
		*b = bucket{}
	}
	if sec > w.newest {
		w.newest = sec
	}
}

func (w *window) add(now time.Time, failed bool) {
	w.roll(now.Unix())
	b := &w.buckets[slot(w.newest)]
	b.reqs++
	w.reqs++
	if failed {
		b.fails++
		w.fails++
	}
}

// counts returns the samples and failures of the 60 s ending at now.
func (w *window) counts(now time.Time) (reqs, fails int) {
	w.roll(now.Unix())
	return w.reqs, w.fails
}

func (w *window) reset() {
	*w = window{}
}
