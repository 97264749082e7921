package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// advance moves a synctest bubble's fake clock by d and lets every goroutine
// settle (the bubble's idiom for a sleep; no real time passes).
func advance(d time.Duration) {
	<-time.After(d)
	synctest.Wait()
}

func countLogs(t *testing.T, db *DB) int {
	t.Helper()
	var n int
	if err := db.sql.QueryRowContext(context.Background(), `SELECT count(*) FROM request_logs`).Scan(&n); err != nil {
		t.Fatalf("count request logs: %v", err)
	}
	return n
}

// openBubbleDB opens a database inside the current synctest bubble (its
// channels must belong to the bubble); the caller closes it before the
// bubble ends.
func openBubbleDB(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(dir, "ccmesh.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return db
}

func TestLogWriterBatching(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		db := openBubbleDB(t, dir)
		defer db.Close()
		var mu sync.Mutex
		var batches [][]int64
		w := NewLogWriter(db, LogWriterOptions{
			BatchSize: 3, FlushInterval: 200 * time.Millisecond,
			OnWrite: func(rows []RequestLog) { mu.Lock(); batches = append(batches, rowIDs(rows)); mu.Unlock() },
		})
		defer w.Close(context.Background())

		steps := []struct {
			name        string
			enqueue     int
			wait        time.Duration
			wantRows    int
			wantBatches int
		}{
			{"a full batch is written at once", 3, 0, 3, 1},
			{"a partial batch waits", 1, 200*time.Millisecond - time.Nanosecond, 3, 1},
			{"until the flush interval", 0, time.Nanosecond, 4, 2},
			{"the interval starts at the first row", 2, 200 * time.Millisecond, 6, 3},
		}
		for _, st := range steps {
			for range st.enqueue {
				if !w.Enqueue(RequestLog{Path: "/v1/messages", Status: 200}) {
					t.Fatalf("%s: Enqueue refused a row", st.name)
				}
			}
			synctest.Wait()
			advance(st.wait)
			mu.Lock()
			got := len(batches)
			mu.Unlock()
			if rows := countLogs(t, db); rows != st.wantRows || got != st.wantBatches {
				t.Errorf("%s: %d rows in %d batches, want %d in %d", st.name, rows, got, st.wantRows, st.wantBatches)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if want := [][]int64{{1, 2, 3}, {4}, {5, 6}}; !slices.EqualFunc(batches, want, slices.Equal) {
			t.Errorf("OnWrite ids = %v, want %v", batches, want)
		}
	})
}

// TestLogWriterFillsRowByRow: rows that come one at a time, the writer
// idle between them, are written the moment the batch is full, not at
// its flush interval.
func TestLogWriterFillsRowByRow(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		db := openBubbleDB(t, dir)
		defer db.Close()
		w := NewLogWriter(db, LogWriterOptions{BatchSize: 3, FlushInterval: time.Hour})
		defer w.Close(context.Background())
		for i := range 7 {
			w.Enqueue(RequestLog{Path: "/v1/messages", Status: 200})
			synctest.Wait()
			if got, want := countLogs(t, db), (i+1)/3*3; got != want {
				t.Fatalf("after row %d: %d rows written, want %d", i+1, got, want)
			}
		}
	})
}

func TestLogWriterEncodesJSON(t *testing.T) {
	db := openTestDB(t)
	var ids atomic.Int64
	w := NewLogWriter(db, LogWriterOptions{OnWrite: func(got []RequestLog) { ids.Store(got[0].ID) }})
	w.Enqueue(RequestLog{
		Routing: map[string]any{"candidates": []string{"alpha"}},
		History: make(chan int), // cannot be marshalled: the row is kept without it
	})
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetLog(t.Context(), ids.Load())
	if err != nil {
		t.Fatalf("GetLog: %v", err)
	}
	if r, ok := got.Routing.(json.RawMessage); !ok || string(r) != `{"candidates":["alpha"]}` {
		t.Errorf("routing = %#v, want the marshalled map", got.Routing)
	}
	if got.History != nil {
		t.Errorf("history = %#v, want nil for an unmarshallable value", got.History)
	}
	if got.At.IsZero() {
		t.Error("a row enqueued without a time was stored without one")
	}
}

