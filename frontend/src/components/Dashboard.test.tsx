import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import type { LogRow, StatBucket } from '../api/types';
import { baseRoutes, endpoint, health, renderApp, statBucket, stubEventSource, stubFetch, type Call } from '../test/utils';
import { Dashboard } from './Dashboard';

const minute = (ago: number) => new Date(Math.floor(Date.now() / 60_000) * 60_000 - ago * 60_000).toISOString();

const bucket = statBucket;

const row = (id: number, attempts: number, over: Partial<LogRow> = {}): LogRow => ({
  id, at: '2026-11-30T08:01:00Z', protocol: 'anthropic', path: '/v1/messages', model_asked: 'claude-sonnet-4-5', model_forwarded: 'claude-sonnet-4-5',
  explicit: false, endpoint_id: 1, endpoint: 'alpha', status: 200, attempts, duration_ms: 10, ttfb_ms: 5, stream: false, stream_end: '',
  tokens_in: 5, tokens_out: 1, sent_upstream: true, client_gone: false, error: '', usage: null, cost_usd: null, rule: '', ...over,
});

const hourBuckets = [
  bucket(minute(3), 'alpha', { requests: 2, succeeded: 2, attempts: 2 }),
  bucket(minute(1), 'alpha', { requests: 1, succeeded: 1, attempts: 1 }),
  bucket(minute(1), 'beta', { requests: 1, attempts: 1, errors: 1 }),
];

/** Answers the dashboard's two stats reads: the last hour in minutes (`hour`), and today in days. */
function statsRoute(today: StatBucket[], hour = hourBuckets) {
  return (c: Call) => ({ body: { buckets: c.path.includes('minutes=60') ? hour : today } });
}

