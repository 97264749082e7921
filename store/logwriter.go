package store

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/rs/zerolog"

	"github.com/ccmesh/ccmesh/internal/logcode"
)

// LogWriterOptions configure a LogWriter. The zero value works; each
// field's doc says what zero or nil means.
type LogWriterOptions struct {
	// QueueSize bounds the rows waiting to be written; 0 means 4096. When
	// the queue is full Enqueue drops the row rather than wait.
	QueueSize int
	// BatchSize is the most rows written in one transaction; 0 means 32.
	// A commit cannot yield, so its size bounds how long the writer holds a
	// core: at 256 rows the proxy's p99 at 1000 RPS on one core doubled,
	// at 32 it stayed near the no-log figure (docs/BENCHMARKS.md).
	BatchSize int
	// FlushInterval is how long a row may wait for its batch to fill;
	// 0 means 200ms.
	FlushInterval time.Duration
	// OnWrite, if set, is called from the writer's goroutine after each
	// committed batch with the rows as written, IDs set (to broadcast them
	// without reading them back). The slice is reused after the call
	// returns. It must not block for long: the queue fills meanwhile.
	OnWrite func(rows []RequestLog)
	// OnFail, if set, is called from the writer's goroutine after a batch
	// could not be written (Failed has counted it).
	OnFail func(rows int)
	// Retention, if set, gives the current limits (rows, age; ≤ 0 is off),
	// applied with Prune at start and then PruneInterval after a batch was
	// written (at most once an interval): a writer with nothing to write
	// never wakes up, so an idle ccmesh costs nothing.
	Retention func() (rows int, age time.Duration)
	// PruneInterval is how long after a write Retention is applied; 0
	// means a minute.
	PruneInterval time.Duration
	// Logger reports failed writes and prunes, each with a stable "code"
	// field (LOG-001 …); the zero Logger is silent.
	Logger zerolog.Logger
	// CaptureTotalBytes caps what all captures store together, the oldest
	// dropped first; 0 means DefaultCaptureTotal.
	CaptureTotalBytes int64
	// CaptureTotal, if set, gives the current cap (the capture_total_bytes
	// setting), read for each batch that stores a capture; a result ≤ 0
	// means CaptureTotalBytes.
	CaptureTotal func() int64
	// CaptureQueueBytes bounds the captures waiting in the queue (their
	// Size); a row that would pass it is queued without its capture, which
	// CapturesDropped counts. 0 means 64 MiB.
	CaptureQueueBytes int64
	// CheckpointIdle is how long after its last batch, with none since, the
	// writer checkpoints the WAL (DB.Checkpoint): the copy into the
	// database file, tens of milliseconds that cannot pause, is done while
	// no request is being logged rather than inside a commit under load
	// (db.go, walAutoCheckpoint). 0 means a second; below 0, never.
	CheckpointIdle time.Duration
}

func (o *LogWriterOptions) setDefaults() {
	if o.QueueSize <= 0 {
		o.QueueSize = 4096
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 32
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 200 * time.Millisecond
	}
	if o.PruneInterval <= 0 {
		o.PruneInterval = time.Minute
	}
	if o.CaptureTotalBytes <= 0 {
		o.CaptureTotalBytes = DefaultCaptureTotal
	}
	if o.CaptureQueueBytes <= 0 {
		o.CaptureQueueBytes = defaultCaptureQueue
	}
	if o.CheckpointIdle == 0 {
		o.CheckpointIdle = time.Second
	}
}

