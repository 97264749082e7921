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
// the request path only ever does a non-blocking channel send (docs/BEHAVIOUR.md#request-log).
type LogWriter struct {
	db   *DB
	opts LogWriterOptions
	log  zerolog.Logger

	queue chan RequestLog
	// full wakes the writer when a batch's worth of rows is pending
	// (queued, or taken and not yet written): the writer does not wake for
	// every row, only for the first of a batch and then for the batch.
	full    chan struct{}
	pending atomic.Int64
	// mu orders Enqueue's send before Close's final drain: Enqueue sends
	// under the read lock, Close sets closed under the write lock, so no
	// row can enter the queue after the writer has emptied it for the last
	// time. Holders of the read lock never block, so neither does Enqueue.
	mu     sync.RWMutex
	closed bool

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
		queue:  make(chan RequestLog, opts.QueueSize),
		full:   make(chan struct{}, 1),
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
	w.mu.RLock()
	defer w.mu.RUnlock()
	if !w.closed {
		select {
		case w.queue <- r:
			if w.pending.Add(1) >= int64(w.opts.BatchSize) {
				select {
				case w.full <- struct{}{}:
				default: // a wake-up is already waiting
				}
			}
			return true
		default:
		}
	}
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
	w.mu.Lock()
	first := !w.closed
	w.closed = true
	w.mu.Unlock()
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
	for {
		// Idle, wait for a batch's first row; then for the batch to fill
		// or its time to pass, not row by row.
		var first <-chan RequestLog
		var full <-chan struct{}
		var due <-chan time.Time
		if len(batch) == 0 {
			first = w.queue
		} else if batch = w.take(batch); len(batch) < w.opts.BatchSize {
			full, due = w.full, flush.C
		}
		if len(batch) < w.opts.BatchSize {
			select {
			case r := <-first:
				batch = append(batch, r)
				flush.Reset(w.opts.FlushInterval)
				continue
			case <-full:
				continue
			case <-due:
				batch = w.take(batch)
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
		w.write(batch)
		w.pending.Add(-int64(len(batch)))
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

// take adds to batch what is queued, without waiting, up to a batch.
func (w *LogWriter) take(batch []RequestLog) []RequestLog {
	for len(batch) < w.opts.BatchSize {
		select {
		case r := <-w.queue:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// drain writes what is left once Close has shut Enqueue out.
func (w *LogWriter) drain(batch []RequestLog) {
	for {
		select {
		case r := <-w.queue:
			batch = append(batch, r)
			if len(batch) == w.opts.BatchSize {
				w.write(batch)
				batch = batch[:0]
			}
		default:
			if len(batch) > 0 {
				w.write(batch)
			}
			return
		}
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

// encode marshals a Routing or History value; nil (or JSON null) is stored
// as NULL. A value that cannot be marshalled is logged and stored as NULL
// rather than losing the whole row.
func (w *LogWriter) encode(v any, field string) []byte {
	if v == nil {
		return nil
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
