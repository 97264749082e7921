package store

import (
	"context"
	"database/sql"
	"time"
)

// Key buckets (docs/BEHAVIOUR.md#statistics, group=key): the attempts sent
// with a pool key, summed per bucket and key, kept as long as the endpoint
// buckets.
const (
	keyMinuteTable = "usage_key_minutes"
	keyHourTable   = "usage_key_hours"
)

var keyUsageUpsert = `INSERT INTO %s (start, key_id, endpoint_id, endpoint, key, requests, succeeded, attempts, errors,
		input, output, cache_read, cache_write, reasoning, cost_usd, unpriced, hedges)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (start, key_id) DO UPDATE SET
		endpoint_id = excluded.endpoint_id, endpoint = excluded.endpoint, key = excluded.key,
		requests = requests + excluded.requests, succeeded = succeeded + excluded.succeeded,
		attempts = attempts + excluded.attempts, errors = errors + excluded.errors,
		input = input + excluded.input, output = output + excluded.output,
		cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
		reasoning = reasoning + excluded.reasoning, cost_usd = cost_usd + excluded.cost_usd,
		unpriced = unpriced + excluded.unpriced, hedges = hedges + excluded.hedges`

// writeKeys upserts the key sums, in the log batch's transaction.
func (u *usageSums) writeKeys(ctx context.Context, tx *sql.Tx, upsert map[string]*sql.Stmt) error {
	for _, t := range []struct {
		table string
		sums  map[usageKey]*UsageDelta
	}{{keyMinuteTable, u.keyMinute}, {keyHourTable, u.keyHour}} {
		if len(t.sums) == 0 {
			continue
		}
		stmt := tx.StmtContext(ctx, upsert[t.table])
		for k, d := range t.sums {
			if _, err := stmt.ExecContext(ctx, k.start, k.endpointID, d.EndpointID, d.Endpoint, d.Key,
				d.Requests, d.Succeeded, d.Attempts, d.Errors, d.Input, d.Output, d.CacheRead, d.CacheWrite, d.Reasoning,
				d.CostUSD, d.Unpriced, d.Hedges); err != nil {
				stmt.Close()
				return err
			}
		}
		stmt.Close()
	}
	return nil
}

// UsageKeyBuckets returns the sums per bucket start and pool key in
// [from, to), oldest first, as UsageBuckets does per endpoint and model.
func (db *DB) UsageKeyBuckets(ctx context.Context, from, to time.Time, minutes bool) ([]UsageBucket, error) {
	table := keyHourTable
	if minutes {
		table = keyMinuteTable
	}
	return queryAll(ctx, db.sql, "key statistics", func(r *sql.Rows) (b UsageBucket, err error) {
		var start int64
		err = r.Scan(&start, &b.KeyID, &b.EndpointID, &b.Endpoint, &b.Key, &b.Requests, &b.Succeeded, &b.Attempts, &b.Errors,
			&b.Input, &b.Output, &b.CacheRead, &b.CacheWrite, &b.Reasoning, &b.CostUSD, &b.Unpriced, &b.Hedges)
		b.Start = time.UnixMilli(start).UTC()
		return b, err
	}, `SELECT start, key_id, endpoint_id, endpoint, key, requests, succeeded, attempts, errors,
			input, output, cache_read, cache_write, reasoning, cost_usd, unpriced, hedges
		FROM `+table+` WHERE start >= ? AND start < ? ORDER BY start, key_id`,
		from.UnixMilli(), to.UnixMilli())
}

func pruneKeyUsage(ctx context.Context, tx *sql.Tx, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM usage_key_minutes WHERE start < ?`, now.Add(-MinuteBucketsKept).UnixMilli()); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM usage_key_hours WHERE start < ?`, now.Add(-HourBucketsKept).UnixMilli())
	return err
}