// LogWriter writes request logs in batches on its own goroutine, so that
// the request path only ever appends to a queue under a short lock (docs/BEHAVIOUR.md#request-log).
type LogWriter struct {
	db   *DB
	opts LogWriterOptions
	log  zerolog.Logger

	// qmu guards the queue, closed, idle and held. The queue is a slice
	// rather than a buffered channel: a channel of QueueSize rows is
	// allocated whole at start (1.5 MB at 4096 rows) and scanned by every
	// garbage collection, where the slice grows only as far as the rows
	// that ever wait at once, and the writer takes a batch under one lock
	// rather than one receive per row.
	qmu   sync.Mutex
	queue []RequestLog
	// closed is set by Close: no row enters the queue after it, so the
	// writer's last take empties it for good.
	closed bool
	// idle is set by the writer when it waits with no row in hand; the
	// next Enqueue clears it and wakes the writer. held is how many rows
	// the writer has in hand, not yet written: Enqueue wakes it again when
	// those and the queue make a batch, not for every row.
	idle bool
	held int
	wake chan struct{} // capacity 1: a wake-up pending

	stop   chan struct{} // closed by Close: drain and exit
	done   chan struct{} // closed when the goroutine has exited
	ctx    context.Context
	cancel context.CancelFunc // aborts writes when Close's ctx expires

	dropped atomic.Uint64
	failed  atomic.Uint64
	// capQueued is the Size of the captures in the queue; capDropped
	// counts captures left out for the queue's byte budget.
	capQueued  atomic.Int64
	capDropped atomic.Uint64
	zenc       *zstd.Encoder // the writer goroutine's; made at its first capture
	// checkpoints counts the idle checkpoints that succeeded.
	checkpoints atomic.Uint64
}

// NewLogWriter starts a writer over db. Close it before closing db.
func NewLogWriter(db *DB, opts LogWriterOptions) *LogWriter {
	opts.setDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	w := &LogWriter{
		db:     db,
		opts:   opts,
		log:    opts.Logger.With().Str("component", "logwriter").Logger(),
		wake:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		ctx:    ctx,
		cancel: cancel,
	}
	go w.run()
	return w
}

// Enqueue hands a row to the writer without ever blocking. It returns false,
// and counts the row in Dropped, when the queue is full or the writer is
// closed. The writer owns r from here; Routing and History are marshalled
// to JSON on its goroutine, so they must not be changed after the call.
func (w *LogWriter) Enqueue(r RequestLog) bool {
	if r.Capture != nil {
		// Captures are bounded in bytes as rows are in number: past the
		// budget the row goes without its capture, never waiting.
		size := int64(r.Capture.Size())
		if w.capQueued.Add(size) > w.opts.CaptureQueueBytes {
			w.capQueued.Add(-size)
			w.capDropped.Add(1)
			r.Capture = nil
		}
	}
	w.qmu.Lock()
	if !w.closed && len(w.queue) < w.opts.QueueSize {
		w.queue = append(w.queue, r)
		wake := w.idle || len(w.queue)+w.held == w.opts.BatchSize
		w.idle = false
		w.qmu.Unlock()
		if wake {
			select {
			case w.wake <- struct{}{}:
			default: // a wake-up is already waiting
			}
		}
		return true
	}
	w.qmu.Unlock()
	w.dropped.Add(1)
	if r.Capture != nil {
		w.capQueued.Add(-int64(r.Capture.Size()))
	}
	if r.Done != nil {
		r.Done(0)
	}
	return false
}

// CapturesDropped counts captures left out because the queue held too
// many capture bytes already (their rows were queued without them).
func (w *LogWriter) CapturesDropped() uint64 { return w.capDropped.Load() }

// Dropped counts rows Enqueue refused (queue full or writer closed).
func (w *LogWriter) Dropped() uint64 { return w.dropped.Load() }

// Failed counts rows accepted but lost because their batch could not be
// written (the error is logged).
func (w *LogWriter) Failed() uint64 { return w.failed.Load() }

// Close stops accepting rows, writes everything already queued, and stops
// the writer. If ctx ends first the remaining rows are abandoned (counted
// in Failed) and ctx's error is returned. Close may be called more than
// once.
func (w *LogWriter) Close(ctx context.Context) error {
	w.qmu.Lock()
	first := !w.closed
	w.closed = true
	w.qmu.Unlock()
	if first {
		close(w.stop)
	}
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		w.cancel()
		<-w.done
		return fmt.Errorf("close log writer: %w", ctx.Err())
	}
}

