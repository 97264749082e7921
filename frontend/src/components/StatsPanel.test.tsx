import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { baseRoutes, endpoint, renderApp, statBucket, stubEventSource, stubFetch } from '../test/utils';
import { StatsPanel } from './StatsPanel';

const bucket = statBucket;

const now = () => new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString();

// relay.eu answered 4 requests, 3 of them ok, in 4 attempts (1 failed); backup failed 1 attempt before relay.eu
// answered; 2 requests reached no endpoint and failed.
const buckets = [
  bucket(now(), 'relay.eu', { requests: 4, succeeded: 3, attempts: 4, errors: 1, input: 100, cache_read: 1000, cache_write: 10, output: 50, cost_usd: 0.125 }),
  bucket(now(), 'backup', { attempts: 1, errors: 1, input: 5, output: 1, unpriced: 1 }),
  bucket(now(), '', { requests: 2 }),
];

const params = (path: string) => Object.fromEntries(new URLSearchParams(path.split('?')[1] ?? ''));

describe('stats', () => {
  it('totals each key and the whole range: requests with their success rate, attempts with their error rate, unpriced apart', async () => {
    stubEventSource();
    const calls = stubFetch({ ...baseRoutes([endpoint({ id: 1, name: 'relay.eu' })]), 'GET /api/stats': { body: { buckets } } });
    renderApp(<StatsPanel />);
    const table = await screen.findByTestId('stats-totals');
    expect(calls.find((c) => c.path.startsWith('/api/stats'))?.path).toBe('/api/stats?minutes=60&group=endpoint');
    const rows = within(table).getAllByRole('row').slice(1).map((r) => [...r.querySelectorAll('th, td')].map((c) => c.textContent));
    expect(rows).toEqual([
      ['relay.eu', '4', '75%', '4', '1', '25%', '1,110', '1,000', '10', '50', '$0.13', '—'],
      ['backup', '0', '—', '1', '1', '100%', '5', '0', '0', '1', '—', '1'],
      ['(no endpoint)', '2', '0%', '0', '0', '—', '0', '0', '0', '0', '$0.00', '—'],
      ['Total', '6', '50%', '5', '2', '40%', '1,115', '1,000', '10', '51', '$0.13', '1'],
    ]);
    expect(screen.getByTestId('stats-unpriced')).toHaveTextContent('1 request in this range has no price; its cost is not counted.');
    for (const id of ['stats-chart', 'stats-tokens', 'stats-cost', 'stats-error-rate']) expect(screen.getByTestId(id)).toBeInTheDocument();
  });

  it.each([
    ['en', 'Rule', '(no rule)'],
    ['zh-CN', '按规则', '（无规则）'],
  ] as const)('groups by routing rule, the requests no rule matched under their own name (%s)', async (lang, option, none) => {
    stubEventSource();
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/stats': (c) => ({
        body: {
          buckets: params(c.path).group === 'rule'
            ? [bucket(now(), 'subagents', { requests: 3, succeeded: 3, attempts: 3 }), bucket(now(), '(no rule)', { requests: 1, succeeded: 1, attempts: 1 })]
            : buckets,
        },
      }),
    });
    const user = userEvent.setup();
    renderApp(<StatsPanel />, lang);
    await screen.findByTestId('stats-totals');
    await user.selectOptions(screen.getByLabelText(lang === 'en' ? 'Group by' : '分组'), option);
    await waitFor(() => expect(params(calls.at(-1)!.path)).toMatchObject({ group: 'rule' }));
    await waitFor(() => {
      const keys = within(screen.getByTestId('stats-totals')).getAllByRole('row').slice(1, -1).map((r) => r.querySelector('th, td')?.textContent);
      expect(keys).toEqual(['subagents', none]);
    });
  });

  it('asks the chosen range in its bucket size and group, and downloads the same rows as CSV', async () => {
    stubEventSource();
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/stats': { body: { buckets } },
      'GET /api/stats.csv': { body: 'start,model\n' },
    });
    const user = userEvent.setup();
    renderApp(<StatsPanel />);
    await screen.findByTestId('stats-totals');

    await user.selectOptions(screen.getByLabelText('Range'), 'week');
    await user.selectOptions(screen.getByLabelText('Group by'), 'model');
    await waitFor(() => expect(params(calls.at(-1)!.path)).toMatchObject({ bucket: 'day', group: 'model' }));
    const asked = calls.at(-1)!.path;
    const from = new Date(params(asked).from);
    expect([from.getHours(), from.getMinutes()]).toEqual([0, 0]);
    expect(Math.round((Date.now() - from.getTime()) / 86_400_000)).toBeGreaterThanOrEqual(6);
    expect(await screen.findByText('(no model)')).toBeInTheDocument();

    const link = screen.getByRole('link', { name: 'Download CSV' });
    expect(link).toHaveAttribute('href', asked.replace('/api/stats?', '/api/stats.csv?'));
    const created = vi.fn(() => 'blob:csv');
    vi.stubGlobal('URL', class extends URL {
      static createObjectURL = created;
      static revokeObjectURL = vi.fn();
    });
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined);
    await user.click(link);
    await waitFor(() => expect(created).toHaveBeenCalledOnce());
    const csv = calls.find((c) => c.path.startsWith('/api/stats.csv'))!;
    expect(csv.path).toBe(asked.replace('/api/stats?', '/api/stats.csv?'));
    // The saved file, not a navigation: the click on the link itself was taken over.
    expect(click).toHaveBeenCalledOnce();
    expect((click.mock.contexts[0] as HTMLAnchorElement).download).toBe('ccmesh-stats-week-model.csv');
  });

  it('names the key of traffic that reached no endpoint in Chinese too', async () => {
    stubEventSource();
    stubFetch({ ...baseRoutes([]), 'GET /api/stats': { body: { buckets } } });
    renderApp(<StatsPanel />, 'zh-CN');
    const table = await screen.findByTestId('stats-totals');
    expect(within(table).getAllByTestId('stats-key-row').map((r) => r.querySelector('td')?.textContent)).toEqual(['relay.eu', 'backup', '（无端点）']);
  });

  it('says when the range has no traffic', async () => {
    stubEventSource();
    stubFetch({ ...baseRoutes([]), 'GET /api/stats': { body: { buckets: [] } } });
    renderApp(<StatsPanel />, 'zh-CN');
    expect(await screen.findByTestId('stats-empty')).toHaveTextContent('此范围内没有流量。');
    expect(screen.queryByTestId('stats-totals')).toBeNull();
  });
});
