package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Tokens are token counts in the names of an attempt's usage
// (docs/BEHAVIOUR.md#usage): Input without the tokens read from or
// written to the prompt cache, Output with Reasoning. A log row's sums,
// a delta and a bucket all count them so.
type Tokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Reasoning  int64 `json:"reasoning"`
}

// Add adds o's counts to t.
func (t *Tokens) Add(o Tokens) {
	t.Input += o.Input
	t.Output += o.Output
	t.CacheRead += o.CacheRead
	t.CacheWrite += o.CacheWrite
	t.Reasoning += o.Reasoning
}

// Counts are what the statistics sum per bucket (docs/BEHAVIOUR.md#statistics):
// the one list of them, which a delta adds, a bucket holds and the stats
// API answers (app.StatBucket; the frontend's Totals is generated from it).
type Counts struct {
	Requests  int64 `json:"requests"`  // 1 on the delta that counts the client request
	Succeeded int64 `json:"succeeded"` // 1 when that request succeeded
	Attempts  int64 `json:"attempts"`  // 1 for an attempt sent to the endpoint
	Errors    int64 `json:"errors"`    // 1 for a failed attempt
	Tokens
	CostUSD  float64 `json:"cost_usd"`
	Unpriced int64   `json:"unpriced"` // 1 when the attempt had usage but no price
	Hedges   int64   `json:"hedges"`   // 1 when the attempt was a hedge racing another
}

// Add adds o's counts to c.
func (c *Counts) Add(o Counts) {
	c.Requests += o.Requests
	c.Succeeded += o.Succeeded
	c.Attempts += o.Attempts
	c.Errors += o.Errors
	c.Tokens.Add(o.Tokens)
	c.CostUSD += o.CostUSD
	c.Unpriced += o.Unpriced
	c.Hedges += o.Hedges
}

// UsageDelta is what one attempt of a request adds to the statistics (or
// a request that reached no endpoint, under endpoint 0). The app decides
// the counts (docs/BEHAVIOUR.md#statistics); the store sums them.
type UsageDelta struct {
	EndpointID int64
	Endpoint   string
	Model      string
	// KeyID and Key name the pool key the attempt sent (its label and
	// mask); 0 and "" when none: only such deltas go to the key buckets.
	KeyID int64
	Key   string
	Counts
}

// UsageBucket is the sums of one bucket and key.
type UsageBucket struct {
	Start      time.Time `json:"start"`
	EndpointID int64     `json:"endpoint_id"`
	Endpoint   string    `json:"endpoint"`
	Model      string    `json:"model"`
	KeyID      int64     `json:"key_id,omitempty"` // key buckets only (UsageKeyBuckets)
	Key        string    `json:"key,omitempty"`
	Rule       string    `json:"rule,omitempty"` // rule buckets only (UsageRuleBuckets)
	Counts
}

// Bucket tables and how long they keep their rows.
const (
	minuteTable = "usage_minutes"
	hourTable   = "usage_hours"
	// MinuteBucketsKept is how far back minute buckets reach.
	MinuteBucketsKept = 48 * time.Hour
	// HourBucketsKept is how far back hour buckets reach.
	HourBucketsKept = 400 * 24 * time.Hour
)

var usageUpsert = `INSERT INTO %s (start, endpoint_id, endpoint, model, requests, succeeded, attempts, errors,
		input, output, cache_read, cache_write, reasoning, cost_usd, unpriced, hedges)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (start, endpoint_id, model) DO UPDATE SET
		endpoint = excluded.endpoint,
		requests = requests + excluded.requests, succeeded = succeeded + excluded.succeeded,
		attempts = attempts + excluded.attempts, errors = errors + excluded.errors,
		input = input + excluded.input, output = output + excluded.output,
		cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
		reasoning = reasoning + excluded.reasoning, cost_usd = cost_usd + excluded.cost_usd,
		unpriced = unpriced + excluded.unpriced, hedges = hedges + excluded.hedges`

// usageKey names one bucket row: its table's bucket start, endpoint and model.
type usageKey struct {
	start      int64
	endpointID int64
	model      string
}

// usageSums adds up a log batch's deltas per bucket row before they are
// written, so a batch of requests to one endpoint and model costs two
// upserts (minute and hour), not two per request.
type usageSums struct {
	minute, hour map[usageKey]*UsageDelta
	// keyMinute and keyHour are the key buckets', by start and key id (in
	// usageKey's endpointID).
	keyMinute, keyHour map[usageKey]*UsageDelta
	// ruleMinute and ruleHour are the rule buckets', by start and rule (in
	// usageKey's model).
	ruleMinute, ruleHour map[usageKey]*UsageDelta
}