func (w *LogWriter) run() {
	defer close(w.done)
	defer w.cancel()
	defer func() {
		if w.zenc != nil {
			w.zenc.Close()
		}
	}()

	// pruneAt fires PruneInterval after the first batch written since the
	// last prune; while nothing is written it is stopped.
	pruneAt := time.NewTimer(w.opts.PruneInterval)
	pruneAt.Stop()
	defer pruneAt.Stop()
	pruneArmed := false
	if w.opts.Retention != nil {
		w.prune()
	}
	flush := time.NewTimer(w.opts.FlushInterval)
	flush.Stop()
	defer flush.Stop()
	// idle fires CheckpointIdle after the last batch written; it is reset
	// by every batch and stopped while nothing was written since the last
	// checkpoint, so an idle writer never wakes.
	idle := time.NewTimer(time.Hour)
	idle.Stop()
	defer idle.Stop()

	batch := make([]RequestLog, 0, w.opts.BatchSize)
	flushArmed := false
	for {
		// Idle, wait for a batch's first row; then for the batch to fill
		// or its time to pass, not row by row.
		if batch = w.take(batch); len(batch) < w.opts.BatchSize {
			var due <-chan time.Time
			if len(batch) > 0 {
				if !flushArmed {
					flush.Reset(w.opts.FlushInterval)
					flushArmed = true
				}
				due = flush.C
			}
			select {
			case <-w.wake:
				continue
			case <-due:
				flushArmed = false
				if batch = w.take(batch); len(batch) == 0 {
					continue
				}
			case <-pruneAt.C:
				pruneArmed = false
				w.prune()
				continue
			case <-idle.C:
				w.checkpoint()
				continue
			case <-w.stop:
				w.drain(batch)
				return
			}
		}
		flush.Stop()
		flushArmed = false
		w.write(batch)
		batch = batch[:0]
		if w.opts.CheckpointIdle > 0 {
			idle.Reset(w.opts.CheckpointIdle)
		}
		if w.opts.Retention != nil && !pruneArmed {
			pruneArmed = true
			pruneAt.Reset(w.opts.PruneInterval)
		}
	}
}

// take moves queued rows into batch, oldest first, up to a batch, without
// waiting. With none in hand after it, the writer is idle: the next
// Enqueue wakes it.
func (w *LogWriter) take(batch []RequestLog) []RequestLog {
	w.qmu.Lock()
	defer w.qmu.Unlock()
	n := min(len(w.queue), w.opts.BatchSize-len(batch))
	batch = append(batch, w.queue[:n]...)
	left := copy(w.queue, w.queue[n:])
	clear(w.queue[left:]) // the rows' pointers go with the batch
	w.queue = w.queue[:left]
	if left == 0 && cap(w.queue) > 4*w.opts.BatchSize {
		w.queue = nil // a burst's queue is not kept for good
	}
	w.held = len(batch)
	w.idle = len(batch) == 0
	return batch
}

// drain writes what is left once Close has shut Enqueue out.
func (w *LogWriter) drain(batch []RequestLog) {
	for {
		if batch = w.take(batch); len(batch) == 0 {
			return
		}
		w.write(batch)
		batch = batch[:0]
	}
}

// captureTotal is the cap the batch's captures are kept within.
func (w *LogWriter) captureTotal(captures []*storedCapture) int64 {
	if captures != nil && w.opts.CaptureTotal != nil {
		if n := w.opts.CaptureTotal(); n > 0 {
			return n
		}
	}
	return w.opts.CaptureTotalBytes
}

