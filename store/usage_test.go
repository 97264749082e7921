package store

import (
	"testing"
	"time"
)

// A batch's deltas are summed per bucket row before they are written; the
// sums must equal adding them one by one, across batches too.
func TestUsageSummedPerBucketRow(t *testing.T) {
	db := openTestDB(t)
	h := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	d := func(ep int64, name, model string, in int64, errs int64, cost float64) []UsageDelta {
		return []UsageDelta{{EndpointID: ep, Endpoint: name, Model: model, Requests: 1, Errors: errs, Input: in, Output: 2 * in, CacheRead: 1, CostUSD: cost}}
	}
	first := []RequestLog{
		{At: h.Add(10 * time.Second), Status: 200, Deltas: d(1, "alpha", "m1", 10, 0, 0.25)},
		{At: h.Add(50 * time.Second), Status: 200, Deltas: d(1, "alpha", "m1", 20, 0, 0.5)},
		{At: h.Add(90 * time.Second), Status: 502, Deltas: d(1, "alpha", "m1", 0, 1, 0)},
		// Two attempts of one request: each its own endpoint.
		{At: h.Add(100 * time.Second), Status: 200, Deltas: append(d(2, "beta", "m1", 0, 1, 0), d(1, "alpha", "m2", 5, 0, 0.125)...)},
	}
	second := []RequestLog{
		// Same minute as the first row, in a later batch; the endpoint was renamed meanwhile.
		{At: h.Add(30 * time.Second), Status: 200, Deltas: d(1, "alpha-eu", "m1", 7, 0, 1)},
		// Next hour.
		{At: h.Add(time.Hour + time.Second), Status: 200, Deltas: d(1, "alpha-eu", "m1", 1, 0, 0)},
	}
	for _, b := range [][]RequestLog{first, second} {
		if err := db.insertLogs(t.Context(), b, make([][]byte, len(b)), make([][]byte, len(b))); err != nil {
			t.Fatal(err)
		}
	}
	type row struct {
		start              time.Time
		ep                 int64
		name, model        string
		req, errs, in, out int64
		cacheRead          int64
		cost               float64
	}
	got := func(minutes bool) []row {
		bs, err := db.UsageBuckets(t.Context(), h.Add(-time.Hour), h.Add(3*time.Hour), minutes)
		if err != nil {
			t.Fatal(err)
		}
		var out []row
		for _, b := range bs {
			out = append(out, row{b.Start, b.EndpointID, b.Endpoint, b.Model, b.Requests, b.Errors, b.Input, b.Output, b.CacheRead, b.CostUSD})
		}
		return out
	}
	m := func(mins int) time.Time { return h.Add(time.Duration(mins) * time.Minute) }
	wantMinutes := []row{
		{m(0), 1, "alpha-eu", "m1", 3, 0, 37, 74, 3, 1.75},
		{m(1), 1, "alpha", "m1", 1, 1, 0, 0, 1, 0},
		{m(1), 1, "alpha", "m2", 1, 0, 5, 10, 1, 0.125},
		{m(1), 2, "beta", "m1", 1, 1, 0, 0, 1, 0},
		{m(60), 1, "alpha-eu", "m1", 1, 0, 1, 2, 1, 0},
	}
	wantHours := []row{
		{m(0), 1, "alpha-eu", "m1", 4, 1, 37, 74, 4, 1.75},
		{m(0), 1, "alpha", "m2", 1, 0, 5, 10, 1, 0.125},
		{m(0), 2, "beta", "m1", 1, 1, 0, 0, 1, 0},
		{m(60), 1, "alpha-eu", "m1", 1, 0, 1, 2, 1, 0},
	}
	for _, c := range []struct {
		name    string
		minutes bool
		want    []row
	}{{"minutes", true, wantMinutes}, {"hours", false, wantHours}} {
		g := got(c.minutes)
		if len(g) != len(c.want) {
			t.Fatalf("%s: %d rows, want %d:\n got %+v\nwant %+v", c.name, len(g), len(c.want), g, c.want)
		}
		for i := range g {
			if !g[i].start.Equal(c.want[i].start) || g[i].ep != c.want[i].ep || g[i].name != c.want[i].name ||
				g[i].model != c.want[i].model || g[i].req != c.want[i].req || g[i].errs != c.want[i].errs ||
				g[i].in != c.want[i].in || g[i].out != c.want[i].out || g[i].cacheRead != c.want[i].cacheRead ||
				g[i].cost != c.want[i].cost {
				t.Errorf("%s row %d:\n got %+v\nwant %+v", c.name, i, g[i], c.want[i])
			}
		}
	}
}
