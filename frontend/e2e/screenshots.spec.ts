// Screenshots of every screen, light and dark, for review and the README.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from '@playwright/test';
import { ARTIFACTS, expect, test } from './fixtures';

const SCREENS = [
  { tab: 'Dashboard', file: 'dashboard' },
  { tab: 'Endpoints', file: 'endpoints' },
  { tab: 'Fast queue', file: 'fast-queue' },
  { tab: 'Routing', file: 'routing' },
  { tab: 'Logs', file: 'logs' },
  { tab: 'Stats', file: 'stats' },
  { tab: 'Settings', file: 'settings' },
] as const;

// The README shows these two.
const README_SHOTS = ['dashboard-light.png', 'endpoints-light.png', 'routing-dark.png', 'logs-dark.png'];

/**
 * The snake_case words the page shows outside code (file blocks, commands and the like are code): an internal
 * identifier such as half_open_probe_in_flight that reached the screen untranslated.
 */
async function internalWords(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found = new Set<string>();
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || el.closest('code, pre, kbd, script, style, [hidden], .visually-hidden')) continue;
      if (!el.getClientRects().length) continue; // not rendered (a closed details, a hidden panel)
      for (const m of n.textContent?.match(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g) ?? []) found.add(m);
    }
    return [...found];
  });
}

test('screenshots of each screen in light and dark', async ({ ccmesh, openUI, upstream }) => {
  // First the screens a new user meets: the welcome and the provider presets.
  mkdirSync(ARTIFACTS, { recursive: true });
  const first = await openUI();
  for (const scheme of ['light', 'dark'] as const) {
    await first.emulateMedia({ colorScheme: scheme });
    await first.getByRole('tab', { name: 'Dashboard' }).click();
    await expect(first.getByTestId('dashboard-welcome')).toBeVisible();
    await first.screenshot({ path: join(ARTIFACTS, `welcome-${scheme}.png`), fullPage: true });
    await first.getByTestId('dashboard-welcome').getByRole('button', { name: 'Add endpoint' }).click();
    await expect(first.getByTestId('preset-picker')).toBeVisible();
    await first.screenshot({ path: join(ARTIFACTS, `presets-${scheme}.png`), fullPage: true });
  }

  const down = await upstream('fail');
  const good = await upstream('ok');
  const limited = await upstream('ratelimit');
  // The failing relay leads the fast queue, so the log shows a failover.
  await ccmesh.addEndpoint({ name: 'relay-eu', base_url: down.url, api_key: 'sk-relay-demo-91c2', fast: true });
  await ccmesh.addEndpoint({ name: 'anthropic-official', base_url: good.url, api_key: 'sk-ant-demo-7f3a', fast: true, models: ['claude-*'] });
  await ccmesh.addEndpoint({ name: 'relay-backup', base_url: limited.url, api_key: 'sk-backup-demo-0d4e' });
  const glm = await ccmesh.addEndpoint({ name: 'glm-gateway', base_url: good.url, protocol: 'openai-chat', model_map: { 'claude-3-5-haiku*': 'glm-4.5-air' } });
  await ccmesh.addEndpoint({ name: 'old-key', base_url: good.url, enabled: false });
  await ccmesh.api('POST', `/api/endpoints/${glm.id}/force-open`);
  for (let i = 0; i < 4; i++) await ccmesh.message('claude-sonnet-4-5', i % 2 === 0);

  const page = first;
  await page.goto(ccmesh.uiURL);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const s of SCREENS) {
      await page.getByRole('tab', { name: s.tab }).click();
      if (s.file === 'logs') {
        await page.getByTestId('log-row').last().click(); // the oldest: the one that failed over
        await expect(page.getByTestId('attempt').first()).toBeVisible();
      }
      if (s.file === 'stats') await expect(page.getByTestId('stats-chart').locator('svg').first()).toBeVisible();
      if (s.file === 'dashboard') await expect(page.getByTestId('dash-chart').locator('svg').first()).toBeVisible();
      if (s.file === 'routing') {
        await page.getByLabel('Model').fill('claude-3-5-haiku-latest');
        await page.getByRole('button', { name: 'Explain' }).click();
        await expect(page.getByTestId('route-result')).toBeVisible();
      }
      await page.waitForTimeout(300); // let the chart and transitions settle before the picture
      await page.screenshot({ path: join(ARTIFACTS, `${s.file}-${scheme}.png`), fullPage: true });
      if (scheme === 'light') expect(await internalWords(page), `${s.tab}: internal identifiers on screen`).toEqual([]);
    }
  }
  const docs = resolve(ARTIFACTS, '../../../docs/screenshots');
  mkdirSync(docs, { recursive: true });
  // Copied when missing or asked for (UPDATE_SCREENSHOTS=1): every run has a
  // new port in the header, and committed pictures should not churn on each test run.
  for (const f of README_SHOTS) {
    if (process.env.UPDATE_SCREENSHOTS === '1' || !existsSync(join(docs, f))) copyFileSync(join(ARTIFACTS, f), join(docs, f));
  }
});
