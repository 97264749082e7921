import { describe, expect, it } from 'vitest';
import type { StatBucket } from '../api/types';
import { pivot } from './StatsPanel';

const bucket = (start: string, key: string, requests: number, errors: number): StatBucket => ({
  start, key, requests, errors, input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0, cost_usd: 0, unpriced: 0,
});

describe('stats pivot', () => {
  it('makes one row per minute with request and error columns per endpoint', () => {
    const got = pivot([
      bucket('2026-11-30T08:01:00Z', 'b', 3, 1),
      bucket('2026-11-30T08:00:00Z', 'a', 5, 0),
      bucket('2026-11-30T08:01:00Z', 'a', 2, 2),
    ]);
    expect(got.endpoints).toEqual(['a', 'b']);
    expect(got.rows).toEqual([
      { minute: '2026-11-30T08:00:00Z', 'a:req': 5, 'a:err': 0, 'b:req': 0, 'b:err': 0 },
      { minute: '2026-11-30T08:01:00Z', 'a:req': 2, 'a:err': 2, 'b:req': 3, 'b:err': 1 },
    ]);
  });
});
