import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { baseRoutes, endpoint, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { EndpointsPanel } from './EndpointsPanel';

describe('fetch models', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('shows the fetched list and saves it only when the user accepts it', async () => {
    const ep = endpoint({ id: 1, name: 'relay', models: ['keep-*'] });
    const calls = stubFetch({
      ...baseRoutes([ep]),
      'POST /api/endpoints/1/fetch-models': { body: { models: ['claude-sonnet-4-5', 'claude-haiku-4-5'], truncated: false } },
      'PUT /api/endpoints/1': (call) => ({ body: { ...ep, ...(call.body as object) } }),
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    const card = await screen.findByTestId('endpoint-card-relay');
    await user.click(within(card).getByRole('button', { name: 'Fetch models' }));

    const list = await within(card).findByTestId('fetched-models');
    expect(list).toHaveTextContent('claude-haiku-4-5');
    expect(within(card).getByRole('status')).toHaveTextContent('Fetched 2 models');
    expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(0);

    await user.click(within(list).getByRole('button', { name: 'Use these models' }));
    await waitFor(() => expect(within(card).getByRole('status')).toHaveTextContent('Saved 2 models'));
    expect(calls.filter((c) => c.method === 'PUT')).toEqual([
      { method: 'PUT', path: '/api/endpoints/1', body: { models: ['claude-sonnet-4-5', 'claude-haiku-4-5'] } },
    ]);
    expect(within(card).queryByTestId('fetched-models')).toBeNull();
  });

  it('says when the list was cut, and discarding it saves nothing', async () => {
    const calls = stubFetch({
      ...baseRoutes([endpoint({ id: 1, name: 'relay' })]),
      'POST /api/endpoints/1/fetch-models': { body: { models: ['a', 'b'], truncated: true } },
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    const card = await screen.findByTestId('endpoint-card-relay');
    await user.click(within(card).getByRole('button', { name: 'Fetch models' }));
    expect(await within(card).findByRole('status')).toHaveTextContent('The upstream lists more');
    await user.click(within(card).getByRole('button', { name: 'Discard' }));
    expect(within(card).queryByTestId('fetched-models')).toBeNull();
    expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(0);
  });
});
