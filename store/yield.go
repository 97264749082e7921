package store

import (
	"runtime"
	"time"
)

// yieldEvery is how much of the log writer's work may run before it lets
// the request path have the core; yieldPause is how long it then parks.
var (
	yieldEvery = 100 * time.Microsecond
	yieldPause = 20 * time.Microsecond
)

// yielder lets the request path run while the log writer works through a
// batch on a process with one P (GOMAXPROCS 1: a one-core machine,
// container or taskset). A row is ~20 µs of CPU in the pure-Go SQLite and
// nothing in it blocks, so the writer would hold the only P for a whole
// batch; runtime.Gosched does not help, because the scheduler takes the
// yielding goroutine back from its run queue before it polls the network,
// so a request whose socket became readable stays unseen. A short sleep
// parks the writer: the scheduler then polls the network and runs what is
// ready first. With more than one P other Ps serve the network and the
// writer never pauses.
type yielder struct {
	on   bool
	last time.Time
}

func newYielder() yielder {
	return yielder{on: runtime.GOMAXPROCS(0) == 1, last: time.Now()}
}

// maybe pauses the writer when it has run for yieldEvery since the last
// pause. With nothing else to run the pause lasts until the runtime's
// next timer check, about a millisecond: the writer only waits when the
// process is otherwise idle.
func (y *yielder) maybe() {
	if y != nil && y.on && time.Since(y.last) >= yieldEvery {
		y.pause()
	}
}

// now pauses whatever the time since the last pause: before a step that
// cannot pause inside (BEGIN with its prepare, COMMIT), so that a request
// that became ready meanwhile does not wait through it as well.
func (y *yielder) now() {
	if y != nil && y.on {
		y.pause()
	}
}

func (y *yielder) pause() {
	time.Sleep(yieldPause)
	y.last = time.Now()
}
