import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from './fixtures';

/** A relay's balance route in new-api's shape (docs/BEHAVIOUR.md#balance): quota units, 500 000 = $1, of $10. */
interface Relay {
  url: string;
  left: number;
  status: number;
  close(): Promise<void>;
}

async function startRelay(left: number): Promise<Relay> {
  const relay: Relay = { url: '', left, status: 200, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    res.setHeader('content-type', 'application/json');
    if (relay.status !== 200) {
      res.writeHead(relay.status);
      res.end(JSON.stringify({ success: false, message: 'relay trouble' }));
      return;
    }
    if (path === '/api/usage/token/' || path === '/cny') {
      res.end(JSON.stringify({ code: true, data: { total_granted: 5_000_000, total_used: 5_000_000 - relay.left, total_available: relay.left, unlimited_quota: false } }));
      return;
    }
    res.writeHead(404);
    res.end('{}');
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  relay.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  relay.close = () => new Promise((ok) => server.close(() => ok()));
  return relay;
}

// docs/BEHAVIOUR.md#balance and #ui: each endpoint card shows what it has left, a refresh reads again (nothing left
// takes it out of routing, a failed read is unknown, never 0), and the dashboard sums the known readings per currency.
test.describe('balances', () => {
  const relays: Relay[] = [];
  test.afterEach(async () => {
    await Promise.all(relays.splice(0).map((r) => r.close()));
  });

  test('the card shows the reading and its refresh; the dashboard totals each currency', async ({ ccmesh, openUI }) => {
    const rich = await startRelay(3_000_000); // $6
    const poor = await startRelay(1_000_000); // $2, under its $5 threshold
    const yuan = await startRelay(2_500_000); // ¥5 through a custom connector
    relays.push(rich, poor, yuan);
    await ccmesh.addEndpoint({ name: 'rich', base_url: rich.url, api_key: 'sk-rich-0123456789', balance: { template: 'newapi' } });
    const poorEp = await ccmesh.addEndpoint({ name: 'poor', base_url: poor.url, api_key: 'sk-poor-0123456789', balance: { template: 'newapi', low_threshold: 5 } });
    await ccmesh.addEndpoint({
      name: 'yuan',
      base_url: yuan.url,
      api_key: 'sk-yuan-0123456789',
      balance: { url: '{{origin}}/cny', paths: { remaining: 'data.total_available' }, multiplier: 0.000002, unit: 'CNY' },
    });
    // Each connector is read once on save, off the request path.
    await expect
      .poll(async () => (await ccmesh.api<{ balances: { reading: unknown }[] }>('GET', '/api/balances')).balances.filter((b) => b.reading).length)
      .toBe(3);

    const page = await openUI();
    const tile = page.getByTestId('tile-balance');
    await expect(tile.getByTestId('dash-balance-USD')).toHaveText('$8.00');
    // The second currency's span starts with the separator.
    await expect(tile.getByTestId('dash-balance-CNY')).toHaveText(/^ · CN¥5\.00$/);
    await expect(tile).toContainText('3 endpoints with a connector · 1 low');

    await page.getByRole('tab', { name: 'Endpoints' }).click();
    const card = page.getByTestId('endpoint-card-poor');
    const bal = card.getByTestId('endpoint-balance');
    await expect(bal.getByTestId('balance-remaining')).toHaveText('$2.00');
    await expect(bal).toContainText('of $10.00');
    await expect(bal.getByTestId('balance-low')).toHaveText('Low');
    await expect(bal.getByRole('meter', { name: 'Share left' })).toHaveAttribute('aria-valuenow', '20');
    await expect(page.getByTestId('endpoint-card-rich').getByTestId('balance-remaining')).toHaveText('$6.00');
    await expect(page.getByTestId('endpoint-card-rich').getByTestId('balance-low')).toHaveCount(0);

    // Spent: the refresh shows $0.00 and the breaker holds the endpoint out of routing.
    poor.left = 0;
    await bal.getByTestId('balance-refresh').click();
    await expect(bal.getByTestId('balance-remaining')).toHaveText('$0.00');
    await expect(card.getByTestId('status-badge').first()).toHaveText('unhealthy');
    const route = await ccmesh.api<{ excluded: { endpoint: string; balance?: boolean }[] }>('GET', '/api/route?protocol=anthropic&model=claude-sonnet-4-5');
    expect(route.excluded.find((e) => e.endpoint === 'poor')?.balance).toBe(true);

    // A failed read is unknown with the answer's own words, never 0; it changes nothing in routing.
    poor.status = 503;
    await bal.getByTestId('balance-refresh').click();
    await expect(bal.getByTestId('balance-remaining')).toHaveText('Unknown');
    await expect(bal.getByTestId('balance-error')).toContainText('503');
    await expect(card.getByTestId('status-badge').first()).toHaveText('unhealthy');

    // Credit again: the card is healthy and the dashboard's total counts it.
    poor.status = 200;
    poor.left = 2_000_000; // $4
    await bal.getByTestId('balance-refresh').click();
    await expect(bal.getByTestId('balance-remaining')).toHaveText('$4.00');
    await expect(card.getByTestId('status-badge').first()).toHaveText('healthy');
    const stored = await ccmesh.api<{ reading: { remaining: number } }>('GET', `/api/endpoints/${poorEp.id}/balance`);
    expect(stored.reading.remaining).toBe(4);
    await page.getByRole('tab', { name: 'Dashboard' }).click();
    await expect(page.getByTestId('tile-balance').getByTestId('dash-balance-USD')).toHaveText('$10.00');
    expect(await page.content()).not.toContain('sk-poor-0123456789');
  });
});
