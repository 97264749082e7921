import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { PriceRowReply } from '../api/types';
import { baseRoutes, renderApp, stubEventSource, stubFetch, type Call } from '../test/utils';
import { PricesEditor } from './PricesEditor';

const mine: PriceRowReply = { model: 'glm-4.6', input: 0.6, output: 2.2, source: 'https://docs.z.ai/pricing', date: '2026-11-02', shipped: false };
const shipped: PriceRowReply[] = [
  { model: 'claude-sonnet-4-5*', input: 3, output: 15, cache_read: 0.3, cache_write: 3.75, source: 'https://platform.claude.com/docs/en/about-claude/pricing', date: '2026-12-01', shipped: true },
  { model: 'gpt-5', input: 1.25, output: 10, cache_read: 0.125, source: 'https://openai.com/api/pricing/', date: '2026-12-01', shipped: true },
];

/** GET and PUT /api/prices over one list, as the server keeps it. */
function pricesRoutes(start: PriceRowReply[]) {
  let rows = start;
  return {
    'GET /api/prices': () => ({ body: { rows: [...rows, ...shipped] } }),
    'PUT /api/prices': (c: Call) => {
      rows = (c.body as { rows: PriceRowReply[] }).rows.map((r) => ({ ...r, shipped: false }));
      return { body: { rows: [...rows, ...shipped] } };
    },
  };
}

describe('prices', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('lists your rows to edit, then the shipped ones read-only with their source and date', async () => {
    stubFetch({ ...baseRoutes([]), ...pricesRoutes([mine]) });
    const user = userEvent.setup();
    renderApp(<PricesEditor />);
    const rows = await screen.findAllByTestId('price-row');
    expect(rows).toHaveLength(1);
    expect(screen.getByLabelText('Model or pattern, row 1')).toHaveValue('glm-4.6');
    expect(screen.getByLabelText('Input, row 1')).toHaveValue('0.6');
    expect(screen.getByLabelText('Cache read, row 1')).toHaveValue('');
    expect(screen.getByLabelText('Date, row 1')).toHaveValue('2026-11-02');

    await user.click(screen.getByText('Shipped prices (2)'));
    const table = screen.getByTestId('prices-shipped');
    expect(within(table).queryAllByRole('textbox')).toHaveLength(0);
    const sonnet = within(table).getByText('claude-sonnet-4-5*').closest('tr')!;
    expect(sonnet).toHaveTextContent('2026-12-01');
    expect(within(sonnet).getByRole('link', { name: 'platform.claude.com' })).toHaveAttribute('href', 'https://platform.claude.com/docs/en/about-claude/pricing');
  });

  it('adds, edits and removes rows, and saves them whole with PUT /api/prices', async () => {
    const calls = stubFetch({ ...baseRoutes([]), ...pricesRoutes([mine]) });
    const user = userEvent.setup();
    renderApp(<PricesEditor />);
    await screen.findAllByTestId('price-row');

    await user.click(screen.getByRole('button', { name: 'Add row' }));
    await user.type(screen.getByLabelText('Model or pattern, row 2'), 'kimi-*');
    await user.type(screen.getByLabelText('Input, row 2'), '0.55');
    await user.type(screen.getByLabelText('Output, row 2'), '2.5');
    await user.type(screen.getByLabelText('Cache read, row 2'), '0.15');
    const out1 = screen.getByLabelText('Output, row 1');
    await user.clear(out1);
    await user.type(out1, '2.4');
    // A shipped row copied to yours, then removed again.
    await user.click(screen.getByRole('button', { name: 'Copy gpt-5 to your prices' }));
    expect(screen.getByLabelText('Model or pattern, row 3')).toHaveValue('gpt-5');
    await user.click(screen.getByRole('button', { name: 'Remove row 3' }));
    await user.click(screen.getByRole('button', { name: 'Save prices' }));

    expect(await screen.findByRole('status')).toHaveTextContent('Prices saved');
    expect(calls.filter((c) => c.method === 'PUT')).toEqual([
      {
        method: 'PUT',
        path: '/api/prices',
        body: {
          rows: [
            { model: 'glm-4.6', input: 0.6, output: 2.4, source: 'https://docs.z.ai/pricing', date: '2026-11-02' },
            { model: 'kimi-*', input: 0.55, output: 2.5, cache_read: 0.15 },
          ],
        },
      },
    ]);
    expect(screen.getAllByTestId('price-row')).toHaveLength(2);
  });

  it('removes every row of yours with an empty list, and says there are none', async () => {
    const calls = stubFetch({ ...baseRoutes([]), ...pricesRoutes([mine]) });
    const user = userEvent.setup();
    renderApp(<PricesEditor />);
    await user.click(await screen.findByRole('button', { name: 'Remove row 1' }));
    expect(screen.getByTestId('prices-empty')).toHaveTextContent('No prices of your own.');
    await user.click(screen.getByRole('button', { name: 'Save prices' }));
    await waitFor(() => expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({ rows: [] }));
  });

  it('checks required cells before saving, and shows a 422 on the row and field it names', async () => {
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/prices': { body: { rows: [mine, ...shipped] } },
      'PUT /api/prices': {
        status: 422,
        body: { error: { code: 'invalid_price', field: 'rows[1].source', message: 'price row 2 (kimi-*): source must be an http:// or https:// address of at most 2048 characters' } },
      },
    });
    const user = userEvent.setup();
    renderApp(<PricesEditor />);
    await user.click(await screen.findByRole('button', { name: 'Add row' }));
    await user.click(screen.getByRole('button', { name: 'Save prices' }));
    expect(screen.getByLabelText('Model or pattern, row 2')).toHaveAccessibleDescription('Required');
    expect(screen.getByLabelText('Input, row 2')).toHaveAccessibleDescription('Required');
    expect(screen.getByLabelText('Cache read, row 2')).not.toHaveAttribute('aria-invalid');
    expect(calls.some((c) => c.method === 'PUT')).toBe(false);

    await user.type(screen.getByLabelText('Model or pattern, row 2'), 'kimi-*');
    await user.type(screen.getByLabelText('Input, row 2'), '-1');
    await user.type(screen.getByLabelText('Output, row 2'), '2');
    await user.click(screen.getByRole('button', { name: 'Save prices' }));
    expect(screen.getByLabelText('Input, row 2')).toHaveAccessibleDescription('A number ≥ 0');

    await user.clear(screen.getByLabelText('Input, row 2'));
    await user.type(screen.getByLabelText('Input, row 2'), '1');
    await user.type(screen.getByLabelText('Source, row 2'), 'ftp://x');
    await user.click(screen.getByRole('button', { name: 'Save prices' }));
    const source = screen.getByLabelText('Source, row 2');
    await waitFor(() => expect(source).toHaveAttribute('aria-invalid', 'true'));
    expect(source).toHaveAccessibleDescription(/source must be an http/);
    expect(screen.getByLabelText('Source, row 1')).not.toHaveAttribute('aria-invalid');
  });

  it('says it in Chinese too', async () => {
    stubFetch({ ...baseRoutes([]), ...pricesRoutes([]) });
    renderApp(<PricesEditor />, 'zh-CN');
    expect(await screen.findByTestId('prices-empty')).toHaveTextContent('还没有你自己的价格');
    expect(screen.getByText('内置价格（2）')).toBeInTheDocument();
  });
});
