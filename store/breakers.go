package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// upsertBreakerState is the statement that stores a breaker state,
// replacing the last one of its endpoint.
const upsertBreakerState = `INSERT INTO breaker_state (endpoint_id, state, reason,
	opened_at, until, consecutive_failures, half_open_successes, reopens, balance, updated_at)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (endpoint_id) DO UPDATE SET state = excluded.state,
		reason = excluded.reason, opened_at = excluded.opened_at, until = excluded.until,
		consecutive_failures = excluded.consecutive_failures,
		half_open_successes = excluded.half_open_successes,
		reopens = excluded.reopens, balance = excluded.balance, updated_at = excluded.updated_at`

func breakerStateArgs(s BreakerState, now time.Time) []any {
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = now
	}
	return []any{s.EndpointID, s.State, s.Reason, toMillis(s.OpenedAt), toMillis(s.Until),
		s.ConsecutiveFailures, s.HalfOpenSuccesses, s.Reopens, s.Balance, toMillis(s.UpdatedAt)}
}

const insertBreakerEvent = `INSERT INTO breaker_events (at, endpoint_id, endpoint,
	cause, from_state, to_state, reason) VALUES (?, ?, ?, ?, ?, ?, ?)`

func breakerEventArgs(e BreakerEvent, now time.Time) []any {
	if e.At.IsZero() {
		e.At = now
	}
	return []any{toMillis(e.At), e.EndpointID, e.Endpoint, e.Cause, e.From, e.To, e.Reason}
}

func isForeignKeyError(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// SaveBreakerState stores an endpoint's breaker state, replacing the last
// one. An endpoint that no longer exists gives an error wrapping
// ErrNotFound (its breaker may report after a concurrent delete). A zero
// UpdatedAt is set to now.
func (db *DB) SaveBreakerState(ctx context.Context, s BreakerState) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, upsertBreakerState, breakerStateArgs(s, time.Now())...)
		if isForeignKeyError(err) {
			return ErrNotFound
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("save breaker state of endpoint %d: %w", s.EndpointID, err)
	}
	return nil
}

// SaveBreakerTransitions stores breaker states and appends audit entries
// in one transaction: all of them are written or none is, so a caller that
// tries again after an error never writes an entry twice
// (docs/BEHAVIOUR.md#breaker-persistence). The state of an endpoint that no
// longer exists is skipped (deleting it removed its state); its entries
// are kept, as the trail outlives endpoints. Zero times are set to now.
func (db *DB) SaveBreakerTransitions(ctx context.Context, states []BreakerState, events []BreakerEvent) error {
	now := time.Now()
	err := db.write(ctx, func(tx *sql.Tx) error {
		for _, s := range states {
			_, err := tx.ExecContext(ctx, upsertBreakerState, breakerStateArgs(s, now)...)
			if err != nil && !isForeignKeyError(err) {
				return fmt.Errorf("save breaker state of endpoint %d: %w", s.EndpointID, err)
			}
		}
		for _, e := range events {
			if _, err := tx.ExecContext(ctx, insertBreakerEvent, breakerEventArgs(e, now)...); err != nil {
				return fmt.Errorf("add breaker event for endpoint %d: %w", e.EndpointID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("save breaker transitions: %w", err)
	}
	return nil
}

// LoadBreakerStates returns every stored breaker state, by endpoint id.
func (db *DB) LoadBreakerStates(ctx context.Context) ([]BreakerState, error) {
	return queryAll(ctx, db.sql, "load breaker states", func(rows *sql.Rows) (BreakerState, error) {
		var (
			s                        BreakerState
			openedAt, until, updated int64
		)
		err := rows.Scan(&s.EndpointID, &s.State, &s.Reason, &openedAt, &until,
			&s.ConsecutiveFailures, &s.HalfOpenSuccesses, &s.Reopens, &s.Balance, &updated)
		s.OpenedAt, s.Until, s.UpdatedAt = fromMillis(openedAt), fromMillis(until), fromMillis(updated)
		return s, err
	}, `SELECT endpoint_id, state, reason, opened_at, until,
		consecutive_failures, half_open_successes, reopens, balance, updated_at
		FROM breaker_state ORDER BY endpoint_id`)
}

// AddBreakerEvent appends to the audit trail and returns the event's id.
// A zero At is set to now.
func (db *DB) AddBreakerEvent(ctx context.Context, e BreakerEvent) (int64, error) {
	var id int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, insertBreakerEvent, breakerEventArgs(e, time.Now())...)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("add breaker event for endpoint %d: %w", e.EndpointID, err)
	}
	return id, nil
}

// Limits of ListBreakerEvents.
const (
	defaultEventLimit = 100
	maxEventLimit     = 1000
)

// ListBreakerEvents returns the newest events first, of one endpoint or,
// with endpointID 0, of all. limit ≤ 0 means 100; it is capped at 1000.
func (db *DB) ListBreakerEvents(ctx context.Context, endpointID int64, limit int) ([]BreakerEvent, error) {
	if limit <= 0 {
		limit = defaultEventLimit
	}
	limit = min(limit, maxEventLimit)
	query := `SELECT id, at, endpoint_id, endpoint, cause, from_state, to_state, reason
		FROM breaker_events`
	args := []any{}
	if endpointID != 0 {
		query += ` WHERE endpoint_id = ?`
		args = append(args, endpointID)
	}
	return queryAll(ctx, db.sql, "list breaker events", func(rows *sql.Rows) (BreakerEvent, error) {
		var (
			e  BreakerEvent
			at int64
		)
		err := rows.Scan(&e.ID, &at, &e.EndpointID, &e.Endpoint, &e.Cause, &e.From, &e.To, &e.Reason)
		e.At = fromMillis(at)
		return e, err
	}, query+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
}
