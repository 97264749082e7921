package app

import (
	"context"
	"sync"
	"time"

	"github.com/ccmesh/ccmesh/store"
)

// todayCost keeps the cost of today's requests (local time) for the tray's
// status line, added as records are logged, so the tray never queries the
// database (docs/BEHAVIOUR.md#tray). It starts from the statistics of the
// hours since midnight.
type todayCost struct {
	mu       sync.Mutex
	day      time.Time // local midnight of the day counted
	usd      float64
	unpriced int64
}

func midnight(t time.Time) time.Time {
	t = t.In(time.Local)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.Local)
}

// load counts what the statistics hold for today so far.
func (c *todayCost) load(ctx context.Context, db *store.DB, now time.Time) error {
	day := midnight(now)
	rows, err := db.UsageBuckets(ctx, day, now.Add(time.Hour), false)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.day, c.usd, c.unpriced = day, 0, 0
	for _, r := range rows {
		c.usd += r.CostUSD
		c.unpriced += r.Unpriced
	}
	return nil
}

// add counts a logged request's deltas; a request of another day starts
// the count again.
func (c *todayCost) add(at time.Time, ds []store.UsageDelta) {
	day := midnight(at)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !day.Equal(c.day) {
		if day.Before(c.day) {
			return
		}
		c.day, c.usd, c.unpriced = day, 0, 0
	}
	for i := range ds {
		c.usd += ds[i].CostUSD
		c.unpriced += ds[i].Unpriced
	}
}

// get is today's cost and how many of today's attempts had no price.
func (c *todayCost) get(now time.Time) (usd float64, unpriced int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !midnight(now).Equal(c.day) {
		return 0, 0
	}
	return c.usd, c.unpriced
}
