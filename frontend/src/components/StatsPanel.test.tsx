import { describe, expect, it } from 'vitest';
import { pivot } from './StatsPanel';

describe('stats pivot', () => {
  it('makes one row per minute with request and error columns per endpoint', () => {
    const got = pivot([
      { minute: '2026-11-30T08:01:00Z', endpoint_id: 2, endpoint: 'b', requests: 3, errors: 1 },
      { minute: '2026-11-30T08:00:00Z', endpoint_id: 1, endpoint: 'a', requests: 5, errors: 0 },
      { minute: '2026-11-30T08:01:00Z', endpoint_id: 1, endpoint: 'a', requests: 2, errors: 2 },
    ]);
    expect(got.endpoints).toEqual(['a', 'b']);
    expect(got.rows).toEqual([
      { minute: '2026-11-30T08:00:00Z', 'a:req': 5, 'a:err': 0, 'b:req': 0, 'b:err': 0 },
      { minute: '2026-11-30T08:01:00Z', 'a:req': 2, 'a:err': 2, 'b:req': 3, 'b:err': 1 },
    ]);
  });
});
