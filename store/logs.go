package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Limits of ListLogs (LogFilter.Limit).
const (
	defaultLogLimit = 50
	maxLogLimit     = 500
)

const logColumns = `id, at, protocol, path, model_asked, model_forwarded, explicit,
	endpoint_id, endpoint, status, attempts, duration_ms, ttfb_ms, stream, stream_end,
	tokens_in, tokens_out, sent_upstream, client_gone, error, routing, history, resent_from,
	usage_input, usage_output, usage_cache_read, usage_cache_write, usage_reasoning, usage_estimated,
	cost_usd, model_answered, rule`

// ListLogs returns request logs newest first (by id). nextBefore is the id
// to pass as LogFilter.Before for the next page, or 0 on the last page.
func (db *DB) ListLogs(ctx context.Context, f LogFilter) (items []RequestLog, nextBefore int64, err error) {
	limit := f.Limit
	if limit <= 0 {
		limit = defaultLogLimit
	}
	limit = min(limit, maxLogLimit)

	var where []string
	var args []any
	if f.Before > 0 {
		where, args = append(where, "id < ?"), append(args, f.Before)
	}
	if f.Endpoint != "" {
		where, args = append(where, "endpoint = ?"), append(args, f.Endpoint)
	}
	if f.Status != 0 {
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if f.Model != "" {
		where, args = append(where, "(model_asked = ? OR model_forwarded = ?)"), append(args, f.Model, f.Model)
	}
	query := `SELECT ` + logColumns + ` FROM request_logs`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	// One row more than asked tells whether another page exists.
	query += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limit+1)

	rows, err := db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list request logs: %w", err)
	}
	defer rows.Close()
	items = []RequestLog{} // [] not null in JSON
	for rows.Next() {
		r, err := scanLog(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list request logs: %w", err)
		}
		items = append(items, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list request logs: %w", err)
	}
	if len(items) > limit {
		items = items[:limit]
		nextBefore = items[limit-1].ID
	}
	return items, nextBefore, nil
}

// GetLog returns one request log, or an error wrapping ErrNotFound.
func (db *DB) GetLog(ctx context.Context, id int64) (RequestLog, error) {
	row := db.sql.QueryRowContext(ctx, `SELECT `+logColumns+` FROM request_logs WHERE id = ?`, id)
	r, err := scanLog(row)
	if errors.Is(err, sql.ErrNoRows) {
		err = ErrNotFound
	}
	if err != nil {
		return RequestLog{}, fmt.Errorf("get request log %d: %w", id, err)
	}
	return r, nil
}

func scanLog(s scanner) (RequestLog, error) {
	var (
		r                RequestLog
		at               int64
		routing, history sql.NullString
		resentFrom       sql.NullInt64
		u                [5]sql.NullInt64
		estimated        sql.NullBool
		cost             sql.NullFloat64
	)
	err := s.Scan(&r.ID, &at, &r.Protocol, &r.Path, &r.ModelAsked, &r.ModelForwarded, &r.Explicit,
		&r.EndpointID, &r.Endpoint, &r.Status, &r.Attempts, &r.DurationMs, &r.TTFBMs, &r.Stream,
		&r.StreamEnd, &r.TokensIn, &r.TokensOut, &r.SentUpstream, &r.ClientGone, &r.Error,
		&routing, &history, &resentFrom, &u[0], &u[1], &u[2], &u[3], &u[4], &estimated, &cost, &r.ModelAnswered, &r.Rule)
	if err != nil {
		return RequestLog{}, err
	}
	r.ResentFrom = resentFrom.Int64
	if u[0].Valid { // NULL on a row from before the sums were kept
		r.Usage = &LogUsage{Tokens: Tokens{Input: u[0].Int64, Output: u[1].Int64, CacheRead: u[2].Int64,
			CacheWrite: u[3].Int64, Reasoning: u[4].Int64}, Estimated: estimated.Bool}
	}
	if cost.Valid {
		r.CostUSD = &cost.Float64
	}
	r.At = fromMillis(at)
	// A nil interface, not a nil RawMessage inside one, so that omitempty
	// leaves the field out.
	if routing.Valid {
		r.Routing = json.RawMessage(routing.String)
	}
	if history.Valid {
		r.History = json.RawMessage(history.String)
	}
	return r, nil
}

