package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// SaveBalanceReading stores an endpoint's last balance reading, a JSON
// document the store keeps without reading (docs/BEHAVIOUR.md#balance),
// replacing the one before. An endpoint that no longer exists gives an
// error wrapping ErrNotFound.
func (db *DB) SaveBalanceReading(ctx context.Context, endpointID int64, at time.Time, reading json.RawMessage) error {
	if !json.Valid(reading) {
		return fmt.Errorf("save balance reading of endpoint %d: not valid JSON", endpointID)
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO balance_readings (endpoint_id, at, reading) VALUES (?, ?, ?)
			ON CONFLICT (endpoint_id) DO UPDATE SET at = excluded.at, reading = excluded.reading`,
			endpointID, toMillis(at), string(reading))
		if isForeignKeyError(err) {
			return ErrNotFound
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("save balance reading of endpoint %d: %w", endpointID, err)
	}
	return nil
}

// BalanceReading is an endpoint's stored last reading.
type BalanceReading struct {
	EndpointID int64
	At         time.Time
	Reading    json.RawMessage
}

// LoadBalanceReadings returns every endpoint's last reading, by endpoint id.
func (db *DB) LoadBalanceReadings(ctx context.Context) ([]BalanceReading, error) {
	return queryAll(ctx, db.sql, "load balance readings", func(rows *sql.Rows) (BalanceReading, error) {
		var (
			r   BalanceReading
			at  int64
			doc string
		)
		err := rows.Scan(&r.EndpointID, &at, &doc)
		r.At, r.Reading = fromMillis(at), json.RawMessage(doc)
		return r, err
	}, `SELECT endpoint_id, at, reading FROM balance_readings ORDER BY endpoint_id`)
}
