import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, expectNoReload, test } from './fixtures';

test('settings save through the API; Connect Claude Code shows the change, then writes it with a backup', async ({ ccmesh, openUI }) => {
  // ccmesh runs with HOME set to its temp data dir (see ccmesh.ts).
  const file = join(ccmesh.dataDir, '.claude', 'settings.json');
  mkdirSync(join(ccmesh.dataDir, '.claude'), { recursive: true });
  writeFileSync(file, JSON.stringify({ model: 'opus', env: { DISABLE_TELEMETRY: '1' } }, null, 2));

  const page = await openUI('#/settings');
  await expect(page.getByRole('heading', { name: 'Settings' })).toBeVisible();
  await page.getByLabel('Strategy').selectOption('priority');
  await page.getByLabel('Keep days').fill('7');
  // A bad address is refused inline and nothing is saved.
  await page.getByLabel('Listen address').fill('nonsense');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect(page.getByRole('alert').filter({ hasText: 'listen must be host:port' })).toBeVisible();
  await page.getByLabel('Listen address').fill('127.0.0.1:4999');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Settings saved' })).toBeVisible();
  const s = await ccmesh.api<{ strategy: string; log_retention_days: number; listen: string }>('GET', '/api/settings');
  expect(s).toMatchObject({ strategy: 'priority', log_retention_days: 7, listen: '127.0.0.1:4999' });

  await expect(page.getByTestId('claude-exports')).toContainText(`ANTHROPIC_BASE_URL='${ccmesh.base}'`);
  await page.getByRole('region', { name: 'Connect Claude Code' }).getByRole('button', { name: 'Show the change' }).click();
  await expect(page.getByTestId('claude-current')).toContainText('DISABLE_TELEMETRY');
  await expect(page.getByTestId('claude-proposed')).toContainText(ccmesh.base);
  expect(readFileSync(file, 'utf8')).not.toContain('ANTHROPIC_BASE_URL'); // nothing written by the preview

  await page.getByRole('button', { name: 'Write settings.json' }).click();
  const done = page.getByRole('status').filter({ hasText: 'Backup kept at' });
  await expect(done).toBeVisible();
  const written = JSON.parse(readFileSync(file, 'utf8')) as { model: string; env: Record<string, string> };
  expect(written).toMatchObject({ model: 'opus', env: { DISABLE_TELEMETRY: '1', ANTHROPIC_BASE_URL: ccmesh.base } });
  const backup = (await done.textContent())!.replace(/^.*Backup kept at /, '').trim();
  expect(existsSync(backup)).toBe(true);
  expect(readFileSync(backup, 'utf8')).not.toContain('ANTHROPIC_BASE_URL');
  await expectNoReload(page);
});

test('Connect Codex shows the provider block, previews the config.toml change as a diff, then writes it with a backup', async ({ ccmesh, openUI }) => {
  // ccmesh runs with HOME set to its temp data dir (see ccmesh.ts); CODEX_HOME is not passed on.
  const dir = join(ccmesh.dataDir, '.codex');
  const file = join(dir, 'config.toml');
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, '# mine\nmodel = "gpt-5"\nmodel_provider = "openai"\n\n[tui]\nnotifications = true\n');

  const page = await openUI('#/settings');
  const block = page.getByTestId('codex-block');
  await expect(block).toContainText('[model_providers.ccmesh]');
  await expect(block).toContainText(`base_url = "${ccmesh.base}/v1"`);
  await expect(page.getByTestId('codex-exports')).toContainText('export CCMESH_API_KEY=');
  await page.getByRole('region', { name: 'Connect Codex' }).getByRole('button', { name: 'Show the change' }).click();
  const diff = page.getByTestId('codex-diff');
  await expect(diff.locator('.diff-removed')).toHaveText(['- model_provider = "openai"']);
  await expect(diff.locator('.diff-added').first()).toHaveText('+ model_provider = "ccmesh"');
  await expect(diff.locator('.diff-same').first()).toHaveText('  # mine');
  expect(readFileSync(file, 'utf8')).toContain('model_provider = "openai"'); // nothing written by the preview

  await page.getByRole('button', { name: 'Write config.toml' }).click();
  const done = page.getByRole('status').filter({ hasText: 'Backup kept at' });
  await expect(done).toBeVisible();
  const written = readFileSync(file, 'utf8');
  expect(written).toContain('model_provider = "ccmesh"');
  expect(written).toContain('[model_providers.ccmesh]');
  expect(written).toContain('[tui]\nnotifications = true');
  const backup = (await done.textContent())!.replace(/^.*Backup kept at /, '').trim();
  expect(readFileSync(backup, 'utf8')).toContain('model_provider = "openai"');
  await expect(page.getByTestId('codex-unchanged')).toBeVisible();
});

