import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { BreakerEvent } from '../api/types';
import { baseRoutes, endpoint, health, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { EndpointsPanel } from './EndpointsPanel';

const ev = (id: number, over: Partial<BreakerEvent>): BreakerEvent => ({
  id, at: '2026-11-30T08:01:00Z', endpoint_id: 1, endpoint: 'relay', cause: 'request', from: 'closed', to: 'open', reason: 'broken', ...over,
});

describe('breaker history on the endpoint card', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('reads the endpoint’s audit trail when unfolded and says each change in words', async () => {
    const calls = stubFetch({
      ...baseRoutes([endpoint({ id: 1, name: 'relay' })], [health({ id: 1, name: 'relay' })]),
      'GET /api/breaker-events': {
        body: [
          ev(4, { cause: 'force_close', from: 'open', to: 'closed', reason: '' }),
          ev(3, { cause: 'force_open', from: 'half_open', to: 'open', reason: 'manual' }),
          ev(2, { cause: 'request', from: 'open', to: 'half_open', reason: '' }),
          ev(1, { cause: 'request', from: 'closed', to: 'open', reason: 'rate_limited' }),
          ev(0, { cause: 'restore', from: 'closed', to: 'open', reason: 'quota_exhausted' }),
        ],
      },
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    const card = await screen.findByTestId('endpoint-card-relay');
    expect(calls.some((c) => c.path.startsWith('/api/breaker-events'))).toBe(false); // nothing read while folded
    await user.click(within(card).getByText('Breaker history'));

    const items = await within(card).findAllByTestId('breaker-event');
    expect(calls.find((c) => c.path.startsWith('/api/breaker-events'))?.path).toBe('/api/breaker-events?endpoint=1&limit=20');
    const text = items.map((li) => li.textContent!.replace(/^.*?(closed|open|half-open) →/, '$1 →'));
    expect(text).toEqual([
      'open → closed forced closed',
      'half-open → open forced open',
      'open → half-open by its requests',
      'closed → open by its requests (rate limited)',
      'closed → open restored at start-up (quota exhausted)',
    ]);
    for (const raw of ['half_open', 'force_', 'rate_limited', 'quota_exhausted', 'restore ']) expect(card.textContent).not.toContain(raw);
  });

  it('says a change a balance reading made in words, in both languages (item 3)', async () => {
    for (const [lang, heading, want] of [['en', 'Breaker history', 'by a balance reading'], ['zh-CN', '熔断记录', '由余额读数']] as const) {
      stubFetch({
        ...baseRoutes([endpoint({ id: 1, name: 'relay' })], [health({ id: 1, name: 'relay' })]),
        'GET /api/breaker-events': { body: [ev(1, { cause: 'balance', from: 'closed', to: 'open', reason: 'quota_exhausted' })] },
      });
      const user = userEvent.setup();
      const { unmount } = renderApp(<EndpointsPanel />, lang);
      const card = await screen.findByTestId('endpoint-card-relay');
      await user.click(within(card).getByText(heading));
      const [item] = await within(card).findAllByTestId('breaker-event');
      expect(item).toHaveTextContent(want);
      unmount();
    }
  });

  it('says when there is nothing recorded, in Chinese too', async () => {
    stubFetch({ ...baseRoutes([endpoint({ id: 1, name: 'relay' })]), 'GET /api/breaker-events': { body: [] } });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />, 'zh-CN');
    const card = await screen.findByTestId('endpoint-card-relay');
    await user.click(within(card).getByText('熔断记录'));
    expect(await within(card).findByText('此端点还没有熔断状态变化的记录。')).toBeInTheDocument();
  });
});
