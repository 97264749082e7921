package store

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkEnqueue is the cost the request path pays per log row.
func BenchmarkEnqueue(b *testing.B) {
	db := openBenchDB(b)
	w := NewLogWriter(db, LogWriterOptions{})
	b.Cleanup(func() { _ = w.Close(b.Context()) })
	r := RequestLog{Path: "/v1/messages", Status: 200, Routing: map[string]any{"candidates": []string{"a", "b"}}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Enqueue(r)
		}
	})
}

// BenchmarkInsertBatch measures the writer's side: one batch per op, of
// the LogWriter's default 32 rows and of 256.
func BenchmarkInsertBatch(b *testing.B) {
	for _, n := range []int{32, 256} {
		b.Run(fmt.Sprintf("rows=%d", n), func(b *testing.B) { benchInsertBatch(b, n) })
	}
}

func benchInsertBatch(b *testing.B, n int) {
	db := openBenchDB(b)
	batch := make([]RequestLog, n)
	routing := make([][]byte, len(batch))
	history := make([][]byte, len(batch))
	for i := range batch {
		cost := 0.002
		batch[i] = RequestLog{At: time.Now(), Path: "/v1/messages", Endpoint: "alpha", Status: 200,
			Usage: &LogUsage{Tokens: Tokens{Input: 12, Output: 34, CacheRead: 5000}}, CostUSD: &cost,
			Deltas: []UsageDelta{{EndpointID: 1, Endpoint: "alpha", Model: "claude-sonnet-4-5", Counts: Counts{Requests: 1, Succeeded: 1, Attempts: 1, Tokens: Tokens{Input: 12, Output: 34, CacheRead: 5000}, CostUSD: 0.002}}}}
		routing[i] = []byte(`{"candidates":[{"name":"alpha","state":"closed"}]}`)
		history[i] = []byte(`[{"endpoint":"alpha","status":200,"duration_ms":812}]`)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := db.insertLogs(b.Context(), batch, routing, history); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(batch))/b.Elapsed().Seconds(), "rows/s")
}

func openBenchDB(b testing.TB) *DB {
	b.Helper()
	db, err := Open(b.Context(), b.TempDir()+"/ccmesh.db")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

// BenchmarkUsageBuckets30Days is the statistics read behind a 30-day
// chart (docs/BEHAVIOUR.md#statistics) on a database that logged 50 000
// requests over those days: 4 endpoints × 3 models, one attempt each and a
// failover every tenth request.
func BenchmarkUsageBuckets30Days(b *testing.B) {
	db := openBenchDB(b)
	const rows = 50_000
	now := time.Now()
	start := now.Add(-30 * 24 * time.Hour)
	step := 30 * 24 * time.Hour / rows
	models := []string{"claude-sonnet-4-5", "claude-haiku-4-5", "gpt-5.5"}
	for off := 0; off < rows; off += 500 {
		batch := make([]RequestLog, 500)
		routing := make([][]byte, len(batch))
		history := make([][]byte, len(batch))
		for i := range batch {
			n := off + i
			ep := int64(n%4 + 1)
			d := UsageDelta{EndpointID: ep, Endpoint: "ep" + string(rune('a'+ep)), Model: models[n%3], Counts: Counts{Requests: 1, Succeeded: 1, Attempts: 1, Tokens: Tokens{Input: 100, Output: 50, CacheRead: 4000}, CostUSD: 0.01}}
			batch[i] = RequestLog{At: start.Add(time.Duration(n) * step), Status: 200, Deltas: []UsageDelta{d}}
			if n%10 == 0 {
				batch[i].Deltas = append(batch[i].Deltas, UsageDelta{EndpointID: ep%4 + 1, Endpoint: "failed", Model: models[n%3], Counts: Counts{Attempts: 1, Errors: 1}})
			}
		}
		if err := db.insertLogs(b.Context(), batch, routing, history); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		got, err := db.UsageBuckets(b.Context(), start, now, false)
		if err != nil || len(got) == 0 {
			b.Fatalf("%d buckets, %v", len(got), err)
		}
	}
}
