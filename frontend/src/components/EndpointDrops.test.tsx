import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { baseRoutes, endpoint, health, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { EndpointsPanel } from './EndpointsPanel';

const learned = { drop: 'context_management', at: '2026-12-01T10:00:00Z', source: 'learned', error: '400: context_management: Extra inputs are not permitted' };

describe('endpoint drops', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('shows what was learned with the refusal that taught it, and removes it', async () => {
    const ep = endpoint({ id: 1, name: 'relay', drops: [learned] });
    const calls = stubFetch({
      ...baseRoutes([ep]),
      'PUT /api/endpoints/1': (call) => ({ body: { ...ep, ...(call.body as object) } }),
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    const drops = within(await screen.findByTestId('endpoint-card-relay')).getByTestId('endpoint-drops');
    const item = within(drops).getByTestId('drop');
    expect(item).toHaveTextContent('context_management');
    expect(item).toHaveTextContent(/learned/);
    expect(item).toHaveTextContent('from the refusal 400: context_management: Extra inputs are not permitted');

    await user.click(within(item).getByRole('button', { name: 'Stop leaving out context_management' }));
    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toEqual([{ method: 'PUT', path: '/api/endpoints/1', body: { drops: [] } }]));
    expect(await screen.findByRole('status')).toHaveTextContent('context_management is sent again from the next request.');
  });

  it('adds a part by hand from the list, and clears all', async () => {
    const ep = endpoint({ id: 1, name: 'relay', drops: [learned] });
    const calls = stubFetch({
      ...baseRoutes([ep]),
      'GET /api/droppable': { body: { parts: [{ drop: 'context_management', why: 'x' }, { drop: 'tools[].defer_loading', why: 'y' }], beta_prefix: 'beta:' } },
      'PUT /api/endpoints/1': (call) => ({ body: { ...ep, ...(call.body as object) } }),
    });
    const user = userEvent.setup();
    renderApp(<EndpointsPanel />);
    const drops = within(await screen.findByTestId('endpoint-card-relay')).getByTestId('endpoint-drops');
    await user.click(within(drops).getByRole('button', { name: 'Leave out a part' }));
    await waitFor(() => expect(calls.some((c) => c.path === '/api/droppable')).toBe(true));
    await user.click(within(drops).getByLabelText('Part to leave out'));
    await user.paste('tools[].defer_loading');
    await user.click(within(drops).getByRole('button', { name: 'Leave it out' }));
    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(1));
    const body = calls.filter((c) => c.method === 'PUT')[0].body as { drops: { drop: string; source: string }[] };
    expect(body.drops.map((d) => [d.drop, d.source])).toEqual([['context_management', 'learned'], ['tools[].defer_loading', 'manual']]);

    await user.click(within(drops).getByRole('button', { name: 'Clear all' }));
    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(2));
    expect(calls.filter((c) => c.method === 'PUT')[1].body).toEqual({ drops: [] });
  });

  it('says there is nothing yet, in Chinese too', async () => {
    stubFetch(baseRoutes([endpoint({ id: 1, name: 'relay' })]));
    renderApp(<EndpointsPanel />, 'zh-CN');
    const drops = within(await screen.findByTestId('endpoint-card-relay')).getByTestId('endpoint-drops');
    expect(drops).toHaveTextContent('对此端点省略的部分');
    expect(drops).toHaveTextContent('暂无');
  });
});

describe('answers from another model', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('shows how many of the last 24 hours came from another model, on the card', async () => {
    stubFetch(baseRoutes([endpoint({ id: 1, name: 'relay' }), endpoint({ id: 2, name: 'clean' })], [health({ id: 1, name: 'relay', other_model_24h: 3 }), health({ id: 2, name: 'clean' })]));
    renderApp(<EndpointsPanel />);
    const card = await screen.findByTestId('endpoint-card-relay');
    expect(await within(card).findByTestId('other-model')).toHaveTextContent('3 answers from another model in 24 h');
    expect(within(screen.getByTestId('endpoint-card-clean')).queryByTestId('other-model')).toBeNull();
  });
});
