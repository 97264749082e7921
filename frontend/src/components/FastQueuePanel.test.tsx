import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { baseRoutes, endpoint, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { FastQueuePanel, mergeOrder, queueLists } from './FastQueuePanel';

// jsdom lays nothing out; dnd-kit's keyboard sensor moves by measured
// rectangles, so give rows and lists a simple two-column geometry.
const ROW = 40;
const COLUMNS: Record<string, { x: number; y: number }> = {
  'fast-queue': { x: 0, y: 0 },
  'other-queue': { x: 400, y: 0 },
  'full-order': { x: 0, y: 1000 },
};

function rectOf(el: Element): DOMRect {
  const list = el.closest('ul[data-testid]');
  const col = COLUMNS[list?.getAttribute('data-testid') ?? ''];
  if (!col) return new DOMRect(0, 0, 0, 0);
  if (el === list) {
    const n = list.querySelectorAll('li').length;
    return new DOMRect(col.x, col.y, 300, Math.max(1, n) * ROW + 20);
  }
  const row = el.closest('li');
  const index = row ? [...list!.querySelectorAll('li')].indexOf(row) : 0;
  return new DOMRect(col.x + 10, col.y + 10 + index * ROW, 280, ROW - 4);
}

const eps = [
  endpoint({ id: 1, name: 'alpha', fast: true, fast_sort_order: 0, sort_order: 0 }),
  endpoint({ id: 2, name: 'beta', fast: true, fast_sort_order: 1, sort_order: 1 }),
  endpoint({ id: 3, name: 'gamma', sort_order: 2 }),
  endpoint({ id: 4, name: 'delta', sort_order: 3, enabled: false }),
];

async function keyboardMove(row: HTMLElement, key: string, times = 1) {
  row.focus();
  fireEvent.keyDown(row, { code: 'Space', key: ' ' });
  // The sensor starts listening for arrows on the next tick.
  await act(() => vi.advanceTimersByTimeAsync(10));
  // A row that moves to the other list is re-mounted, as in a browser, so
  // later keys go to whatever holds focus and bubble to the document.
  const target = () => (row.isConnected ? row : (document.activeElement ?? document.body));
  for (let i = 0; i < times; i++) {
    fireEvent.keyDown(target(), { code: key, key });
    await act(() => vi.advanceTimersByTimeAsync(50));
  }
  fireEvent.keyDown(target(), { code: 'Space', key: ' ' });
  await act(() => vi.advanceTimersByTimeAsync(50));
}

describe('fast queue', () => {
  beforeEach(() => {
    vi.spyOn(Element.prototype, 'getBoundingClientRect').mockImplementation(function (this: Element) {
      return rectOf(this);
    });
    vi.useFakeTimers({ shouldAdvanceTime: true });
    stubEventSource();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('splits endpoints into the fast queue and the other enabled ones', () => {
    expect(queueLists(eps)).toEqual({ fast: [1, 2], other: [3] });
    expect(mergeOrder([1, 2, 3, 4], [4, 2])).toEqual([1, 4, 3, 2]);
  });

  it('reorders the fast queue by keyboard and saves the new order at once', async () => {
    const calls = stubFetch({ ...baseRoutes(eps), 'PUT /api/fast-queue': { body: {} } });
    renderApp(<FastQueuePanel />);
    const fast = await screen.findByTestId('fast-queue');
    await within(fast).findByText('beta');
    await keyboardMove(within(fast).getByRole('button', { name: 'Move beta' }), 'ArrowUp');

    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(1));
    expect(calls.find((c) => c.method === 'PUT')).toEqual({ method: 'PUT', path: '/api/fast-queue', body: { ids: [2, 1] } });
  });

  it('moves an endpoint from the other list into the fast queue by keyboard', async () => {
    const calls = stubFetch({ ...baseRoutes(eps), 'PUT /api/fast-queue': { body: {} } });
    renderApp(<FastQueuePanel />);
    const other = await screen.findByTestId('other-queue');
    await within(other).findByText('gamma');
    await keyboardMove(within(other).getByRole('button', { name: 'Move gamma' }), 'ArrowLeft');

    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(1));
    const put = calls.find((c) => c.method === 'PUT')!;
    expect(put.path).toBe('/api/fast-queue');
    expect((put.body as { ids: string[] }).ids.sort()).toEqual([1, 2, 3]);
  });

  it('says that all enabled endpoints are used when the fast queue is empty', async () => {
    stubFetch(baseRoutes(eps.map((e) => ({ ...e, fast: false }))));
    renderApp(<FastQueuePanel />);
    const fast = await screen.findByTestId('fast-queue');
    await waitFor(() => expect(fast).toHaveTextContent('The fast queue is empty: all enabled endpoints are used'));
    // The empty-queue line shows before the endpoints arrive too: wait for the list itself.
    await waitFor(() => expect(within(screen.getByTestId('other-queue')).getAllByRole('button').map((b) => b.textContent)).toEqual([
      expect.stringContaining('alpha'),
      expect.stringContaining('beta'),
      expect.stringContaining('gamma'),
    ]));
  });

  it('reorders the full list by keyboard through PUT /api/order', async () => {
    const calls = stubFetch({ ...baseRoutes(eps), 'PUT /api/order': { body: {} } });
    renderApp(<FastQueuePanel />);
    const full = await screen.findByTestId('full-order');
    await within(full).findByText('delta');
    await keyboardMove(within(full).getByRole('button', { name: 'Move alpha' }), 'ArrowDown', 2);

    await waitFor(() => expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(1));
    expect(calls.find((c) => c.method === 'PUT')).toEqual({ method: 'PUT', path: '/api/order', body: { ids: [2, 3, 1, 4] } });
  });
});