// Stats counts requests and errors per minute and endpoint since the given
// time, oldest minute first, per attempt (docs/BEHAVIOUR.md#request-log):
// each attempt in a row's history is a request to its endpoint. An attempt
// the loop moved on from failed; the last one is an error when the row is:
// a status ≥ 400, or a stream that did not end "complete" (a stream broken
// after a 200 is not a success). A row of at most one attempt counts once,
// under its own endpoint — the one it tried, or EndpointID 0 when it
// reached none — so only failovers cost reading their history.
func (db *DB) Stats(ctx context.Context, since time.Time) ([]StatPoint, error) {
	rows, err := db.sql.QueryContext(ctx, `WITH logs AS (
			SELECT at, endpoint_id, endpoint, history,
				status >= 400 OR stream_end NOT IN ('', 'complete') AS failed,
				CASE WHEN attempts > 1 THEN coalesce(json_valid(history), 0)
					AND json_type(history) = 'array' AND json_array_length(history) > 0
					ELSE 0 END AS failover
			FROM request_logs WHERE at >= ?
		), counted AS (
			SELECT at, endpoint_id, endpoint, failed FROM logs WHERE NOT failover
			UNION ALL
			SELECT r.at, json_extract(a.value, '$.endpoint_id'), json_extract(a.value, '$.endpoint'),
				CASE WHEN a.key < json_array_length(r.history) - 1 THEN 1 ELSE r.failed END
			FROM logs r, json_each(r.history) a WHERE r.failover
		)
		SELECT at / 60000 AS minute, coalesce(endpoint_id, 0) AS id, coalesce(max(endpoint), ''),
			count(*), sum(failed)
		FROM counted GROUP BY minute, id ORDER BY minute, id`, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("request stats: %w", err)
	}
	defer rows.Close()
	out := []StatPoint{}
	for rows.Next() {
		var (
			p      StatPoint
			minute int64
		)
		if err := rows.Scan(&minute, &p.EndpointID, &p.Endpoint, &p.Requests, &p.Errors); err != nil {
			return nil, fmt.Errorf("request stats: %w", err)
		}
		p.Minute = time.UnixMilli(minute * 60000).UTC()
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("request stats: %w", err)
	}
	return out, nil
}

// pruneChunk is how many rows one DELETE of Prune takes: a statement
// cannot pause, so a prune of tens of thousands of rows in one would hold
// a core for a second (bench/NOTES.md).
var pruneChunk = 128

