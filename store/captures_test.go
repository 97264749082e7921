package store

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// docs/BEHAVIOUR.md#capture-and-resend, the store's side.

// source is a CaptureSource with a fixed capture.
type source struct {
	c     *Capture
	size  int
	calls int
}

func (s *source) Size() int { return s.size }
func (s *source) Capture() *Capture {
	s.calls++
	return s.c
}

func sampleCapture(body string) *Capture {
	return &Capture{
		Method: "POST", Query: "beta=true",
		RequestHeader:  http.Header{"Anthropic-Version": {"2023-06-01"}},
		RequestBody:    []byte(body),
		Status:         200,
		ResponseHeader: http.Header{"Content-Type": {"text/event-stream"}},
		ResponseBody:   []byte("event: message_stop\ndata: {}\n\n"),
	}
}

// TestCaptureWritten: the writer stores a row's capture with it, bodies
// compressed, and reads it back as it was; Done hears the row's id;
// resent_from round-trips.
func TestCaptureWritten(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		db := openBubbleDB(t, dir)
		defer db.Close()
		w := NewLogWriter(db, LogWriterOptions{})
		body := strings.Repeat(`{"role":"user","content":"hello"}`, 200)
		src := &source{c: sampleCapture(body), size: 100}
		done := make(chan int64, 1)
		w.Enqueue(RequestLog{Path: "/v1/messages", Status: 200, ResentFrom: 3, Capture: src, Done: func(id int64) { done <- id }})
		w.Enqueue(RequestLog{Path: "/v1/messages", Status: 200}) // none
		advance(time.Second)
		if err := w.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		id := <-done
		if id == 0 || src.calls != 1 {
			t.Fatalf("Done(%d), Capture called %d times", id, src.calls)
		}
		got, err := db.GetCapture(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		want := *src.c
		want.LogID = id
		if !reflect.DeepEqual(got, want) {
			t.Errorf("read back\n %+v\nwant\n %+v", got, want)
		}
		var raw []byte
		if err := db.sql.QueryRowContext(t.Context(), `SELECT request_body FROM captures WHERE log_id = ?`, id).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(raw, []byte{0x28, 0xb5, 0x2f, 0xfd}) || len(raw) >= len(body)/4 {
			t.Errorf("stored body is not zstd-compressed: %d bytes for %d", len(raw), len(body))
		}
		row, err := db.GetLog(t.Context(), id)
		if err != nil || row.ResentFrom != 3 {
			t.Errorf("resent_from %d, %v", row.ResentFrom, err)
		}
		if other, _ := db.GetLog(t.Context(), id+1); other.ResentFrom != 0 {
			t.Errorf("a client's row has resent_from %d", other.ResentFrom)
		}
		if _, err := db.GetCapture(t.Context(), id+1); err == nil || !strings.Contains(err.Error(), ErrNotFound.Error()) {
			t.Errorf("row without a capture: %v", err)
		}
	})
}

