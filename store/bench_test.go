package store

import (
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

// BenchmarkInsertBatch measures the writer's side: one 256-row batch per op.
func BenchmarkInsertBatch(b *testing.B) {
	db := openBenchDB(b)
	batch := make([]RequestLog, 256)
	routing := make([][]byte, len(batch))
	history := make([][]byte, len(batch))
	for i := range batch {
		batch[i] = RequestLog{At: time.Now(), Path: "/v1/messages", Endpoint: "alpha", Status: 200}
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

func openBenchDB(b *testing.B) *DB {
	b.Helper()
	db, err := Open(b.Context(), b.TempDir()+"/ccmesh.db")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}