// selfWriting is a routing or history value that writes its own JSON
// (jsonAppender), or declines when decline is set.
type selfWriting struct{ decline bool }

func (v selfWriting) AppendJSON(dst []byte) ([]byte, bool) {
	if v.decline {
		return dst, false
	}
	return append(dst, `{"written":"by itself"}`...), true
}

// TestLogWriterAppenders: a value that writes itself is stored as it
// writes itself; one that declines is marshalled by encoding/json.
func TestLogWriterAppenders(t *testing.T) {
	db := openTestDB(t)
	var ids atomic.Int64
	w := NewLogWriter(db, LogWriterOptions{OnWrite: func(got []RequestLog) { ids.Store(got[0].ID) }})
	w.Enqueue(RequestLog{Routing: selfWriting{}, History: selfWriting{decline: true}})
	if err := w.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetLog(t.Context(), ids.Load())
	if err != nil {
		t.Fatalf("GetLog: %v", err)
	}
	if r, ok := got.Routing.(json.RawMessage); !ok || string(r) != `{"written":"by itself"}` {
		t.Errorf("routing = %#v, want what the value wrote", got.Routing)
	}
	if h, ok := got.History.(json.RawMessage); !ok || string(h) != `{}` {
		t.Errorf("history = %#v, want encoding/json's {}", got.History)
	}
}

// TestLogWriterFloodDropsAndCounts blocks the database (the writer waits
// on the write lock) and floods the queue from many goroutines: Enqueue
// must refuse and count the overflow, never wait.
func TestLogWriterFloodDropsAndCounts(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		db := openBubbleDB(t, dir)
		defer db.Close()
		const queue = 4
		w := NewLogWriter(db, LogWriterOptions{QueueSize: queue, BatchSize: 1})

		db.writeSem <- struct{}{} // hold the database's write lock
		w.Enqueue(RequestLog{Status: 1})
		synctest.Wait() // the writer took that row and waits for the lock

		var accepted, refused atomic.Int64
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				for range 50 {
					if w.Enqueue(RequestLog{Status: 2}) {
						accepted.Add(1)
					} else {
						refused.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if accepted.Load() != queue || refused.Load() != 500-queue {
			t.Errorf("accepted %d refused %d, want %d and %d", accepted.Load(), refused.Load(), queue, 500-queue)
		}
		if got := w.Dropped(); got != uint64(500-queue) {
			t.Errorf("Dropped() = %d, want %d", got, 500-queue)
		}

		<-db.writeSem // unblock the database
		if err := w.Close(context.Background()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if rows := countLogs(t, db); rows != 1+queue {
			t.Errorf("rows written = %d, want %d (all accepted)", rows, 1+queue)
		}
		if w.Enqueue(RequestLog{}) || w.Dropped() != uint64(500-queue+1) {
			t.Errorf("Enqueue after Close accepted or was not counted (dropped %d)", w.Dropped())
		}
		if w.Failed() != 0 {
			t.Errorf("Failed() = %d, want 0", w.Failed())
		}
	})
}

// TestLogWriterBurstInOrder: rows queued while a batch waits for the
// database are written afterwards in order, a batch at a time, and the
// last partial batch at its flush interval.
func TestLogWriterBurstInOrder(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		db := openBubbleDB(t, dir)
		defer db.Close()
		var mu sync.Mutex
		var batches [][]int
		w := NewLogWriter(db, LogWriterOptions{BatchSize: 3, FlushInterval: time.Second,
			OnWrite: func(rows []RequestLog) {
				mu.Lock()
				defer mu.Unlock()
				var statuses []int
				for _, r := range rows {
					statuses = append(statuses, r.Status)
				}
				batches = append(batches, statuses)
			}})
		defer w.Close(context.Background())

		db.writeSem <- struct{}{} // hold the database's write lock
		w.Enqueue(RequestLog{Status: 1})
		advance(time.Second) // its flush interval: the writer waits for the lock
		for s := 2; s <= 11; s++ {
			if !w.Enqueue(RequestLog{Status: s}) {
				t.Fatalf("Enqueue refused row %d", s)
			}
		}
		<-db.writeSem
		synctest.Wait()
		mu.Lock()
		got := slices.Clone(batches)
		mu.Unlock()
		if want := [][]int{{1}, {2, 3, 4}, {5, 6, 7}, {8, 9, 10}}; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("batches before the flush interval = %v, want %v", got, want)
		}
		advance(time.Second)
		mu.Lock()
		defer mu.Unlock()
		if len(batches) != 5 || !slices.Equal(batches[4], []int{11}) {
			t.Errorf("batches after the flush interval = %v, want the last one [11]", batches)
		}
	})
}