func (w *LogWriter) write(batch []RequestLog) {
	routing := make([][]byte, len(batch))
	history := make([][]byte, len(batch))
	var captures []*storedCapture
	yield := newYielder()
	for i := range batch {
		routing[i] = w.encode(batch[i].Routing, "routing")
		history[i] = w.encode(batch[i].History, "history")
		if batch[i].Capture != nil {
			if captures == nil {
				captures = make([]*storedCapture, len(batch))
			}
			captures[i] = w.encodeCapture(batch[i].Capture)
		}
		yield.maybe()
	}
	yield.now() // before BEGIN and the statement's prepare
	err := w.db.insertBatch(w.ctx, batch, routing, history, captures, w.captureTotal(captures), &yield)
	for i := range batch {
		if r := &batch[i]; r.Done != nil {
			id := r.ID
			if err != nil {
				id = 0
			}
			r.Done(id)
		}
	}
	if err != nil {
		// Logged before it is counted: whoever sees the count finds the line.
		w.log.Error().Err(err).Str(logcode.Field, logcode.LogRowsLost).Int("rows", len(batch)).Msg("write request logs: rows lost")
		w.failed.Add(uint64(len(batch)))
		if w.opts.OnFail != nil {
			w.opts.OnFail(len(batch))
		}
		return
	}
	if w.opts.OnWrite != nil {
		w.opts.OnWrite(batch)
	}
}

// encodeCapture makes src's capture and compresses it, on the writer's
// goroutine (docs/BEHAVIOUR.md#capture-and-resend). A capture that cannot
// be encoded is logged and left out; its row is still written.
func (w *LogWriter) encodeCapture(src CaptureSource) *storedCapture {
	defer w.capQueued.Add(-int64(src.Size()))
	c := src.Capture()
	if c == nil {
		return nil
	}
	if w.zenc == nil {
		w.zenc = newEncoder()
	}
	s, err := encodeCapture(w.zenc, c)
	if err != nil {
		w.log.Error().Err(err).Str(logcode.Field, logcode.LogEncode).Str("field", "capture").Msg("encode request log")
		return nil
	}
	return s
}

// jsonAppender is a value that writes its JSON as encoding/json would,
// without its reflection, or declines (ok false) what encoding/json would
// refuse: the proxy's routing and history (proxy/recordjson.go).
type jsonAppender interface {
	AppendJSON(dst []byte) (out []byte, ok bool)
}

// encode marshals a Routing or History value; nil (or JSON null) is stored
// as NULL. A value that cannot be marshalled is logged and stored as NULL
// rather than losing the whole row.
func (w *LogWriter) encode(v any, field string) []byte {
	if v == nil {
		return nil
	}
	if a, ok := v.(jsonAppender); ok {
		if b, ok := a.AppendJSON(nil); ok {
			if string(b) == "null" {
				return nil
			}
			return b
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		w.log.Error().Err(err).Str(logcode.Field, logcode.LogEncode).Str("field", field).Msg("encode request log")
		return nil
	}
	if string(b) == "null" {
		return nil
	}
	return b
}

// Checkpoints is how many idle checkpoints the writer made.
func (w *LogWriter) Checkpoints() uint64 { return w.checkpoints.Load() }

// checkpoint copies the WAL into the database file once the writer has
// been idle for CheckpointIdle.
func (w *LogWriter) checkpoint() {
	if err := w.db.Checkpoint(w.ctx); err != nil {
		w.log.Warn().Err(err).Str(logcode.Field, logcode.LogCheckpoint).Msg("checkpoint the database")
		return
	}
	w.checkpoints.Add(1)
}

func (w *LogWriter) prune() {
	rows, age := w.opts.Retention()
	if rows <= 0 && age <= 0 {
		return
	}
	n, err := w.db.Prune(w.ctx, rows, age)
	if err != nil {
		w.log.Error().Err(err).Str(logcode.Field, logcode.LogPruneFail).Msg("prune request logs")
		return
	}
	if n > 0 {
		w.log.Debug().Int64("deleted", n).Msg("pruned request logs")
	}
}
