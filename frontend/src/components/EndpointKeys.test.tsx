import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { KeyHealth } from '../api/types';
import { parseKeys } from './EndpointForm';
import { baseRoutes, endpoint, health, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { EndpointsPanel } from './EndpointsPanel';

const keys = [
  { id: 11, label: 'main', key_masked: 'sk-…aaaa', weight: 1, enabled: true },
  { id: 12, label: 'spare', key_masked: 'sk-…bbbb', weight: 1, enabled: true },
];

function keyHealth(id: number, over: Partial<KeyHealth> = {}): KeyHealth {
  return { id, label: '', key_masked: '', enabled: true, status: 'healthy', state: 'closed', reason: '', retry_in_ms: 0, last_error: '', last_failure_at: null, last_test: null, ...over };
}

describe('key pools', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('reads the More keys field one a line, label optional, and finds a repeat', () => {
    expect(parseKeys('sk-one\nwork: sk-two\n\n  sk-three  ')).toEqual({
      keys: [
        { label: '', key: 'sk-one' },
        { label: 'work', key: 'sk-two' },
        { label: '', key: 'sk-three' },
      ],
      dupLine: 0,
    });
    expect(parseKeys('a: sk-one\nsk-two\nsk-one').dupLine).toBe(3);
  });

  it('lists each key on the card with its state, and forces one open', async () => {
    const ep = endpoint({ id: 1, name: 'pool', keys, has_key: true, api_key_masked: 'sk-…aaaa' });
    const h = health({ id: 1, name: 'pool', keys: [keyHealth(11), keyHealth(12, { status: 'unhealthy', state: 'open', reason: 'broken', last_error: '401: invalid key' })] });
    const calls = stubFetch({
      ...baseRoutes([ep], [h]),
      'POST /api/endpoints/1/keys/11/force-open': { body: { ...h, keys: [keyHealth(11, { status: 'unhealthy', state: 'open', reason: 'manual' }), h.keys[1]] } },
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    const list = await screen.findByTestId('endpoint-keys');
    const spare = within(list).getByTestId('key-12');
    await waitFor(() => expect(within(spare).getByTestId('status-badge')).toHaveAttribute('data-status', 'unhealthy'));
    expect(spare).toHaveTextContent('401: invalid key');
    await user.click(within(list).getByRole('button', { name: 'Force open main (sk-…aaaa)' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'POST' && c.path === '/api/endpoints/1/keys/11/force-open')).toBe(true));
    await waitFor(() => expect(within(within(list).getByTestId('key-11')).getByTestId('status-badge')).toHaveAttribute('data-status', 'unhealthy'));
  });

  it('shows a lone key only while its breaker holds the endpoint back', async () => {
    const one = [keys[0]];
    stubFetch(baseRoutes([endpoint({ id: 1, name: 'solo', keys: one, has_key: true, api_key_masked: 'sk-…aaaa' })], [health({ id: 1, name: 'solo', keys: [keyHealth(11)] })]));
    renderApp(<EndpointsPanel />);
    await screen.findByTestId('endpoint-card-solo');
    expect(screen.queryByTestId('endpoint-keys')).toBeNull();
  });

  it('shows a lone key forced open', async () => {
    const one = [keys[0]];
    stubFetch(baseRoutes([endpoint({ id: 1, name: 'solo', keys: one, has_key: true, api_key_masked: 'sk-…aaaa' })], [health({ id: 1, name: 'solo', keys: [keyHealth(11, { status: 'unhealthy', state: 'open', reason: 'manual' })] })]));
    renderApp(<EndpointsPanel />);
    const list = await screen.findByTestId('endpoint-keys');
    expect(within(list).getByTestId('status-badge')).toHaveAttribute('data-status', 'unhealthy');
  });

  it('sends pasted keys after the stored ones, kept by id, and refuses a repeat', async () => {
    const ep = endpoint({ id: 1, name: 'pool', keys, has_key: true, api_key_masked: 'sk-…aaaa' });
    const calls = stubFetch({
      ...baseRoutes([ep]),
      'PUT /api/endpoints/1': (call) => ({ body: { ...ep, ...(call.body as object) , keys } }),
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    const card = await screen.findByTestId('endpoint-card-pool');
    await user.click(within(card).getByRole('button', { name: 'Edit' }));
    const field = screen.getByLabelText('More keys (one a line, “label: key” optional)');
    await user.type(field, 'sk-new-one{Enter}sk-new-one');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(field).toHaveAccessibleDescription('Line 2 repeats a key');
    expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(0);

    await user.clear(field);
    await user.type(field, 'sk-new-one{Enter}backup: sk-new-two');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(1));
    const put = calls.find((c) => c.method === 'PUT');
    expect((put?.body as { keys: unknown }).keys).toEqual([
      { id: 11, label: 'main', key: '', weight: 1, enabled: true },
      { id: 12, label: 'spare', key: '', weight: 1, enabled: true },
      { id: 0, label: '', key: 'sk-new-one', weight: 1, enabled: true },
      { id: 0, label: 'backup', key: 'sk-new-two', weight: 1, enabled: true },
    ]);
  });
});
