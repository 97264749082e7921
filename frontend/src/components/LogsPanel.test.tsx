import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { LogDetail, LogRow } from '../api/types';
import { baseRoutes, endpoint, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { LogsPanel } from './LogsPanel';

const row: LogRow = {
  id: 7,
  at: '2026-11-30T08:01:00Z',
  protocol: 'anthropic',
  path: '/v1/messages',
  model_asked: 'claude-sonnet-4-5',
  model_forwarded: 'claude-sonnet-4-5',
  explicit: false,
  endpoint_id: 2,
  endpoint: 'good',
  status: 200,
  attempts: 3,
  duration_ms: 912,
  ttfb_ms: 410,
  stream: true,
  stream_end: 'complete',
  tokens_in: 12,
  tokens_out: 34,
  sent_upstream: true,
  client_gone: false,
  error: '',
  usage: null,
  cost_usd: null,
  rule: '',
};

const detail: LogDetail = {
  ...row,
  routing: {
    strategy: 'session',
    session: '9f2c3e41aa07b6d1',
    affinity: true,
    candidates: [
      { endpoint_id: 1, endpoint: 'bad', state: 'closed' },
      { endpoint_id: 2, endpoint: 'good', state: 'closed' },
    ],
    excluded: [{ endpoint_id: 3, endpoint: 'cold', reason: 'breaker', state: 'open', breaker_reason: 'broken', until: '2026-11-30T08:02:20Z' }],
  },
  history: [
    { endpoint_id: 1, endpoint: 'bad', outcome: 'failure', error_type: 'upstream_status', status: 503, message: 'upstream 503', body_head: '{"error":"overloaded"}', started_at: '2026-11-30T08:01:00Z', duration_ms: 12, breaker_counted: true },
    { endpoint_id: 1, endpoint: 'bad', outcome: 'failure', error_type: 'upstream_status', status: 503, message: 'upstream 503', body_head: '', started_at: '2026-11-30T08:01:00.3Z', duration_ms: 10, breaker_counted: true },
    { endpoint_id: 2, endpoint: 'good', outcome: 'success', error_type: '', status: 200, message: '', body_head: '', started_at: '2026-11-30T08:01:00.5Z', duration_ms: 400, breaker_counted: false },
  ],
};

describe('logs', () => {
  it('shows the routing rule on the row and in the detail, and says when none matched', async () => {
    stubEventSource();
    const ruled: LogRow = { ...row, rule: 'subagents' };
    const plain: LogRow = { ...row, id: 9, rule: '' };
    stubFetch({
      ...baseRoutes([endpoint({ id: 2, name: 'good' })]),
      'GET /api/logs': { body: { items: [ruled, plain], next_before: null } },
      'GET /api/logs/7': { body: { ...detail, rule: 'subagents' } },
      'GET /api/logs/9': { body: { ...detail, id: 9, rule: '' } },
    });
    const user = userEvent.setup();
    renderApp(<LogsPanel />);
    const rows = await screen.findAllByTestId('log-row');
    expect(within(rows[0]).getByTestId('row-rule')).toHaveTextContent('rule: subagents');
    expect(within(rows[1]).queryByTestId('row-rule')).toBeNull();
    await user.click(rows[0]);
    expect(await screen.findByTestId('routing-rule')).toHaveTextContent('Rule “subagents” picked the endpoints.');
    await user.click(rows[1]);
    await waitFor(() => expect(screen.getByTestId('routing-rule')).toHaveTextContent('No routing rule matched: the normal list.'));
  });

  it.each([
    ['en', '(no endpoint)'],
    ['zh-CN', '（无端点）'],
  ] as const)('names the endpoint of a request that reached none (%s)', async (lang, label) => {
    stubEventSource();
    const refused: LogRow = { ...row, id: 8, path: '/v1/models', endpoint_id: 0, endpoint: '', status: 200, attempts: 0, sent_upstream: false };
    stubFetch({ ...baseRoutes([endpoint({ id: 2, name: 'good' })]), 'GET /api/logs': { body: { items: [refused, row], next_before: null } } });
    renderApp(<LogsPanel />, lang);
    const endpoints = (await screen.findAllByTestId('log-row')).map((r) => r.querySelectorAll('td')[3].textContent);
    expect(endpoints).toEqual([label, 'good']);
  });

  it('marks a row answered by another model than the one sent', async () => {
    stubEventSource();
    const other: LogRow = { ...row, id: 9, model_answered: 'glm-4.5-air' };
    stubFetch({ ...baseRoutes([endpoint({ id: 2, name: 'good' })]), 'GET /api/logs': { body: { items: [other, row], next_before: null } } });
    renderApp(<LogsPanel />);
    const [first, second] = await screen.findAllByTestId('log-row');
    expect(within(first).getByTestId('row-other-model')).toHaveTextContent('answered by glm-4.5-air');
    expect(within(second).queryByTestId('row-other-model')).toBeNull();
  });

  it('opens a row as a timeline of attempts with the routing decision', async () => {
    stubEventSource();
    const calls = stubFetch({
      ...baseRoutes([endpoint({ id: 1, name: 'bad' }), endpoint({ id: 2, name: 'good' })]),
      'GET /api/logs': { body: { items: [row], next_before: null } },
      'GET /api/logs/7': { body: detail },
    });
    const user = userEvent.setup();
    renderApp(<LogsPanel />);
    const rows = await screen.findAllByTestId('log-row');
    expect(rows).toHaveLength(1);
    expect(calls.some((c) => c.path === '/api/logs?limit=50')).toBe(true);
    await user.click(rows[0]);

    const drawer = await screen.findByTestId('log-detail');
    const attempts = within(drawer).getAllByTestId('attempt');
    expect(attempts.map((a) => within(a).getByText(/^(bad|good)$/).textContent)).toEqual(['bad', 'bad', 'good']);
    expect(attempts[0]).toHaveTextContent('503');
    expect(attempts[0]).toHaveTextContent('counted by breaker');
    expect(attempts[0]).toHaveTextContent('{"error":"overloaded"}');
    expect(attempts[2]).toHaveTextContent('success');
    expect(attempts[2]).toHaveTextContent('not counted');
    expect(within(drawer).getByTestId('routing-candidates')).toHaveTextContent('bad');
    expect(within(drawer).getByTestId('routing-excluded')).toHaveTextContent('cold');
    expect(within(drawer).getByTestId('routing-excluded')).toHaveTextContent('open (broken)');
    expect(within(drawer).getByTestId('routing-session')).toHaveTextContent('conversation 9f2c3e41aa07b6d1: started where it last succeeded');
  });

  it('filters, pages and takes live rows on the newest page', async () => {
    const es = stubEventSource();
    const calls = stubFetch({
      ...baseRoutes([endpoint({ id: 2, name: 'good' })]),
      'GET /api/logs': (c) => ({ body: c.path.includes('before=') ? { items: [{ ...row, id: 3 }], next_before: null } : { items: [row], next_before: 7 } }),
    });
    const user = userEvent.setup();
    renderApp(<LogsPanel />);
    await screen.findAllByTestId('log-row');

    act(() => es.instances[0].emit('log', { ...row, id: 8, path: '/v1/messages/count_tokens' }));
    expect(screen.getAllByTestId('log-row')[0]).toHaveTextContent('/v1/messages/count_tokens');

    await user.click(screen.getByRole('button', { name: 'Older' }));
    await screen.findByRole('button', { name: 'Request 3' });
    expect(calls.at(-1)?.path).toBe('/api/logs?limit=50&before=7');

    await user.selectOptions(screen.getByLabelText('Endpoint'), 'good');
    await user.type(screen.getByLabelText('Status'), '503');
    await user.type(screen.getByLabelText('Model'), 'sonnet');
    await user.click(screen.getByRole('button', { name: 'Filter' }));
    await screen.findByRole('button', { name: 'Request 7' });
    expect(calls.at(-1)?.path).toBe('/api/logs?limit=50&endpoint=good&status=503&model=sonnet');
  });
});
