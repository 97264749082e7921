package app

import (
	"context"
	"sync"
	"time"

	"github.com/ccmesh/ccmesh/app/desktop"
	"github.com/ccmesh/ccmesh/store"
)

// todayTotals keeps today's request count and cost (local time) for the
// tray's status line, added as records are logged, so the tray never
// queries the database (docs/BEHAVIOUR.md#tray). It starts from the
// statistics of the hours since midnight, and counts requests as they do
// (docs/BEHAVIOUR.md#statistics: client requests, not their attempts).
type todayTotals struct {
	mu  sync.Mutex
	day time.Time // local midnight of the day counted
	sum today
}

// today is what todayTotals holds for one day, in the tray's shape.
type today = desktop.Today

func midnight(t time.Time) time.Time {
	t = t.In(time.Local)
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.Local)
}

// load counts what the statistics hold for today so far.
func (c *todayTotals) load(ctx context.Context, db *store.DB, now time.Time) error {
	day := midnight(now)
	rows, err := db.UsageBuckets(ctx, day, now.Add(time.Hour), false)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.day, c.sum = day, today{}
	for _, r := range rows {
		c.sum.Requests += r.Requests
		c.sum.USD += r.CostUSD
		c.sum.Unpriced += r.Unpriced
	}
	return nil
}

// add counts a logged request's deltas; a request of another day starts
// the count again.
func (c *todayTotals) add(at time.Time, ds []store.UsageDelta) {
	day := midnight(at)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !day.Equal(c.day) {
		if day.Before(c.day) {
			return
		}
		c.day, c.sum = day, today{}
	}
	for i := range ds {
		c.sum.Requests += ds[i].Requests
		c.sum.USD += ds[i].CostUSD
		c.sum.Unpriced += ds[i].Unpriced
	}
}

// get is today's totals; zero once the day they counted is over.
func (c *todayTotals) get(now time.Time) today {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !midnight(now).Equal(c.day) {
		return today{}
	}
	return c.sum
}