// Prune applies retention: it keeps the newest maxRows logs and those
// younger than maxAge (a limit ≤ 0 is off) and returns how many it deleted.
// It deletes pruneChunk ids at a time, in one transaction, pausing
// between them where the process has one P (see yielder).
func (db *DB) Prune(ctx context.Context, maxRows int, maxAge time.Duration) (int64, error) {
	var deleted int64
	yield := newYielder()
	err := db.write(ctx, func(tx *sql.Tx) error {
		if err := pruneUsage(ctx, tx, time.Now()); err != nil {
			return err
		}
		// deleteUpTo deletes the rows with ids up to hi that also meet
		// and (" AND <condition>" with its arguments, or ""), pruneChunk
		// ids at a time from the oldest: rowid ranges, each a short walk
		// along the table, one statement prepared for all of them.
		deleteUpTo := func(hi int64, and string, args ...any) error {
			var lo sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT min(id) FROM request_logs`).Scan(&lo); err != nil || !lo.Valid {
				return err
			}
			stmt, err := tx.PrepareContext(ctx, `DELETE FROM request_logs WHERE id >= ? AND id < ? AND id <= ?`+and)
			if err != nil {
				return err
			}
			defer stmt.Close()
			for from := lo.Int64; from <= hi; from += int64(pruneChunk) {
				if from > lo.Int64 {
					yield.now()
				}
				res, err := stmt.ExecContext(ctx, append([]any{from, from + int64(pruneChunk), hi}, args...)...)
				if err != nil {
					return err
				}
				n, err := res.RowsAffected()
				if err != nil {
					return err
				}
				deleted += n
			}
			return nil
		}
		if maxAge > 0 {
			cutoff := time.Now().Add(-maxAge).UnixMilli()
			var hi sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT max(id) FROM request_logs WHERE at < ?`, cutoff).Scan(&hi); err != nil {
				return err
			}
			if hi.Valid {
				if err := deleteUpTo(hi.Int64, " AND at < ?", cutoff); err != nil {
					return err
				}
			}
		}
		if maxRows > 0 {
			// ids grow with time, so "all but the newest maxRows" is every id
			// at or below the (maxRows+1)-th newest.
			var cut int64
			err := tx.QueryRowContext(ctx, `SELECT id FROM request_logs ORDER BY id DESC LIMIT 1 OFFSET ?`, maxRows).Scan(&cut)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			return deleteUpTo(cut, "")
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("prune request logs: %w", err)
	}
	return deleted, nil
}

// insertLogSQL inserts n request log rows.
func insertLogSQL(n int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", logColumnsN), ", ") + ")"
	return `INSERT INTO request_logs (at, protocol, path,
	model_asked, model_forwarded, explicit, endpoint_id, endpoint, status, attempts,
	duration_ms, ttfb_ms, stream, stream_end, tokens_in, tokens_out, sent_upstream,
	client_gone, error, routing, history, resent_from, usage_input, usage_output,
	usage_cache_read, usage_cache_write, usage_reasoning, usage_estimated, cost_usd, model_answered, rule)
	VALUES ` + strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

const (
	logColumnsN = 31 // the columns insertLogSQL names
	// logInsertRows is how many rows the batch's multi-row INSERT takes
	// (bench/NOTES.md).
	logInsertRows = 8
)

// insertLogs writes a batch in one transaction and sets each row's ID.
// routing and history hold the pre-encoded JSON (nil for NULL), by index.
func (db *DB) insertLogs(ctx context.Context, batch []RequestLog, routing, history [][]byte) error {
	return db.insertBatch(ctx, batch, routing, history, nil, DefaultCaptureTotal, nil)
}

// insertBatch is insertLogs with the rows' encoded captures (nil for none),
// by index, kept within captureTotal bytes in all.
func (db *DB) insertBatch(ctx context.Context, batch []RequestLog, routing, history [][]byte,
	captures []*storedCapture, captureTotal int64, yield *yielder) error {
	return db.writeUncancelled(ctx, func(tx *sql.Tx) error {
		// The statements run under a context that cannot be cancelled
		// (writeUncancelled): ctx is checked between rows instead, and
		// ending it still rolls the transaction back.
		ctx, abort := context.WithoutCancel(ctx), ctx
		one := tx.StmtContext(ctx, db.logInsert)
		defer one.Close()
		many := tx.StmtContext(ctx, db.logInsertMany)
		defer many.Close()
		var usage usageSums
		var capStmt *sql.Stmt // prepared at the batch's first capture
		args := make([]any, 0, logInsertRows*logColumnsN)
		for i := 0; i < len(batch); {
			if err := abort.Err(); err != nil {
				return err
			}
			// logInsertRows rows in one statement where the batch has them:
			// the per-statement cost is paid once for them all.
			n, stmt := logInsertRows, many
			if len(batch)-i < logInsertRows {
				n, stmt = 1, one
			}
			args = args[:0]
			for j := i; j < i+n; j++ {
				r := &batch[j]
				if r.At.IsZero() {
					r.At = time.Now()
				}
				args = append(args, r.At.UnixMilli(), r.Protocol, r.Path, r.ModelAsked,
					r.ModelForwarded, r.Explicit, r.EndpointID, r.Endpoint, r.Status, r.Attempts,
					r.DurationMs, r.TTFBMs, r.Stream, r.StreamEnd, r.TokensIn, r.TokensOut,
					r.SentUpstream, r.ClientGone, r.Error, nullJSON(routing[j]), nullJSON(history[j]),
					sql.NullInt64{Int64: r.ResentFrom, Valid: r.ResentFrom > 0})
				args = appendSums(args, r)
				args = append(args, r.ModelAnswered, r.Rule)
			}
			res, err := stmt.ExecContext(ctx, args...)
			if err != nil {
				return err
			}
			last, err := res.LastInsertId()
			if err != nil {
				return err
			}
			// One statement's rows get consecutive ids: a new rowid is the
			// largest plus one, and the transaction is the only writer.
			for j := i; j < i+n; j++ {
				r := &batch[j]
				r.ID = last - int64(i+n-1-j)
				if j < len(captures) && captures[j] != nil {
					if capStmt == nil {
						if capStmt, err = tx.PrepareContext(ctx, insertCaptureSQL); err != nil {
							return err
						}
						defer capStmt.Close()
					}
					if err := insertCapture(ctx, capStmt, r.ID, captures[j]); err != nil {
						return err
					}
				}
				for k := range r.Deltas {
					usage.add(r.At, &r.Deltas[k])
					usage.addRule(r.At, r.Rule, &r.Deltas[k])
				}
			}
			i += n
			yield.maybe()
		}
		if err := usage.write(ctx, tx, db.upsert); err != nil {
			return err
		}
		if capStmt != nil {
			if err := trimCaptures(ctx, tx, captureTotal); err != nil {
				return err
			}
		}
		yield.now() // before the commit
		return nil
	})
}

// appendSums appends the values of r's usage and cost columns: NULL for
// what r does not have.
func appendSums(args []any, r *RequestLog) []any {
	if u := r.Usage; u != nil {
		args = append(args, u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Reasoning, u.Estimated)
	} else {
		args = append(args, nil, nil, nil, nil, nil, nil)
	}
	if r.CostUSD != nil {
		return append(args, *r.CostUSD)
	}
	return append(args, nil)
}

func nullJSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// HourCount is a count for one endpoint in one hour (unix hours).
type HourCount struct {
	EndpointID int64
	Hour       int64
	N          int64
}

// OtherModelCounts counts, per endpoint and hour, the rows logged in
// [from, to) whose answer named another model than the one forwarded
// (docs/BEHAVIOUR.md#the-answers-model).
func (db *DB) OtherModelCounts(ctx context.Context, from, to time.Time) ([]HourCount, error) {
	return queryAll(ctx, db.sql, "count answers from another model", func(r *sql.Rows) (c HourCount, err error) {
		err = r.Scan(&c.EndpointID, &c.Hour, &c.N)
		return c, err
	}, `SELECT endpoint_id, at / 3600000, count(*) FROM request_logs
		WHERE at >= ? AND at < ? AND model_answered != '' GROUP BY endpoint_id, at / 3600000`,
		from.UnixMilli(), to.UnixMilli())
}