// captureSizes lists the stored captures' ids and the total.
func captureState(t *testing.T, db *DB) (ids []int64, total int64) {
	t.Helper()
	rows, err := db.sql.QueryContext(t.Context(), `SELECT log_id, size FROM captures ORDER BY log_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var sum int64
	for rows.Next() {
		var id, size int64
		if err := rows.Scan(&id, &size); err != nil {
			t.Fatal(err)
		}
		ids, sum = append(ids, id), sum+size
	}
	if total, err = db.CaptureBytes(t.Context()); err != nil {
		t.Fatal(err)
	}
	if total != sum {
		t.Errorf("capture_bytes says %d, the captures hold %d", total, sum)
	}
	return ids, total
}

// insertCaptured writes n rows, each with a capture of the same size,
// under the total cap.
func insertCaptured(t *testing.T, db *DB, n int, total int64) []int64 {
	t.Helper()
	batch := make([]RequestLog, n)
	caps := make([]*storedCapture, n)
	enc := newEncoder()
	defer enc.Close()
	for i := range batch {
		s, err := encodeCapture(enc, sampleCapture(strings.Repeat("abc", 100)))
		if err != nil {
			t.Fatal(err)
		}
		batch[i], caps[i] = RequestLog{Path: "/v1/messages", Status: 500}, s
	}
	if err := db.insertBatch(t.Context(), batch, make([][]byte, n), make([][]byte, n), caps, total, nil); err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, n)
	for i := range batch {
		ids[i] = batch[i].ID
	}
	return ids
}

// TestCaptureTotalCap: past the total cap the oldest captures go first;
// their rows stay.
func TestCaptureTotalCap(t *testing.T) {
	db := openTestDB(t)
	ids := insertCaptured(t, db, 3, DefaultCaptureTotal)
	kept, total := captureState(t, db)
	if len(kept) != 3 {
		t.Fatalf("kept %v", kept)
	}
	// Room for three: the next batch of two pushes out the oldest two.
	more := insertCaptured(t, db, 2, total)
	kept, total2 := captureState(t, db)
	if want := []int64{ids[2], more[0], more[1]}; !reflect.DeepEqual(kept, want) {
		t.Errorf("kept %v, want %v (oldest dropped)", kept, want)
	}
	if total2 > total {
		t.Errorf("total %d over the cap %d", total2, total)
	}
	if n := countLogs(t, db); n != 5 {
		t.Errorf("%d rows, want all 5: only captures are dropped", n)
	}
}

// TestCapturePrunedWithRow: retention deletes a row's capture with it, and
// the total follows.
func TestCapturePrunedWithRow(t *testing.T) {
	db := openTestDB(t)
	ids := insertCaptured(t, db, 4, DefaultCaptureTotal)
	if _, err := db.Prune(t.Context(), 1, 0); err != nil {
		t.Fatal(err)
	}
	if kept, _ := captureState(t, db); !reflect.DeepEqual(kept, ids[3:]) {
		t.Errorf("kept %v, want %v", kept, ids[3:])
	}
}

// TestCaptureQueueBudget: captures past the queue's byte budget are left
// out and counted, never waited for; their rows are written.
func TestCaptureQueueBudget(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		db := openBubbleDB(t, dir)
		defer db.Close()
		w := NewLogWriter(db, LogWriterOptions{CaptureQueueBytes: 1000})
		srcs := []*source{
			{c: sampleCapture("a"), size: 600},
			{c: sampleCapture("b"), size: 600}, // 1200 queued: over
			{c: sampleCapture("c"), size: 400}, // 1000: fits
		}
		for _, s := range srcs {
			w.Enqueue(RequestLog{Path: "/v1/messages", Capture: s})
		}
		if got := w.CapturesDropped(); got != 1 {
			t.Errorf("CapturesDropped %d, want 1", got)
		}
		advance(time.Second)
		if got := w.capQueued.Load(); got != 0 {
			t.Errorf("%d capture bytes still counted as queued", got)
		}
		w.Enqueue(RequestLog{Path: "/v1/messages", Capture: &source{c: sampleCapture("d"), size: 1000}})
		if err := w.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := countLogs(t, db); n != 4 {
			t.Errorf("%d rows, want 4", n)
		}
		if kept, _ := captureState(t, db); len(kept) != 3 || srcs[1].calls != 0 {
			t.Errorf("captures %v; the dropped one made %d times", kept, srcs[1].calls)
		}
	})
}

// TestInsertBatchIDs: a batch long enough for the multi-row INSERT (two
// statements of logInsertRows, then single rows) gives every row its own
// id, and each capture goes with its own row.
func TestInsertBatchIDs(t *testing.T) {
	db := openTestDB(t)
	addLogs(t, db, RequestLog{Path: "/before"}) // ids do not start at 1
	n := 2*logInsertRows + 3
	batch := make([]RequestLog, n)
	caps := make([]*storedCapture, n)
	enc := newEncoder()
	defer enc.Close()
	for i := range batch {
		batch[i] = RequestLog{Path: fmt.Sprintf("/row/%d", i), Status: 200}
		if i%3 == 0 {
			s, err := encodeCapture(enc, sampleCapture(fmt.Sprintf("body %d", i)))
			if err != nil {
				t.Fatal(err)
			}
			caps[i] = s
		}
	}
	if err := db.insertBatch(t.Context(), batch, make([][]byte, n), make([][]byte, n), caps, DefaultCaptureTotal, nil); err != nil {
		t.Fatal(err)
	}
	for i, r := range batch {
		got, err := db.GetLog(t.Context(), r.ID)
		if err != nil || got.Path != r.Path {
			t.Fatalf("row %d: id %d reads back %q (%v), want %q", i, r.ID, got.Path, err, r.Path)
		}
		c, err := db.GetCapture(t.Context(), r.ID)
		switch {
		case i%3 != 0 && err == nil:
			t.Errorf("row %d has a capture it was not given", i)
		case i%3 == 0 && (err != nil || string(c.RequestBody) != fmt.Sprintf("body %d", i)):
			t.Errorf("row %d: capture %q (%v), want body %d", i, c.RequestBody, err, i)
		}
	}
}

// TestCaptureTotalFromSetting: the writer keeps captures within the cap
// CaptureTotal gives when it writes, so a changed setting holds from the
// next capture stored.
func TestCaptureTotalFromSetting(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		db := openBubbleDB(t, dir)
		defer db.Close()
		var total atomic.Int64 // 0 at first: CaptureTotalBytes, the default
		w := NewLogWriter(db, LogWriterOptions{CaptureTotal: total.Load})
		for range 3 {
			w.Enqueue(RequestLog{Path: "/v1/messages", Capture: &source{c: sampleCapture(strings.Repeat("abc", 100)), size: 100}})
			advance(time.Second)
		}
		kept, stored := captureState(t, db)
		if len(kept) != 3 {
			t.Fatalf("kept %v under the default cap, want 3", kept)
		}
		total.Store(stored / 3) // room for one
		w.Enqueue(RequestLog{Path: "/v1/messages", Capture: &source{c: sampleCapture(strings.Repeat("abc", 100)), size: 100}})
		if err := w.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if kept, got := captureState(t, db); len(kept) != 1 || got > stored/3 {
			t.Errorf("kept %v (%d bytes) under a cap of %d, want only the newest", kept, got, stored/3)
		}
	})
}
