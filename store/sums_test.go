package store

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A row's summed usage and cost are kept and read back as written; a row
// without them (from before they were kept) reads null, and a cost of 0
// (a free model) stays 0, not null (docs/BEHAVIOUR.md#request-log).
func TestLogRowSums(t *testing.T) {
	db := openTestDB(t)
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		row  RequestLog
		want string // the row's "usage" and "cost_usd" in JSON
	}{
		{"priced", RequestLog{Usage: &LogUsage{Tokens: Tokens{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4, Reasoning: 5}, Estimated: true}, CostUSD: ptr(0.125)},
			`"usage":{"input":1,"output":2,"cache_read":3,"cache_write":4,"reasoning":5,"estimated":true},"cost_usd":0.125`},
		{"no price", RequestLog{Usage: &LogUsage{Tokens: Tokens{Input: 7}}},
			`"usage":{"input":7,"output":0,"cache_read":0,"cache_write":0,"reasoning":0,"estimated":false},"cost_usd":null`},
		{"free", RequestLog{Usage: &LogUsage{Tokens: Tokens{Output: 9}}, CostUSD: ptr(0.0)},
			`"usage":{"input":0,"output":9,"cache_read":0,"cache_write":0,"reasoning":0,"estimated":false},"cost_usd":0`},
		{"not kept", RequestLog{}, `"usage":null,"cost_usd":null`},
	}
	// Nine rows in one batch: the multi-row INSERT takes eight of them.
	var batch []RequestLog
	for i := range 9 {
		r := tests[i%len(tests)].row
		r.At, r.Path = at, tests[i%len(tests)].name
		batch = append(batch, r)
	}
	if err := db.insertLogs(t.Context(), batch, make([][]byte, len(batch)), make([][]byte, len(batch))); err != nil {
		t.Fatal(err)
	}
	items, _, err := db.ListLogs(t.Context(), LogFilter{Limit: 100})
	if err != nil || len(items) != len(batch) {
		t.Fatalf("ListLogs: %d rows, %v", len(items), err)
	}
	for i, r := range items {
		tt := tests[(len(items)-1-i)%len(tests)] // newest first
		t.Run(tt.name, func(t *testing.T) {
			one, err := db.GetLog(t.Context(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range []RequestLog{r, one} {
				b, err := json.Marshal(got)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(b), tt.want) {
					t.Errorf("row %d: %s\nwant it to hold %s", got.ID, b, tt.want)
				}
			}
		})
	}
}

// Buckets count client requests, their successes and the attempts apart
// (docs/BEHAVIOUR.md#statistics).
func TestUsageRequestsAndAttempts(t *testing.T) {
	db := openTestDB(t)
	m := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	// One request that failed over twice and was answered by beta.
	rows := []RequestLog{{At: m, Status: 200, Deltas: []UsageDelta{
		{EndpointID: 1, Endpoint: "alpha", Model: "x", Counts: Counts{Attempts: 1, Errors: 1}},
		{EndpointID: 1, Endpoint: "alpha", Model: "x", Counts: Counts{Attempts: 1, Errors: 1}},
		{EndpointID: 2, Endpoint: "beta", Model: "x", Counts: Counts{Requests: 1, Succeeded: 1, Attempts: 1}},
	}}}
	if err := db.insertLogs(t.Context(), rows, make([][]byte, 1), make([][]byte, 1)); err != nil {
		t.Fatal(err)
	}
	bs, err := db.UsageBuckets(t.Context(), m, m.Add(time.Hour), true)
	if err != nil {
		t.Fatal(err)
	}
	type counts struct{ requests, succeeded, attempts, errors int64 }
	got := map[string]counts{}
	for _, b := range bs {
		got[b.Endpoint] = counts{b.Requests, b.Succeeded, b.Attempts, b.Errors}
	}
	want := map[string]counts{"alpha": {0, 0, 2, 2}, "beta": {1, 1, 1, 0}}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %+v, want %+v", k, got[k], w)
		}
	}
}

// A database from before the request sums: its log rows read null sums,
// and its buckets, which counted every attempt as a request, keep their
// figures with attempts set to them.
func TestMigrationKeepsOldBuckets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ccmesh.db")
	if _, err := prepareFile(path); err != nil {
		t.Fatal(err)
	}
	old := rawOpen(t, dsn(path, openOptions{busyTimeout: time.Second}))
	p, err := (&DB{sql: old, path: path, writeSem: make(chan struct{}, 1)}).newMigrator()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(t.Context(), 11); err != nil {
		t.Fatalf("migrate to version 11: %v", err)
	}
	for _, q := range []string{
		`INSERT INTO request_logs (at, endpoint_id, endpoint, status, attempts, tokens_in, history)
			VALUES (1, 2, 'beta', 200, 2, 5, '[{"usage":{"input":5}}]')`,
		`INSERT INTO usage_hours (start, endpoint_id, endpoint, model, requests, errors) VALUES (0, 1, 'alpha', 'x', 5, 2)`,
		`INSERT INTO usage_minutes (start, endpoint_id, endpoint, model, requests, errors) VALUES (0, 1, 'alpha', 'x', 3, 1)`,
	} {
		if _, err := old.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	db := openAt(t, path)
	r, err := db.GetLog(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Usage != nil || r.CostUSD != nil || r.TokensIn != 5 {
		t.Errorf("old row: usage %+v, cost %v, tokens_in %d; want no sums, tokens_in 5", r.Usage, r.CostUSD, r.TokensIn)
	}
	for _, c := range []struct {
		name    string
		minutes bool
		want    [4]int64 // requests, succeeded, attempts, errors
	}{{"hours", false, [4]int64{5, 3, 5, 2}}, {"minutes", true, [4]int64{3, 2, 3, 1}}} {
		t.Run(c.name, func(t *testing.T) {
			bs, err := db.UsageBuckets(t.Context(), time.UnixMilli(0), time.UnixMilli(1), c.minutes)
			if err != nil || len(bs) != 1 {
				t.Fatalf("%d buckets, %v", len(bs), err)
			}
			b := bs[0]
			if got := [4]int64{b.Requests, b.Succeeded, b.Attempts, b.Errors}; got != c.want {
				t.Errorf("requests, succeeded, attempts, errors = %v, want %v", got, c.want)
			}
		})
	}
}
