import { readFileSync } from 'node:fs';
import { expect, expectNoReload, test } from './fixtures';

interface Bucket {
  key: string;
  requests: number;
  succeeded: number;
  attempts: number;
  errors: number;
}

// docs/BEHAVIOUR.md#statistics, #candidates and #ui: traffic sent through ccmesh shows on the dashboard live, in
// the Stats tab's charts and totals, and the Routing tab explains where a request would go and why not elsewhere.
test('traffic shows on the dashboard and in the usage charts; the routing view explains candidates and exclusions', async ({ ccmesh, openUI, upstream }) => {
  const down = await upstream('fail');
  const good = await upstream('ok');
  await ccmesh.addEndpoint({ name: 'down', base_url: down.url });
  await ccmesh.addEndpoint({ name: 'good', base_url: good.url });
  await ccmesh.addEndpoint({ name: 'codex-only', base_url: good.url, protocol: 'openai-responses', models: ['gpt-5*'] });
  await ccmesh.addEndpoint({ name: 'haiku-only', base_url: good.url, models: ['claude-haiku-*'] });

  const page = await openUI();
  await expect(page.getByRole('tab', { name: 'Dashboard' })).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByText(/^No requests in the last hour\./)).toBeVisible();
  await expect(page.getByTestId('dash-endpoint-good').getByTestId('status-badge')).toHaveText('healthy');

  // The first request fails over from down to good; the sticky cursor then stays on good.
  for (let i = 0; i < 3; i++) {
    const r = await ccmesh.message('claude-sonnet-4-5', i === 1);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ccmesh-endpoint')).toBe('good');
  }

  // The server's own count of the last hour: client requests under the endpoint that answered, attempts apart
  // (docs/BEHAVIOUR.md#statistics).
  let buckets: Bucket[] = [];
  await expect
    .poll(async () => {
      buckets = (await ccmesh.api<{ buckets: Bucket[] }>('GET', '/api/stats?minutes=60')).buckets;
      return buckets.filter((b) => b.key === 'good').reduce((n, b) => n + b.requests, 0);
    })
    .toBe(3);
  const requests = buckets.reduce((n, b) => n + b.requests, 0);
  const succeeded = buckets.reduce((n, b) => n + b.succeeded, 0);
  const attempts = buckets.reduce((n, b) => n + b.attempts, 0);
  const errors = buckets.reduce((n, b) => n + b.errors, 0);
  expect([requests, succeeded]).toEqual([3, 3]);
  expect(errors).toBeGreaterThan(0);
  expect(attempts).toBe(requests + errors);

  // Live, without a reload: the stream's log rows make the dashboard read the stats again.
  await expect(page.getByTestId('dash-requests')).toHaveText(String(requests), { timeout: 5000 });
  // The failover was answered: every request succeeded, whatever its attempts.
  await expect(page.getByTestId('dash-success')).toHaveText('100%');
  await expect(page.getByTestId('tile-requests')).toContainText(`${attempts} attempts`);
  // Each answer reports 5 input and 1 output token.
  await expect(page.getByTestId('dash-tokens-in')).toHaveText('15 in');
  await expect(page.getByTestId('dash-tokens-out')).toHaveText('3 out');
  await expect(page.getByTestId('dash-cost')).not.toBeEmpty();
  await expect(page.getByTestId('dash-chart').locator('path.recharts-rectangle').first()).toBeVisible();
  const goodLine = page.getByTestId('dash-endpoint-good');
  await expect(goodLine).toContainText('3 attempts · 0 errors, last hour');
  await expect(goodLine.getByTestId('sparkline').locator('path.spark-requests')).toHaveAttribute('d', /^M0\.0 .*L/);
  await expect(page.getByTestId('dash-endpoint-down')).toContainText(/\d+ errors?, last hour/);

  // The failover is listed and leads to its timeline in the Logs tab.
  const failover = page.getByTestId('failover');
  await expect(failover).toHaveCount(1);
  await expect(failover).toContainText('answered by good (200)');
  await failover.getByRole('link', { name: 'Show timeline' }).click();
  await expect(page.getByRole('tab', { name: 'Logs' })).toHaveAttribute('aria-selected', 'true');
  const detail = page.getByTestId('log-detail');
  await expect(detail.getByTestId('attempt').first()).toContainText('down');
  await expect(detail.getByTestId('attempt').last()).toContainText('good');

  // Stats: the charts draw the traffic, the totals add it up, the CSV carries the same rows.
  await page.getByRole('tab', { name: 'Stats' }).click();
  await expect(page.getByTestId('stats-chart').locator('path.recharts-line-curve').first()).toBeVisible();
  await expect(page.getByTestId('stats-tokens').locator('path.recharts-rectangle').first()).toBeVisible();
  await expect(page.getByTestId('stats-error-rate').locator('path.recharts-rectangle').first()).toBeVisible();
  const totals = page.getByTestId('stats-totals');
  const goodRow = totals.getByTestId('stats-key-row').filter({ has: page.getByRole('cell', { name: 'good', exact: true }) });
  await expect(goodRow.getByRole('cell')).toHaveText(['good', '3', '100%', '3', '0', '0%', '15', '0', '0', '3', /./, /./]);
  const totalCells = page.getByTestId('stats-total-row').getByRole('cell');
  await expect(totalCells.nth(0)).toHaveText(String(requests));
  await expect(totalCells.nth(1)).toHaveText('100%');
  await expect(totalCells.nth(2)).toHaveText(String(attempts));
  await expect(totalCells.nth(3)).toHaveText(String(errors));

  await page.getByLabel('Group by').selectOption('model');
  await expect(totals).toContainText('claude-sonnet-4-5');
  await page.getByLabel('Range').selectOption('day');
  await expect(totals).toContainText('claude-sonnet-4-5');
  const download = page.waitForEvent('download');
  await page.getByRole('link', { name: 'Download CSV' }).click();
  const file = await download;
  expect(file.suggestedFilename()).toBe('ccmesh-stats-day-model.csv');
  const csv = readFileSync((await file.path())!, 'utf8');
  expect(csv.split('\n')[0]).toBe('start,model,requests,succeeded,attempts,errors,input,output,cache_read,cache_write,reasoning,cost_usd,unpriced,hedges');
  expect(csv).toContain(',claude-sonnet-4-5,');

  // Routing: the matrix of who serves whom, and the dry run in words.
  await page.getByRole('tab', { name: 'Routing' }).click();
  await expect(page.getByTestId('matrix-good-anthropic')).toHaveText('all models');
  await expect(page.getByTestId('matrix-good-openai-chat')).toHaveText('—'); // names no model: never translated to
  await expect(page.getByTestId('matrix-codex-only-anthropic')).toHaveText('gpt-5* translated');
  await expect(page.getByTestId('matrix-codex-only-openai-responses')).toHaveText('gpt-5*');
  await expect(page.getByTestId('matrix-haiku-only-anthropic')).toHaveText('claude-haiku-*');

  await page.getByLabel('Client').selectOption({ label: 'Claude Code / Anthropic' });
  await page.getByLabel('Model').fill('claude-sonnet-4-5');
  await page.getByRole('button', { name: 'Explain' }).click();
  const candidates = page.getByTestId('route-candidates');
  await expect(candidates.getByRole('listitem')).toHaveCount(2);
  await expect(candidates).toContainText('good');
  await expect(candidates).toContainText('down');
  const excluded = page.getByTestId('route-excluded');
  await expect(excluded).toContainText('codex-only speaks OpenAI Responses; model not named');
  await expect(excluded).toContainText('haiku-only model not in its list');

  // No endpoint for this client and model: the outcome says so.
  await page.getByLabel('Client').selectOption({ label: 'OpenAI Chat' });
  await page.getByLabel('Model').fill('gpt-4o');
  await page.getByRole('button', { name: 'Explain' }).click();
  await expect(page.getByTestId('route-outcome')).toContainText('No endpoint would take this request:');
  await expect(page.getByTestId('route-excluded')).toContainText('haiku-only speaks Anthropic; model not named');
  await expectNoReload(page);
});
