package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/klauspost/compress/zstd"
)

// Captures (docs/BEHAVIOUR.md#capture-and-resend): a request log row may
// keep what its client sent and got. The writer stores it with the row, in
// the same transaction, bodies compressed; retention deletes it with its
// row (ON DELETE CASCADE); a total cap drops the oldest.

// DefaultCaptureTotal caps the bytes all captures store together.
const DefaultCaptureTotal = 256 << 20

// defaultCaptureQueue bounds the capture bytes waiting in the writer's
// queue (LogWriterOptions.CaptureQueueBytes).
const defaultCaptureQueue = 64 << 20

// Capture is one request log row's capture: plain bytes and headers, their
// secrets already removed by whoever made it.
type Capture struct {
	LogID             int64
	Method            string
	Query             string
	RequestHeader     http.Header
	RequestBody       []byte
	RequestTruncated  bool
	Status            int
	ResponseHeader    http.Header
	ResponseBody      []byte
	ResponseTruncated bool
}

// CaptureSource gives a row's capture to the log writer, which calls
// Capture once on its own goroutine, so that the work of making it (the
// app removes secrets there) stays off the request path.
type CaptureSource interface {
	// Size is the memory the capture holds while it waits in the queue.
	Size() int
	// Capture is the capture to store; nil stores none.
	Capture() *Capture
}

// storedCapture is a Capture encoded for its row: headers as JSON, bodies
// zstd-compressed.
type storedCapture struct {
	c                 *Capture
	reqHdr, respHdr   []byte
	reqBody, respBody []byte
	size              int64
}

// newEncoder makes the writer's zstd encoder (one per writer: encoders
// keep state of their own).
func newEncoder() *zstd.Encoder {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err) // only bad options fail
	}
	return e
}

// encodeCapture compresses c's bodies with enc and encodes its headers.
func encodeCapture(enc *zstd.Encoder, c *Capture) (*storedCapture, error) {
	s := &storedCapture{c: c}
	var err error
	if s.reqHdr, err = json.Marshal(headerOrEmpty(c.RequestHeader)); err != nil {
		return nil, err
	}
	if s.respHdr, err = json.Marshal(headerOrEmpty(c.ResponseHeader)); err != nil {
		return nil, err
	}
	if len(c.RequestBody) > 0 {
		s.reqBody = enc.EncodeAll(c.RequestBody, nil)
	}
	if len(c.ResponseBody) > 0 {
		s.respBody = enc.EncodeAll(c.ResponseBody, nil)
	}
	s.size = int64(len(s.reqHdr) + len(s.respHdr) + len(s.reqBody) + len(s.respBody) + len(c.Method) + len(c.Query))
	return s, nil
}

func headerOrEmpty(h http.Header) http.Header {
	if h == nil {
		return http.Header{}
	}
	return h
}

// insertCapture stores s as log row id's capture.
func insertCapture(ctx context.Context, stmt *sql.Stmt, id int64, s *storedCapture) error {
	c := s.c
	_, err := stmt.ExecContext(ctx, id, c.Method, c.Query, string(s.reqHdr), s.reqBody, c.RequestTruncated,
		c.Status, string(s.respHdr), s.respBody, c.ResponseTruncated, s.size)
	return err
}

const insertCaptureSQL = `INSERT INTO captures (log_id, method, query, request_headers, request_body,
	request_truncated, status, response_headers, response_body, response_truncated, size)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// trimCaptures drops the oldest captures until they store at most total
// bytes together.
func trimCaptures(ctx context.Context, tx *sql.Tx, total int64) error {
	var stored int64
	if err := tx.QueryRowContext(ctx, `SELECT total FROM capture_bytes WHERE id = 1`).Scan(&stored); err != nil {
		return fmt.Errorf("read capture total: %w", err)
	}
	if stored <= total {
		return nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT log_id, size FROM captures ORDER BY log_id`)
	if err != nil {
		return err
	}
	excess, upTo := stored-total, int64(0)
	for excess > 0 && rows.Next() {
		var size int64
		if err := rows.Scan(&upTo, &size); err != nil {
			rows.Close()
			return err
		}
		excess -= size
	}
	if err := rows.Close(); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM captures WHERE log_id <= ?`, upTo)
	return err
}

// GetCapture returns log row id's capture, or an error wrapping
// ErrNotFound when it has none.
func (db *DB) GetCapture(ctx context.Context, id int64) (Capture, error) {
	var (
		c                 Capture
		reqHdr, respHdr   string
		reqBody, respBody []byte
	)
	err := db.sql.QueryRowContext(ctx, `SELECT method, query, request_headers, request_body, request_truncated,
		status, response_headers, response_body, response_truncated FROM captures WHERE log_id = ?`, id).
		Scan(&c.Method, &c.Query, &reqHdr, &reqBody, &c.RequestTruncated, &c.Status, &respHdr, &respBody, &c.ResponseTruncated)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return Capture{}, fmt.Errorf("get capture of request log %d: %w", id, err)
	}
	c.LogID = id
	if err := json.Unmarshal([]byte(reqHdr), &c.RequestHeader); err != nil {
		return Capture{}, fmt.Errorf("get capture of request log %d: request headers: %w", id, err)
	}
	if err := json.Unmarshal([]byte(respHdr), &c.ResponseHeader); err != nil {
		return Capture{}, fmt.Errorf("get capture of request log %d: response headers: %w", id, err)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
	if err != nil {
		return Capture{}, err
	}
	defer dec.Close()
	if c.RequestBody, err = decompress(dec, reqBody); err != nil {
		return Capture{}, fmt.Errorf("get capture of request log %d: request body: %w", id, err)
	}
	if c.ResponseBody, err = decompress(dec, respBody); err != nil {
		return Capture{}, fmt.Errorf("get capture of request log %d: response body: %w", id, err)
	}
	return c, nil
}

func decompress(dec *zstd.Decoder, b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, nil
	}
	return dec.DecodeAll(b, nil)
}

// CaptureBytes is the bytes all captures store together.
func (db *DB) CaptureBytes(ctx context.Context) (int64, error) {
	var n int64
	if err := db.sql.QueryRowContext(ctx, `SELECT total FROM capture_bytes WHERE id = 1`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read capture total: %w", err)
	}
	return n, nil
}