// TestLogWriterConcurrentClose races producers against Close under -race:
// every row is either written or counted as dropped, none is lost.
func TestLogWriterConcurrentClose(t *testing.T) {
	db := openTestDB(t)
	w := NewLogWriter(db, LogWriterOptions{QueueSize: 64, BatchSize: 16})
	var accepted atomic.Int64
	var wg sync.WaitGroup
	const producers, each = 8, 300
	for range producers {
		wg.Go(func() {
			for range each {
				if w.Enqueue(RequestLog{Path: "/v1/messages"}) {
					accepted.Add(1)
				}
			}
		})
	}
	closeErr := make(chan error, 1)
	go func() { closeErr <- w.Close(t.Context()) }()
	wg.Wait()
	if err := <-closeErr; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if got, want := countLogs(t, db), int(accepted.Load()); got != want {
		t.Errorf("rows written = %d, want %d accepted", got, want)
	}
	if got, want := int64(w.Dropped())+accepted.Load(), int64(producers*each); got != want {
		t.Errorf("dropped + accepted = %d, want %d", got, want)
	}
}

func TestLogWriterCloseFlushesQueue(t *testing.T) {
	db := openTestDB(t)
	var written atomic.Int64
	w := NewLogWriter(db, LogWriterOptions{
		FlushInterval: time.Hour, // only Close can flush the partial batch
		OnWrite:       func(rows []RequestLog) { written.Add(int64(len(rows))) },
	})
	const n = 1000
	for i := range n {
		if !w.Enqueue(RequestLog{Status: i}) {
			t.Fatalf("row %d refused", i)
		}
	}
	if err := w.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if rows := countLogs(t, db); rows != n || written.Load() != n {
		t.Errorf("rows %d, OnWrite saw %d, want %d", rows, written.Load(), n)
	}
	if err := w.Close(t.Context()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestLogWriterCloseDeadline(t *testing.T) {
	db := openTestDB(t)
	w := NewLogWriter(db, LogWriterOptions{BatchSize: 1})
	db.writeSem <- struct{}{} // a database that never frees up
	defer func() { <-db.writeSem }()
	for range 3 {
		w.Enqueue(RequestLog{})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := w.Close(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Close = %v, want context.Canceled", err)
	}
	if w.Failed() != 3 {
		t.Errorf("Failed() = %d, want 3 abandoned rows", w.Failed())
	}
}

func TestLogWriterRetention(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		db := openBubbleDB(t, dir)
		defer db.Close()
		addLogs(t, db, make([]RequestLog, 5)...)
		var keep atomic.Int64
		keep.Store(2)
		w := NewLogWriter(db, LogWriterOptions{
			Retention: func() (int, time.Duration) { return int(keep.Load()), 0 },
		})
		defer w.Close(context.Background())

		synctest.Wait()
		if rows := countLogs(t, db); rows != 2 {
			t.Errorf("rows after start = %d, want 2 (pruned at start)", rows)
		}
		for range 3 {
			w.Enqueue(RequestLog{})
		}
		advance(200 * time.Millisecond) // the batch's flush interval: written now
		if rows := countLogs(t, db); rows != 5 {
			t.Errorf("rows after writing 3 = %d, want 5", rows)
		}
		keep.Store(1)
		advance(time.Minute - time.Nanosecond)
		if rows := countLogs(t, db); rows != 5 {
			t.Errorf("rows just before a minute after the write = %d, want 5", rows)
		}
		advance(time.Nanosecond)
		if rows := countLogs(t, db); rows != 1 {
			t.Errorf("rows a minute after the write = %d, want 1", rows)
		}
		// Idle, the writer never wakes: rows it did not write stay until
		// the next batch, a minute after which retention applies again.
		addLogs(t, db, make([]RequestLog, 3)...)
		advance(10 * time.Minute)
		if rows := countLogs(t, db); rows != 4 {
			t.Errorf("rows after 10 idle minutes = %d, want 4: nothing pruned while idle", rows)
		}
		w.Enqueue(RequestLog{})
		advance(200*time.Millisecond + time.Minute)
		if rows := countLogs(t, db); rows != 1 {
			t.Errorf("rows a minute after the next write = %d, want 1", rows)
		}
	})
}

func rowIDs(rows []RequestLog) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

// TestLogWriterCheckpointsWhenIdle: a second after its last batch, and
// only then, the writer checkpoints the WAL; while batches keep coming it
// does not, and an idle writer does not again.
func TestLogWriterCheckpointsWhenIdle(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		db := openBubbleDB(t, dir)
		defer db.Close()
		w := NewLogWriter(db, LogWriterOptions{BatchSize: 2, FlushInterval: time.Hour})
		defer w.Close(context.Background())
		write := func() {
			w.Enqueue(RequestLog{Path: "/v1/messages", Status: 200})
			w.Enqueue(RequestLog{Path: "/v1/messages", Status: 200})
			synctest.Wait()
		}
		for range 5 { // a batch every 900 ms: never a second idle
			write()
			advance(900 * time.Millisecond)
		}
		if n := w.Checkpoints(); n != 0 {
			t.Fatalf("%d checkpoints while batches kept coming, want 0", n)
		}
		advance(100 * time.Millisecond)
		if n := w.Checkpoints(); n != 1 {
			t.Fatalf("%d checkpoints a second after the last batch, want 1", n)
		}
		advance(time.Hour)
		if n := w.Checkpoints(); n != 1 {
			t.Errorf("%d checkpoints after an idle hour, want still 1 (an idle writer does not wake)", n)
		}
		if rows := countLogs(t, db); rows != 10 {
			t.Errorf("%d rows, want 10", rows)
		}
	})
}

// TestCheckpointMovesTheWAL: rows committed stay in the WAL (the
// automatic checkpoint is 4000 pages away) until DB.Checkpoint copies
// them into the database file, which grows by their pages.
func TestCheckpointMovesTheWAL(t *testing.T) {
	db := openBenchDB(t)
	batch := make([]RequestLog, 500)
	for i := range batch {
		batch[i] = RequestLog{Path: "/v1/messages", Status: 500, Error: strings.Repeat("upstream said no ", 20)}
	}
	if err := db.insertLogs(context.Background(), batch, make([][]byte, len(batch)), make([][]byte, len(batch))); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		fi, err := os.Stat(db.path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	if err := db.Checkpoint(context.Background()); err != nil {
		t.Fatalf("Checkpoint: %v", err)
	}
	if after := size(); after <= before {
		t.Errorf("database file %d bytes after Checkpoint, %d before: want it grown by the rows' pages", after, before)
	}
}
