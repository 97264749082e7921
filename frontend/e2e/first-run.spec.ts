import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, expectNoReload, test } from './fixtures';

interface LogRow {
  id: number;
  endpoint: string;
  history?: { endpoint: string }[]; // the attempts, in order
}

// One first-time user's path through the product, start to end (docs/BEHAVIOUR.md#presets, #statistics,
// #routing, #manual-control and #connect-codex): an empty ccmesh, an endpoint added from a preset and
// tested, traffic on the dashboard, the routing view's answer checked against what the proxy then does,
// a breaker's history, and Codex connected in a HOME of its own.
test('first run: preset, test, dashboard, why this route, breaker history, Connect Codex', async ({ ccmesh, openUI, upstream }) => {
  const good = await upstream('echo');
  const down = await upstream('fail');
  // ccmesh runs with HOME set to its temp data dir (ccmesh.ts): Codex's file lives there, with the user's own lines.
  const codexDir = join(ccmesh.dataDir, '.codex');
  mkdirSync(codexDir, { recursive: true });
  const codexFile = join(codexDir, 'config.toml');
  const mine = '# my settings\nmodel = "gpt-5"\n\n[profiles.work]\nmodel = "o3"\n';
  writeFileSync(codexFile, mine);

  const page = await openUI();
  const welcome = page.getByTestId('dashboard-welcome');
  await expect(welcome).toBeVisible();
  await welcome.getByRole('button', { name: 'Add endpoint' }).click();

  // Two providers from the preset list. The tests run offline, so each base URL is then pointed at a fake
  // upstream; what a preset fills in is checked in endpoints.spec.ts.
  const addFromPreset = async (preset: string, name: string, url: string, key: string) => {
    await page.getByTestId('preset-picker').getByRole('button', { name: preset, exact: true }).click();
    const form = page.getByRole('form', { name: 'Add endpoint' });
    await expect(form.getByLabel('Name', { exact: true })).toHaveValue(name);
    await form.getByLabel('Base URL').fill(url);
    await form.getByLabel('API key').fill(key);
    await form.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByTestId(`endpoint-card-${name}`)).toBeVisible();
  };
  await addFromPreset('DeepSeek', 'deepseek', good.url, 'sk-first-run-deepseek-1234');
  const deepseek = page.getByTestId(`endpoint-card-deepseek`);
  await deepseek.getByRole('button', { name: 'Test' }).click();
  await expect(deepseek.getByRole('status')).toContainText(/^OK 200 in \d+ ms/);

  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await addFromPreset('Zhipu / GLM (z.ai)', 'zhipu', down.url, 'sk-first-run-zhipu-5678');

  // The dashboard follows the traffic live.
  await page.getByRole('tab', { name: 'Dashboard' }).click();
  await expect(page.getByTestId('dash-endpoint-deepseek').getByTestId('status-badge')).toHaveText('healthy');
  for (let i = 0; i < 2; i++) expect((await ccmesh.message('claude-sonnet-4-5')).status).toBe(200);
  await expect(page.getByTestId('dash-endpoint-deepseek')).toContainText(/[1-9]\d* attempts? ·/);
  await expect(page.getByTestId('dash-requests')).not.toHaveText('0');

  // Why does a Claude Code request for a haiku model go where it goes? Then send one: the attempts follow
  // the candidates in the order the view gave.
  await page.getByRole('tab', { name: 'Routing' }).click();
  await page.getByLabel('Client').selectOption({ label: 'Claude Code / Anthropic' });
  await page.getByLabel('Model').fill('claude-haiku-4-5');
  await page.getByRole('button', { name: 'Explain' }).click();
  const candidates = page.getByTestId('route-candidates').getByRole('listitem').locator('strong');
  await expect(candidates).toHaveCount(2);
  const order = await candidates.allTextContents();
  expect(order.sort()).toEqual(['deepseek', 'zhipu']);
  const shown = await candidates.allTextContents();
  const reply = await ccmesh.message('claude-haiku-4-5');
  expect(reply.status).toBe(200);
  expect(reply.headers.get('x-ccmesh-endpoint')).toBe('deepseek');
  const [row] = (await ccmesh.api<{ items: LogRow[] }>('GET', '/api/logs?limit=1')).items;
  const detail = await ccmesh.api<LogRow>('GET', `/api/logs/${row.id}`);
  const tried = (detail.history ?? []).map((a) => a.endpoint);
  expect(tried).toEqual(shown.slice(0, tried.length)); // down fails over to good: both tried when zhipu leads
  expect(tried.at(-1)).toBe('deepseek');

  // Forced open from its card, zhipu's breaker history says so, and the routing view leaves it out.
  await page.getByRole('tab', { name: 'Endpoints' }).click();
  const zhipu = page.getByTestId('endpoint-card-zhipu');
  await zhipu.getByRole('button', { name: 'Force open' }).click();
  await expect(zhipu.getByTestId('status-badge')).toHaveText('unhealthy');
  await zhipu.getByTestId('breaker-history').locator('summary').click();
  await expect(zhipu.getByTestId('breaker-event').first()).toContainText('forced open');
  await page.getByRole('tab', { name: 'Routing' }).click();
  await page.getByLabel('Model').fill('claude-haiku-4-5');
  await page.getByRole('button', { name: 'Explain' }).click();
  await expect(page.getByTestId('route-candidates').getByRole('listitem').locator('strong').first()).toHaveText('deepseek');
  expect((await ccmesh.message('claude-haiku-4-5')).headers.get('x-ccmesh-endpoint')).toBe('deepseek');

  // Connect Codex: the preview first, then the file written with the user's own lines intact.
  await page.getByRole('tab', { name: 'Settings' }).click();
  const codex = page.getByRole('region', { name: 'Connect Codex' });
  await codex.getByRole('button', { name: 'Show the change' }).click();
  await expect(page.getByTestId('codex-diff').locator('.diff-added').first()).toBeVisible();
  expect(readFileSync(codexFile, 'utf8')).toBe(mine);
  await page.getByRole('button', { name: 'Write config.toml' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Backup kept at' })).toBeVisible();
  const written = readFileSync(codexFile, 'utf8');
  expect(written).toContain('model_provider = "ccmesh"');
  expect(written).toContain('[model_providers.ccmesh]');
  expect(written).toContain('# my settings');
  expect(written).toContain('[profiles.work]\nmodel = "o3"');
  await expectNoReload(page);
});