func (u *usageSums) add(at time.Time, d *UsageDelta) {
	if u.minute == nil {
		u.minute, u.hour = map[usageKey]*UsageDelta{}, map[usageKey]*UsageDelta{}
		u.keyMinute, u.keyHour = map[usageKey]*UsageDelta{}, map[usageKey]*UsageDelta{}
	}
	ms := at.UnixMilli()
	sumInto(u.minute, usageKey{ms - ms%60_000, d.EndpointID, d.Model}, d)
	sumInto(u.hour, usageKey{ms - ms%3_600_000, d.EndpointID, d.Model}, d)
	if d.KeyID != 0 {
		sumInto(u.keyMinute, usageKey{ms - ms%60_000, d.KeyID, ""}, d)
		sumInto(u.keyHour, usageKey{ms - ms%3_600_000, d.KeyID, ""}, d)
	}
}

func sumInto(m map[usageKey]*UsageDelta, k usageKey, d *UsageDelta) {
	s, ok := m[k]
	if !ok {
		c := *d
		m[k] = &c
		return
	}
	s.Endpoint, s.Key = d.Endpoint, d.Key // the latest names win, as in the upsert
	s.Counts.Add(d.Counts)
}

// write upserts the sums into both bucket tables inside the log batch's
// transaction, so rows and their statistics are written together or not.
func (u *usageSums) write(ctx context.Context, tx *sql.Tx, upsert map[string]*sql.Stmt) error {
	for _, t := range []struct {
		table string
		sums  map[usageKey]*UsageDelta
	}{{minuteTable, u.minute}, {hourTable, u.hour}} {
		if len(t.sums) == 0 {
			continue
		}
		stmt := tx.StmtContext(ctx, upsert[t.table])
		for k, d := range t.sums {
			if _, err := stmt.ExecContext(ctx, k.start, k.endpointID, d.Endpoint, k.model,
				d.Requests, d.Succeeded, d.Attempts, d.Errors, d.Input, d.Output, d.CacheRead, d.CacheWrite, d.Reasoning,
				d.CostUSD, d.Unpriced, d.Hedges); err != nil {
				stmt.Close()
				return err
			}
		}
		stmt.Close()
	}
	if err := u.writeKeys(ctx, tx, upsert); err != nil {
		return err
	}
	return u.writeRules(ctx, tx, upsert)
}

// UsageBuckets returns the sums per bucket start, endpoint and model in
// [from, to), oldest first: minute buckets when minutes is true (they reach
// back MinuteBucketsKept), else hour buckets.
func (db *DB) UsageBuckets(ctx context.Context, from, to time.Time, minutes bool) ([]UsageBucket, error) {
	table := hourTable
	if minutes {
		table = minuteTable
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT start, endpoint_id, endpoint, model, requests, succeeded, attempts, errors,
			input, output, cache_read, cache_write, reasoning, cost_usd, unpriced, hedges
		FROM `+table+` WHERE start >= ? AND start < ? ORDER BY start, endpoint_id, model`,
		from.UnixMilli(), to.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("usage statistics: %w", err)
	}
	defer rows.Close()
	out := []UsageBucket{}
	for rows.Next() {
		var b UsageBucket
		var start int64
		if err := rows.Scan(&start, &b.EndpointID, &b.Endpoint, &b.Model, &b.Requests, &b.Succeeded, &b.Attempts, &b.Errors,
			&b.Input, &b.Output, &b.CacheRead, &b.CacheWrite, &b.Reasoning, &b.CostUSD, &b.Unpriced, &b.Hedges); err != nil {
			return nil, fmt.Errorf("usage statistics: %w", err)
		}
		b.Start = time.UnixMilli(start).UTC()
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("usage statistics: %w", err)
	}
	return out, nil
}

// pruneUsage drops buckets past their tables' reach.
func pruneUsage(ctx context.Context, tx *sql.Tx, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM usage_minutes WHERE start < ?`, now.Add(-MinuteBucketsKept).UnixMilli()); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM usage_hours WHERE start < ?`, now.Add(-HourBucketsKept).UnixMilli()); err != nil {
		return err
	}
	if err := pruneKeyUsage(ctx, tx, now); err != nil {
		return err
	}
	return pruneRuleUsage(ctx, tx, now)
}