describe('dashboard', () => {
  it('welcomes a first run with no endpoints and leads to Add endpoint', async () => {
    stubEventSource();
    stubFetch({ ...baseRoutes([]), 'GET /api/stats': { body: { buckets: [] } }, 'GET /api/logs': { body: { items: [], next_before: null } } });
    const onAdd = vi.fn();
    renderApp(<Dashboard onAddEndpoint={onAdd} />);
    const welcome = await screen.findByTestId('dashboard-welcome');
    expect(welcome).toHaveTextContent('Welcome to ccmesh');
    await userEvent.setup().click(within(welcome).getByRole('button', { name: 'Add endpoint' }));
    expect(onAdd).toHaveBeenCalledOnce();
  });

  it('shows the last hour, today’s tokens and unpriced requests, each endpoint and the last failovers', async () => {
    stubEventSource();
    const calls = stubFetch({
      ...baseRoutes(
        [endpoint({ id: 1, name: 'alpha' }), endpoint({ id: 2, name: 'beta', sort_order: 1 })],
        [health({ id: 1, name: 'alpha' }), health({ id: 2, name: 'beta', status: 'unhealthy', state: 'open', reason: 'rate_limited', retry_in_ms: 30_000 })],
      ),
      'GET /api/stats': statsRoute([bucket('2026-11-30T00:00:00+08:00', 'alpha', { requests: 4, input: 1000, cache_read: 12_000, cache_write: 500, output: 300, unpriced: 4 })]),
      'GET /api/logs': { body: { items: [row(12, 1), row(11, 3, { endpoint: 'alpha' }), row(10, 2, { status: 502, endpoint: 'beta' })], next_before: null } },
    });
    renderApp(<Dashboard onAddEndpoint={() => undefined} />);

    await waitFor(() => expect(screen.getByTestId('dash-requests')).toHaveTextContent('4'));
    expect(screen.getByTestId('dash-success')).toHaveTextContent('75%');
    expect(screen.getByTestId('tile-success')).toHaveTextContent('1 of 4 failed');
    await waitFor(() => expect(screen.getByTestId('dash-tokens-in')).toHaveTextContent('13.5K in'));
    expect(screen.getByTestId('dash-tokens-out')).toHaveTextContent('300 out');
    // Nothing priced: the cost is unknown, not $0.
    expect(screen.getByTestId('dash-cost')).toHaveTextContent('unknown');
    expect(screen.getByTestId('dash-unpriced')).toHaveTextContent('+ 4 requests without a price');

    // The stats were read for the last hour and from local midnight in day buckets.
    const stats = calls.filter((c) => c.path.startsWith('/api/stats'));
    expect(stats.map((c) => c.path)).toContain('/api/stats?minutes=60');
    const today = new URLSearchParams(stats.find((c) => !c.path.includes('minutes'))!.path.split('?')[1]);
    expect(today.get('bucket')).toBe('day');
    const from = new Date(today.get('from')!);
    expect([from.getHours(), from.getMinutes(), from.getSeconds()]).toEqual([0, 0, 0]);

    const alpha = screen.getByTestId('dash-endpoint-alpha');
    expect(within(alpha).getByTestId('status-badge')).toHaveTextContent('healthy');
    expect(alpha).toHaveTextContent('3 attempts · 0 errors, last hour');
    expect(within(alpha).getByTestId('sparkline').querySelector('path.spark-requests')?.getAttribute('d')).toMatch(/^M0\.0 /);
    const beta = screen.getByTestId('dash-endpoint-beta');
    expect(within(beta).getByTestId('status-badge')).toHaveTextContent('unhealthy');
    expect(beta).toHaveTextContent('rate limited');
    expect(within(beta).getByTestId('countdown')).toHaveTextContent(/half-open in (29|30) s/);
    expect(beta).toHaveTextContent('1 attempt · 1 error, last hour');

    const failovers = screen.getAllByTestId('failover');
    expect(failovers).toHaveLength(2);
    expect(failovers[0]).toHaveTextContent('3 attempts, answered by alpha (200)');
    expect(within(failovers[0]).getByRole('link', { name: 'Show timeline' })).toHaveAttribute('href', '#/logs/11');
    expect(failovers[1]).toHaveTextContent('2 attempts, failed (502)');
    // No identifier of the API's closed sets reaches the screen as it came.
    expect(document.body).not.toHaveTextContent('rate_limited');
  });

  it('counts a request that failed over twice and was answered as one request, a success, of three attempts', async () => {
    stubEventSource();
    stubFetch({
      ...baseRoutes([endpoint({ id: 1, name: 'alpha' }), endpoint({ id: 2, name: 'beta', sort_order: 1 })]),
      // alpha failed twice, then beta answered: the buckets the API gives for that one request.
      'GET /api/stats': statsRoute([], [
        bucket(minute(2), 'alpha', { attempts: 2, errors: 2 }),
        bucket(minute(2), 'beta', { requests: 1, succeeded: 1, attempts: 1 }),
      ]),
      'GET /api/logs': { body: { items: [], next_before: null } },
    });
    renderApp(<Dashboard onAddEndpoint={() => undefined} />);
    await waitFor(() => expect(screen.getByTestId('dash-requests')).toHaveTextContent(/^1$/));
    expect(screen.getByTestId('dash-success')).toHaveTextContent(/^100%$/);
    expect(screen.getByTestId('tile-success')).toHaveTextContent('0 of 1 failed');
    expect(screen.getByTestId('tile-requests')).toHaveTextContent('3 attempts');
    // Each endpoint's line shows what it was sent: alpha's failures stay visible.
    expect(screen.getByTestId('dash-endpoint-alpha')).toHaveTextContent('2 attempts · 2 errors, last hour');
    expect(screen.getByTestId('dash-endpoint-beta')).toHaveTextContent('1 attempt · 0 errors, last hour');
  });

  it('prints the cost when it is known, and says so for a day without traffic', async () => {
    stubEventSource();
    stubFetch({
      ...baseRoutes([endpoint({ id: 1, name: 'alpha' })]),
      'GET /api/stats': (c) => ({ body: { buckets: c.path.includes('minutes=60') ? [] : [bucket('2026-11-30T00:00:00Z', 'alpha', { cost_usd: 1.5, requests: 2 })] } }),
      'GET /api/logs': { body: { items: [], next_before: null } },
    });
    renderApp(<Dashboard onAddEndpoint={() => undefined} />);
    await waitFor(() => expect(screen.getByTestId('dash-cost')).toHaveTextContent('$1.50'));
    expect(screen.queryByTestId('dash-unpriced')).toBeNull();
    expect(screen.getByTestId('dash-success')).toHaveTextContent('—');
    expect(screen.getByText(/^No requests in the last hour\./)).toBeInTheDocument();
    expect(screen.getByText('None of the latest requests needed a failover.')).toBeInTheDocument();
  });

  it('reads the stats again a second after log rows arrive, once for a burst, and lists a live failover', async () => {
    const es = stubEventSource();
    const calls = stubFetch({
      ...baseRoutes([endpoint({ id: 1, name: 'alpha' })]),
      'GET /api/stats': statsRoute([]),
      'GET /api/logs': { body: { items: [], next_before: null } },
    });
    renderApp(<Dashboard onAddEndpoint={() => undefined} />);
    await screen.findByTestId('dash-requests');
    const reads = () => calls.filter((c) => c.path.startsWith('/api/stats')).length;
    await waitFor(() => expect(reads()).toBe(2));

    act(() => {
      es.instances[0].emit('log', row(20, 1));
      es.instances[0].emit('log', row(21, 2, { endpoint: 'alpha' }));
      es.instances[0].emit('log', row(22, 1));
    });
    expect(await screen.findByTestId('failover')).toHaveTextContent('2 attempts, answered by alpha (200)');
    expect(reads()).toBe(2); // not yet: debounced
    await waitFor(() => expect(reads()).toBe(4), { timeout: 3000 });
    await new Promise((r) => setTimeout(r, 1300));
    expect(reads()).toBe(4);
  });

  it('says it in Chinese too', async () => {
    stubEventSource();
    stubFetch({
      ...baseRoutes([endpoint({ id: 1, name: 'alpha' })], [health({ id: 1, name: 'alpha', status: 'unhealthy', state: 'open', reason: 'manual' })]),
      'GET /api/stats': statsRoute([bucket('2026-11-30T00:00:00Z', 'alpha', { unpriced: 2, requests: 2 })]),
      'GET /api/logs': { body: { items: [], next_before: null } },
    });
    renderApp(<Dashboard onAddEndpoint={() => undefined} />, 'zh-CN');
    await waitFor(() => expect(screen.getByTestId('dash-unpriced')).toHaveTextContent('+ 2 个请求没有价格'));
    expect(screen.getByTestId('dash-endpoint-alpha')).toHaveTextContent('手动熔断');
    expect(screen.getByTestId('dash-endpoint-alpha')).toHaveTextContent('保持熔断，直到手动恢复');
  });
});
