import { describe, expect, it } from 'vitest';
import type { LogRow, Totals } from './api/types';
import { statBucket } from './test/utils';
import {
  errorRate,
  failovers,
  keysOf,
  localMidnight,
  perKeyPerSlot,
  rangeQuery,
  rfc3339,
  slotIndex,
  sparkline,
  statsQueryString,
  successRate,
  sumBuckets,
  timeSlots,
  todayQuery,
  tokensIn,
  totalsByKey,
  totalsPerSlot,
} from './stats';

const bucket = statBucket;

describe('sums', () => {
  const buckets = [
    bucket('2026-11-30T08:00:00Z', 'a', { requests: 5, succeeded: 4, attempts: 5, errors: 1, input: 100, cache_read: 40, cache_write: 10, output: 20, cost_usd: 0.25 }),
    bucket('2026-11-30T08:01:00Z', 'b', { attempts: 3, errors: 3, input: 7, output: 1, unpriced: 3 }),
    bucket('2026-11-30T08:01:00Z', 'a', { requests: 2, succeeded: 2, attempts: 2, input: 1, output: 2, cost_usd: 0.5 }),
  ];

  it('adds every field, and counts every input token (cached or not) as input', () => {
    const t = sumBuckets(buckets);
    expect(t).toMatchObject({ requests: 7, succeeded: 6, attempts: 10, errors: 4, input: 108, cache_read: 40, cache_write: 10, output: 23, cost_usd: 0.75, unpriced: 3 });
    expect(tokensIn(t)).toBe(158);
  });

  it('adds every count of the API Totals, each in its own field, hedges too', () => {
    const counts: Totals = {
      requests: 1, succeeded: 2, attempts: 3, errors: 4, input: 5, output: 6, cache_read: 7, cache_write: 8, reasoning: 9, cost_usd: 10.5, unpriced: 11, hedges: 12,
    };
    const b = bucket('2026-11-30T08:00:00Z', 'a', counts);
    const twice = Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, 2 * v]));
    expect(sumBuckets([b, b])).toEqual(twice);
    expect(totalsByKey([b, b])).toEqual([{ key: 'a', ...twice }]);
  });

  it('gives the success rate per request, the error rate per attempt, and none without either', () => {
    expect(successRate({ requests: 7, succeeded: 6 })).toBeCloseTo(6 / 7);
    expect(successRate({ requests: 0, succeeded: 0 })).toBeNull();
    // A request that failed over twice and was answered: a success, whatever its attempts.
    expect(successRate(sumBuckets([bucket('2026-11-30T08:00:00Z', 'a', { requests: 1, succeeded: 1, attempts: 3, errors: 2 })]))).toBe(1);
    expect(errorRate({ attempts: 4, errors: 1 })).toBe(0.25);
    expect(errorRate({ attempts: 0, errors: 0 })).toBeNull();
  });

  it('sums per key, most attempts first', () => {
    const by = totalsByKey(buckets);
    expect(by.map((t) => [t.key, t.requests, t.attempts, t.errors, t.cost_usd])).toEqual([
      ['a', 7, 7, 1, 0.75],
      ['b', 0, 3, 3, 0],
    ]);
    expect(keysOf(buckets)).toEqual(['a', 'b']);
  });
});

