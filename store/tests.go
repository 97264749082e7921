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

// EndpointTest is the last Test result of an endpoint
// (docs/BEHAVIOUR.md#health). Its message was masked before it came here.
type EndpointTest struct {
	EndpointID int64
	At         time.Time
	OK         bool
	Status     int
	LatencyMs  int64
	Message    string
}

// SaveEndpointTest stores t as its endpoint's last test, replacing the one
// before. An endpoint that no longer exists gives an error wrapping
// ErrNotFound (it may be deleted while its test runs).
func (db *DB) SaveEndpointTest(ctx context.Context, t EndpointTest) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO endpoint_tests (endpoint_id, at, ok, status, latency_ms, message)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (endpoint_id) DO UPDATE SET at = excluded.at, ok = excluded.ok,
				status = excluded.status, latency_ms = excluded.latency_ms, message = excluded.message`,
			t.EndpointID, toMillis(t.At), t.OK, t.Status, t.LatencyMs, t.Message)
		var se *sqlite.Error
		if errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY {
			return ErrNotFound
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("save test result of endpoint %d: %w", t.EndpointID, err)
	}
	return nil
}

// LoadEndpointTests returns every stored last test, by endpoint id.
func (db *DB) LoadEndpointTests(ctx context.Context) ([]EndpointTest, error) {
	return queryAll(ctx, db.sql, "load test results", func(rows *sql.Rows) (EndpointTest, error) {
		var (
			t  EndpointTest
			at int64
		)
		err := rows.Scan(&t.EndpointID, &at, &t.OK, &t.Status, &t.LatencyMs, &t.Message)
		t.At = fromMillis(at)
		return t, err
	}, `SELECT endpoint_id, at, ok, status, latency_ms, message
		FROM endpoint_tests ORDER BY endpoint_id`)
}
