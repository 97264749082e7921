// Pure helpers over GET /api/stats buckets (docs/BEHAVIOUR.md#statistics): the query a range asks, the time
// slots a chart shows, and the sums the dashboard and the Stats tab print. No React, no chart library.
import type { LogRow, StatBucket, Totals } from './api/types';

/** The ranges the Stats tab offers, each with the bucket size it reads. */
export const RANGES = ['hour', 'day', 'week', 'month'] as const;
export type StatsRange = (typeof RANGES)[number];
export const GROUPS = ['endpoint', 'model', 'rule'] as const;
export type StatsGroup = (typeof GROUPS)[number];
/** The key GET /api/stats?group=rule gives the requests no rule matched. */
export const NO_RULE_KEY = '(no rule)';
export type BucketSize = 'minute' | 'hour' | 'day';

/** Query of GET /api/stats and /api/stats.csv. */
export interface StatsQuery {
  /** Short for the last N minutes in minute buckets. */
  minutes?: number;
  from?: string;
  to?: string;
  bucket?: BucketSize;
  group?: StatsGroup;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** Local midnight `daysBack` days before `d`'s day (DST-safe: built from the calendar date). */
export function localMidnight(d: Date, daysBack = 0): Date {
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() - daysBack);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** RFC 3339 in local time with its offset, to the second: 2026-12-01T00:00:00+08:00. */
export function rfc3339(d: Date): string {
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  const abs = Math.abs(off);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

export function bucketOf(range: StatsRange): BucketSize {
  return range === 'hour' ? 'minute' : range === 'day' ? 'hour' : 'day';
}

/**
 * The stats query of a range: the last hour in minutes, the last 24 hours in hours, the last 7 or 30 days (today
 * included, from local midnight) in days. `to` is left to the server's clock.
 */
export function rangeQuery(range: StatsRange, group: StatsGroup, now: Date): StatsQuery {
  switch (range) {
    case 'hour':
      return { minutes: 60, group };
    case 'day':
      return { from: rfc3339(new Date(now.getTime() - 24 * HOUR)), bucket: 'hour', group };
    case 'week':
      return { from: rfc3339(localMidnight(now, 6)), bucket: 'day', group };
    case 'month':
      return { from: rfc3339(localMidnight(now, 29)), bucket: 'day', group };
  }
}

/** Today's totals: day buckets from local midnight. */
export function todayQuery(now: Date): StatsQuery {
  return { from: rfc3339(localMidnight(now)), bucket: 'day' };
}

/** The query string of a stats query, in a fixed order (the same for the JSON and the CSV). */
export function statsQueryString(q: StatsQuery): string {
  const p = new URLSearchParams();
  if (q.minutes) p.set('minutes', String(q.minutes));
  if (q.from) p.set('from', q.from);
  if (q.to) p.set('to', q.to);
  if (q.bucket) p.set('bucket', q.bucket);
  if (q.group) p.set('group', q.group);
  return p.toString();
}

/** Start times (epoch ms, ascending) of the slots a chart of the range shows, the current one last. */
export function timeSlots(range: StatsRange, now: Date): number[] {
  const out: number[] = [];
  if (range === 'hour' || range === 'day') {
    const step = range === 'hour' ? MINUTE : HOUR;
    const n = range === 'hour' ? 60 : 24;
    const last = Math.floor(now.getTime() / step) * step;
    for (let i = n - 1; i >= 0; i--) out.push(last - i * step);
    return out;
  }
  const n = range === 'week' ? 7 : 30;
  for (let i = n - 1; i >= 0; i--) out.push(localMidnight(now, i).getTime());
  return out;
}

/** Index of the slot holding time t: the last slot starting at or before it; an earlier t goes to the first. */
export function slotIndex(slots: number[], t: number): number {
  let lo = 0;
  let hi = slots.length - 1;
  if (hi < 0 || t < slots[0]) return 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (slots[mid] <= t) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Sums of any set of buckets (docs/BEHAVIOUR.md#statistics) are `Totals`, the counts of a bucket as the API
 * defines them: `requests` are client requests, counted under the key that answered them, `succeeded` those that
 * ended 2xx; `attempts` are what each key was sent, `errors` the failed ones.
 */
export type { Totals };

/** Zero of every count; the type makes a count the API adds a compile error here until it is listed. */
export function emptyTotals(): Totals {
  return { requests: 0, succeeded: 0, attempts: 0, errors: 0, input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0, cost_usd: 0, unpriced: 0, hedges: 0 };
}

/** The counts a sum adds: every field of Totals. */
const FIELDS = Object.keys(emptyTotals()) as (keyof Totals)[];

function add(into: Totals, b: Totals): void {
  for (const f of FIELDS) into[f] += b[f];
}

export function sumBuckets(buckets: readonly StatBucket[]): Totals {
  const t = emptyTotals();
  for (const b of buckets) add(t, b);
  return t;
}

/** Every input token, cached or not: what a log row's `tokens_in` counts (docs/BEHAVIOUR.md#usage). */
export function tokensIn(t: Pick<Totals, 'input' | 'cache_read' | 'cache_write'>): number {
  return t.input + t.cache_read + t.cache_write;
}

/** Requests that succeeded / requests; null when there were no requests (no rate, not 100 %). */
export function successRate(t: Pick<Totals, 'requests' | 'succeeded'>): number | null {
  return t.requests > 0 ? t.succeeded / t.requests : null;
}

/** Failed attempts / attempts: how often a key failed when it was tried; null when it never was. */
export function errorRate(t: Pick<Totals, 'attempts' | 'errors'>): number | null {
  return t.attempts > 0 ? t.errors / t.attempts : null;
}

/** Totals per key, most attempts first (then by key). */
export function totalsByKey(buckets: readonly StatBucket[]): Array<Totals & { key: string }> {
  const by = new Map<string, Totals & { key: string }>();
  for (const b of buckets) {
    let t = by.get(b.key);
    if (!t) {
      t = { key: b.key, ...emptyTotals() };
      by.set(b.key, t);
    }
    add(t, b);
  }
  return [...by.values()].sort((a, b) => b.attempts - a.attempts || b.requests - a.requests || a.key.localeCompare(b.key));
}

/** Keys in the order totalsByKey gives them. */
export function keysOf(buckets: readonly StatBucket[]): string[] {
  return totalsByKey(buckets).map((t) => t.key);
}

export type SlotRow = { t: number } & Totals;

/** One row per slot with the totals of the buckets in it (every key together). */
export function totalsPerSlot(buckets: readonly StatBucket[], slots: number[]): SlotRow[] {
  const rows: SlotRow[] = slots.map((t) => ({ t, ...emptyTotals() }));
  if (!rows.length) return rows;
  for (const b of buckets) add(rows[slotIndex(slots, Date.parse(b.start))], b);
  return rows;
}

export type KeyRow = { t: number } & Record<string, number>;

/** One row per slot with one column per key holding `value` of that key's buckets in the slot (0 when none). */
export function perKeyPerSlot(buckets: readonly StatBucket[], slots: number[], keys: string[], value: (b: StatBucket) => number): KeyRow[] {
  const rows: KeyRow[] = slots.map((t) => {
    const r: KeyRow = { t } as KeyRow;
    for (const k of keys) r[k] = 0;
    return r;
  });
  if (!rows.length) return rows;
  for (const b of buckets) {
    if (!keys.includes(b.key)) continue;
    rows[slotIndex(slots, Date.parse(b.start))][b.key] += value(b);
  }
  return rows;
}

/** Attempts and failed attempts per minute of one key (all keys when key is null), for a sparkline. */
export function sparkline(buckets: readonly StatBucket[], slots: number[], key: string | null): { attempts: number[]; errors: number[] } {
  const attempts = slots.map(() => 0);
  const errors = slots.map(() => 0);
  if (!slots.length) return { attempts, errors };
  for (const b of buckets) {
    if (key !== null && b.key !== key) continue;
    const i = slotIndex(slots, Date.parse(b.start));
    attempts[i] += b.attempts;
    errors[i] += b.errors;
  }
  return { attempts, errors };
}

/** The newest requests that failed over (more than one attempt), newest first. */
export function failovers(rows: readonly LogRow[], n: number): LogRow[] {
  return rows
    .filter((r) => r.attempts > 1)
    .sort((a, b) => b.id - a.id)
    .slice(0, n);
}
