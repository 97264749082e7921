package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/ccmesh/ccmesh/app"
	"github.com/ccmesh/ccmesh/store"
)

func TestFill(t *testing.T) {
	dir := t.TempDir()
	const rows, days = 500, 4
	s, err := fill(t.Context(), options{data: dir, rows: rows, days: days, seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.Rows != rows || s.Days != days || s.Endpoints != 4 || s.DBKB <= 0 {
		t.Errorf("summary = %+v, want %d rows over %d days, 4 endpoints, a size", s, rows, days)
	}
	db, err := store.Open(t.Context(), filepath.Join(dir, app.DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	logs, next, err := db.ListLogs(t.Context(), store.LogFilter{Limit: rows})
	if err != nil || len(logs) != rows || next != 0 {
		t.Fatalf("ListLogs: %d rows (next %d), %v; want %d", len(logs), next, err, rows)
	}
	now := time.Now()
	if newest, oldest := logs[0].At, logs[rows-1].At; now.Sub(newest) > time.Hour || now.Sub(oldest) < (days-1)*24*time.Hour {
		t.Errorf("rows span %v … %v, want the last %d days", oldest, newest, days)
	}
	eps, err := db.ListEndpoints(t.Context())
	if err != nil || len(eps) != 4 {
		t.Fatalf("ListEndpoints: %d, %v; want 4", len(eps), err)
	}

	// Per 100 requests: 8 fail over from primary (two attempts, the
	// first failed); requests 0, 97, …, 485 end in an error.
	buckets, err := db.UsageBuckets(t.Context(), now.Add(-(days+1)*24*time.Hour), now.Add(time.Minute), false)
	if err != nil {
		t.Fatal(err)
	}
	var requests, succeeded, attempts, failed int64
	for _, b := range buckets {
		requests += b.Requests
		succeeded += b.Succeeded
		attempts += b.Attempts
		failed += b.Errors
	}
	if requests != rows || succeeded != rows-6 || attempts != rows+40 || failed != 40+6 {
		t.Errorf("hour buckets count %d requests (%d succeeded), %d attempts and %d errors, want %d (%d), %d and %d",
			requests, succeeded, attempts, failed, rows, rows-6, rows+40, 46)
	}
	// Every row carries its sums; these are priced at one flat rate.
	for _, l := range logs {
		if l.Usage == nil || (l.Status == 200) != (l.CostUSD != nil) {
			t.Fatalf("row %d (status %d): usage %+v, cost %v; want sums, a cost when answered", l.ID, l.Status, l.Usage, l.CostUSD)
		}
	}
	minutes, err := db.UsageBuckets(t.Context(), now.Add(-(days+1)*24*time.Hour), now.Add(time.Minute), true)
	if err != nil || len(minutes) == 0 {
		t.Fatalf("minute buckets: %d, %v", len(minutes), err)
	}
	if first := minutes[0].Start; now.Sub(first) > store.MinuteBucketsKept+time.Minute {
		t.Errorf("oldest minute bucket %v: older than %v was not pruned", first, store.MinuteBucketsKept)
	}

	doc, err := db.GetSettings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var settings app.Settings
	if err := json.Unmarshal(doc, &settings); err != nil || settings.LogRetentionDays <= days {
		t.Errorf("log_retention_days %d (%v), want more than %d so that no row is pruned", settings.LogRetentionDays, err, days)
	}

	if _, err := fill(t.Context(), options{data: dir, rows: 10, days: 1}); err == nil {
		t.Error("a second fill of the same data dir succeeded")
	}
}
