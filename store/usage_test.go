package store

import (
	"reflect"
	"testing"
	"time"
)

// A batch's deltas are summed per bucket row before they are written; the
// sums must equal adding them one by one, across batches too.
func TestUsageSummedPerBucketRow(t *testing.T) {
	db := openTestDB(t)
	h := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	d := func(ep int64, name, model string, in int64, errs int64, cost float64) []UsageDelta {
		return []UsageDelta{{EndpointID: ep, Endpoint: name, Model: model, Counts: Counts{Requests: 1, Errors: errs, Tokens: Tokens{Input: in, Output: 2 * in, CacheRead: 1}, CostUSD: cost}}}
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

// distinctCounts sets every count, those of the embedded Tokens too, to a
// value of its own, so that a count a table or a sum leaves out, or puts
// in another's column, shows.
func distinctCounts() Counts {
	var c Counts
	n := 0
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.Struct:
				fill(f)
			case reflect.Int64:
				n++
				f.SetInt(int64(n))
			case reflect.Float64:
				n++
				f.SetFloat(float64(n) + 0.5)
			}
		}
	}
	fill(reflect.ValueOf(&c).Elem())
	return c
}

// TestEveryCountTravels (item 2): each count a delta carries comes back,
// in its own field, from every bucket table: minute and hour, per endpoint
// and model and per key (docs/BEHAVIOUR.md#statistics).
func TestEveryCountTravels(t *testing.T) {
	db := openTestDB(t)
	m := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	want := distinctCounts()
	rows := []RequestLog{{At: m, Status: 200, Deltas: []UsageDelta{
		{EndpointID: 1, Endpoint: "alpha", Model: "x", KeyID: 7, Key: "main …abcd", Counts: want},
	}}}
	if err := db.insertLogs(t.Context(), rows, make([][]byte, 1), make([][]byte, 1)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		keys, minutes bool
	}{
		{"endpoint minutes", false, true},
		{"endpoint hours", false, false},
		{"key minutes", true, true},
		{"key hours", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := db.UsageBuckets
			if tc.keys {
				read = db.UsageKeyBuckets
			}
			bs, err := read(t.Context(), m, m.Add(time.Hour), tc.minutes)
			if err != nil {
				t.Fatal(err)
			}
			if len(bs) != 1 {
				t.Fatalf("%d buckets, want 1", len(bs))
			}
			if got := bs[0].Counts; got != want {
				t.Errorf("counts\n got %+v\nwant %+v", got, want)
			}
		})
	}
}
