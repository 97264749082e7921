package store

import (
	"context"
	"database/sql"
	"time"
)

// Rule buckets (docs/BEHAVIOUR.md#statistics, group=rule): every delta of
// a request summed per bucket and the routing rule that decided it ("" for
// none), kept as long as the endpoint buckets.
const (
	ruleMinuteTable = "usage_rule_minutes"
	ruleHourTable   = "usage_rule_hours"
)

var ruleUsageUpsert = `INSERT INTO %s (start, rule, requests, succeeded, attempts, errors,
		input, output, cache_read, cache_write, reasoning, cost_usd, unpriced, hedges)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (start, rule) DO UPDATE SET
		requests = requests + excluded.requests, succeeded = succeeded + excluded.succeeded,
		attempts = attempts + excluded.attempts, errors = errors + excluded.errors,
		input = input + excluded.input, output = output + excluded.output,
		cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write,
		reasoning = reasoning + excluded.reasoning, cost_usd = cost_usd + excluded.cost_usd,
		unpriced = unpriced + excluded.unpriced, hedges = hedges + excluded.hedges`

// addRule sums d into the rule buckets of rule, by start (usageKey's
// model holds the rule).
func (u *usageSums) addRule(at time.Time, rule string, d *UsageDelta) {
	if u.ruleMinute == nil {
		u.ruleMinute, u.ruleHour = map[usageKey]*UsageDelta{}, map[usageKey]*UsageDelta{}
	}
	ms := at.UnixMilli()
	sumInto(u.ruleMinute, usageKey{ms - ms%60_000, 0, rule}, d)
	sumInto(u.ruleHour, usageKey{ms - ms%3_600_000, 0, rule}, d)
}

// writeRules upserts the rule sums, in the log batch's transaction.
func (u *usageSums) writeRules(ctx context.Context, tx *sql.Tx, upsert map[string]*sql.Stmt) error {
	for _, t := range []struct {
		table string
		sums  map[usageKey]*UsageDelta
	}{{ruleMinuteTable, u.ruleMinute}, {ruleHourTable, u.ruleHour}} {
		if len(t.sums) == 0 {
			continue
		}
		stmt := tx.StmtContext(ctx, upsert[t.table])
		for k, d := range t.sums {
			if _, err := stmt.ExecContext(ctx, k.start, k.model,
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

// UsageRuleBuckets returns the sums per bucket start and rule in [from,
// to), oldest first, as UsageBuckets does per endpoint and model; a
// bucket's Rule is "" for requests no rule decided.
func (db *DB) UsageRuleBuckets(ctx context.Context, from, to time.Time, minutes bool) ([]UsageBucket, error) {
	table := ruleHourTable
	if minutes {
		table = ruleMinuteTable
	}
	return queryAll(ctx, db.sql, "rule statistics", func(r *sql.Rows) (b UsageBucket, err error) {
		var start int64
		err = r.Scan(&start, &b.Rule, &b.Requests, &b.Succeeded, &b.Attempts, &b.Errors,
			&b.Input, &b.Output, &b.CacheRead, &b.CacheWrite, &b.Reasoning, &b.CostUSD, &b.Unpriced, &b.Hedges)
		b.Start = time.UnixMilli(start).UTC()
		return b, err
	}, `SELECT start, rule, requests, succeeded, attempts, errors,
			input, output, cache_read, cache_write, reasoning, cost_usd, unpriced, hedges
		FROM `+table+` WHERE start >= ? AND start < ? ORDER BY start, rule`,
		from.UnixMilli(), to.UnixMilli())
}

func pruneRuleUsage(ctx context.Context, tx *sql.Tx, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM usage_rule_minutes WHERE start < ?`, now.Add(-MinuteBucketsKept).UnixMilli()); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM usage_rule_hours WHERE start < ?`, now.Add(-HourBucketsKept).UnixMilli())
	return err
}
