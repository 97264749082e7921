import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { BalanceReply } from '../api/types';
import { baseRoutes, endpoint, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { EndpointsPanel } from './EndpointsPanel';
import { buildBalance } from './EndpointForm';

const at = new Date(Date.now() - 3 * 60_000).toISOString();
const reading = (over: Partial<NonNullable<BalanceReply['reading']>>): BalanceReply => ({
  endpoint_id: 1,
  endpoint: 'relay',
  connector: 'relay',
  low: false,
  low_threshold: null,
  reading: { remaining: null, used: null, total: null, unit: '', at, ...over },
});

describe('endpoint balance', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('shows what is left with its unit, its age and a bar, and refreshes', async () => {
    const ep = endpoint({ id: 1, name: 'relay', balance: { template: 'relay' } });
    const calls = stubFetch({
      ...baseRoutes([ep]),
      'GET /api/endpoints/1/balance': { body: { ...reading({ remaining: 7.5, used: 2.5, total: 10, unit: 'USD' }), low: true } },
      'POST /api/endpoints/1/balance': { body: reading({ remaining: 0, used: 10, total: 10, unit: 'USD' }) },
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    const box = within(await screen.findByTestId('endpoint-card-relay')).getByTestId('endpoint-balance');
    await waitFor(() => expect(within(box).getByTestId('balance-remaining')).toHaveTextContent('$7.50'));
    expect(box).toHaveTextContent('of $10.00');
    expect(box).toHaveTextContent('updated 3 min ago');
    expect(within(box).getByRole('meter')).toHaveAttribute('aria-valuenow', '75');
    expect(within(box).getByTestId('balance-low')).toHaveTextContent('Low');
    await user.click(within(box).getByRole('button', { name: 'Refresh balance' }));
    await waitFor(() => expect(within(box).getByTestId('balance-remaining')).toHaveTextContent('$0.00'));
    expect(calls.some((c) => c.method === 'POST' && c.path === '/api/endpoints/1/balance')).toBe(true);
    expect(within(box).queryByTestId('balance-low')).toBeNull();
  });

  it('says unknown and why for a failed read, never 0', async () => {
    const ep = endpoint({ id: 1, name: 'relay', balance: { template: 'newapi' } });
    stubFetch({
      ...baseRoutes([ep]),
      'GET /api/endpoints/1/balance': { body: reading({ error: '500: upstream trouble', status: 500 }) },
    });
    renderApp(<EndpointsPanel />);
    const box = within(await screen.findByTestId('endpoint-card-relay')).getByTestId('endpoint-balance');
    await waitFor(() => expect(within(box).getByTestId('balance-remaining')).toHaveTextContent('Unknown'));
    expect(within(box).getByTestId('balance-error')).toHaveTextContent('500: upstream trouble');
    expect(box).not.toHaveTextContent('$0');
    expect(within(box).queryByRole('meter')).toBeNull();
  });

  it('is not shown for an endpoint without a connector', async () => {
    stubFetch(baseRoutes([endpoint({ id: 1, name: 'plain' })]));
    renderApp(<EndpointsPanel />);
    const card = await screen.findByTestId('endpoint-card-plain');
    expect(within(card).queryByTestId('endpoint-balance')).toBeNull();
  });
});

describe('buildBalance', () => {
  const t = ((k: string) => k) as never;
  const draft = (over: object) => ({ balance_template: '', balance_custom: '', balance_low: '', ...over }) as never;
  it.each([
    ['none', {}, {}],
    ['a template with a threshold', { balance_template: 'deepseek', balance_low: '5' }, { template: 'deepseek', low_threshold: 5 }],
    ['custom JSON', { balance_template: 'custom', balance_custom: '{"url":"{{origin}}/b","unit":"USD"}' }, { url: '{{origin}}/b', unit: 'USD' }],
  ])('%s', (_name, over, want) => {
    expect(buildBalance(draft(over), t)).toEqual({ connector: want });
  });
  it.each([
    ['bad JSON', { balance_template: 'custom', balance_custom: '{' }, 'balance'],
    ['a list', { balance_template: 'custom', balance_custom: '[]' }, 'balance'],
    ['negative threshold', { balance_template: 'relay', balance_low: '-1' }, 'balance.low_threshold'],
  ])('%s is refused', (_name, over, field) => {
    expect(buildBalance(draft(over), t).error?.[0]).toBe(field);
  });
});