describe('time slots', () => {
  const now = new Date('2026-11-30T08:30:20Z');

  it('has one slot per minute of the last hour and per hour of the last day, the current one last', () => {
    const m = timeSlots('hour', now);
    expect(m).toHaveLength(60);
    expect(new Date(m[59]).toISOString()).toBe('2026-11-30T08:30:00.000Z');
    expect(new Date(m[0]).toISOString()).toBe('2026-11-30T07:31:00.000Z');
    const h = timeSlots('day', now);
    expect(h).toHaveLength(24);
    expect(new Date(h[23]).toISOString()).toBe('2026-11-30T08:00:00.000Z');
  });

  it('has one slot per local day for 7 and 30 days, each at local midnight', () => {
    const w = timeSlots('week', now);
    expect(w).toHaveLength(7);
    expect(timeSlots('month', now)).toHaveLength(30);
    for (const t of w) expect([new Date(t).getHours(), new Date(t).getMinutes()]).toEqual([0, 0]);
    expect(w[6]).toBe(localMidnight(now).getTime());
  });

  it('puts a time in the last slot starting at or before it, an earlier one in the first', () => {
    const slots = [100, 200, 300];
    expect(slotIndex(slots, 50)).toBe(0);
    expect(slotIndex(slots, 100)).toBe(0);
    expect(slotIndex(slots, 299)).toBe(1);
    expect(slotIndex(slots, 300)).toBe(2);
    expect(slotIndex(slots, 1e9)).toBe(2);
  });

  it('fills the slots without traffic with zeros', () => {
    const slots = timeSlots('hour', now);
    const b = [
      bucket('2026-11-30T08:29:00Z', 'a', { requests: 1, attempts: 2, errors: 1, output: 4 }),
      bucket('2026-11-30T08:29:00Z', 'b', { requests: 1, attempts: 1 }),
      bucket('2026-11-30T08:30:00Z', 'a', { requests: 1, attempts: 1 }),
    ];
    const rows = totalsPerSlot(b, slots);
    expect(rows).toHaveLength(60);
    expect(rows.slice(57).map((r) => [r.requests, r.attempts, r.errors, r.output])).toEqual([[0, 0, 0, 0], [2, 3, 1, 4], [1, 1, 0, 0]]);
    const per = perKeyPerSlot(b, slots, ['a', 'b'], (x) => x.attempts);
    expect(per.slice(58).map((r) => [r.a, r.b])).toEqual([[2, 1], [1, 0]]);
    const line = sparkline(b, slots, 'a');
    expect(line.attempts.slice(58)).toEqual([2, 1]);
    expect(line.errors.slice(58)).toEqual([1, 0]);
    expect(line.attempts.reduce((x, y) => x + y)).toBe(3);
    expect(sparkline(b, slots, null).attempts.slice(58)).toEqual([3, 1]);
  });
});

describe('stats queries', () => {
  const now = new Date('2026-11-30T08:30:20Z');

  it('writes local times as RFC 3339 with the offset, to the second', () => {
    const s = rfc3339(new Date('2026-11-30T08:30:20.123Z'));
    expect(s).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    expect(Date.parse(s)).toBe(Date.parse('2026-11-30T08:30:20Z'));
  });

  it('asks each range in its bucket size', () => {
    expect(rangeQuery('hour', 'endpoint', now)).toEqual({ minutes: 60, group: 'endpoint' });
    const day = rangeQuery('day', 'model', now);
    expect(day).toMatchObject({ bucket: 'hour', group: 'model' });
    expect(Date.parse(day.from!)).toBe(now.getTime() - 24 * 3600_000 - 0); // whole seconds already
    const week = rangeQuery('week', 'endpoint', now);
    expect(week.bucket).toBe('day');
    expect(Date.parse(week.from!)).toBe(localMidnight(now, 6).getTime());
    expect(Date.parse(rangeQuery('month', 'endpoint', now).from!)).toBe(localMidnight(now, 29).getTime());
    expect(Date.parse(todayQuery(now).from!)).toBe(localMidnight(now).getTime());
    expect(todayQuery(now).bucket).toBe('day');
  });

  it('builds the same query string for the JSON and the CSV, escaping the offset', () => {
    expect(statsQueryString({ minutes: 60, group: 'model' })).toBe('minutes=60&group=model');
    expect(statsQueryString({ from: '2026-11-30T00:00:00+08:00', bucket: 'day', group: 'endpoint' })).toBe(
      'from=2026-11-30T00%3A00%3A00%2B08%3A00&bucket=day&group=endpoint',
    );
    expect(statsQueryString({})).toBe('');
  });
});

describe('failovers', () => {
  const row = (id: number, attempts: number) => ({ id, attempts }) as LogRow;

  it('keeps the newest requests with more than one attempt', () => {
    expect(failovers([row(1, 2), row(5, 1), row(3, 3), row(4, 2), row(2, 1)], 2).map((r) => r.id)).toEqual([4, 3]);
    expect(failovers([row(1, 1)], 5)).toEqual([]);
  });
});
