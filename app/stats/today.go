package stats

import (
	"context"
	"sync"
	"time"

	"github.com/ccmesh/ccmesh/store"
)

// Today keeps today's request count and cost (local time) for the tray's
// status line, added as records are logged, so the tray never queries the
// database (docs/BEHAVIOUR.md#tray). It starts from the statistics of the
// hours since midnight, and counts requests as they do
// (docs/BEHAVIOUR.md#statistics: client requests, not their attempts).
// The zero value counts from nothing.
type Today struct {
	mu  sync.Mutex
	day time.Time // local midnight of the day counted
	sum Day
}

// Day is what Today holds for one day, in the tray's shape (desktop.Today).
type Day struct {
	Requests int64
	USD      float64
	Unpriced int64 // attempts with usage but no price: their cost is unknown
}

func midnight(t time.Time) time.Time {
	t = t.In(time.Local)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.Local)
}

// Load counts what the statistics hold for today so far.
func (c *Today) Load(ctx context.Context, db Reader, now time.Time) error {
	day := midnight(now)
	rows, err := db.UsageBuckets(ctx, day, now.Add(time.Hour), false)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.day, c.sum = day, Day{}
	for _, r := range rows {
		c.sum.Requests += r.Requests
		c.sum.USD += r.CostUSD
		c.sum.Unpriced += r.Unpriced
	}
	return nil
}

// Add counts a logged request's deltas; a request of another day starts
// the count again.
func (c *Today) Add(at time.Time, ds []store.UsageDelta) {
	day := midnight(at)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !day.Equal(c.day) {
		if day.Before(c.day) {
			return
		}
		c.day, c.sum = day, Day{}
	}
	for i := range ds {
		c.sum.Requests += ds[i].Requests
		c.sum.USD += ds[i].CostUSD
		c.sum.Unpriced += ds[i].Unpriced
	}
}

// Get is today's totals; zero once the day they counted is over.
func (c *Today) Get(now time.Time) Day {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !midnight(now).Equal(c.day) {
		return Day{}
	}
	return c.sum
}
