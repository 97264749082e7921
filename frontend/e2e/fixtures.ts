import { test as base, expect, type Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ccmesh } from './ccmesh';
import { startUpstream, type Mode, type Upstream } from './fake-upstream';

export const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), 'artifacts');

interface Fixtures {
  ccmesh: Ccmesh;
  upstream: (mode: Mode) => Promise<Upstream>;
  /** Opens the UI through the start-up link and marks the document to detect reloads. */
  openUI: (hash?: string) => Promise<Page>;
}

export const test = base.extend<Fixtures>({
  ccmesh: async ({}, use, info) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const c = new Ccmesh(join(ARTIFACTS, `ccmesh-${info.titlePath.slice(1).join('-').replace(/[^\w.-]+/g, '_')}.log`));
    await c.start();
    await use(c);
    await c.dispose();
  },
  upstream: async ({}, use) => {
    const started: Upstream[] = [];
    await use(async (mode) => {
      const u = await startUpstream(mode);
      started.push(u);
      return u;
    });
    await Promise.all(started.map((u) => u.close()));
  },
  openUI: async ({ page, ccmesh }, use) => {
    // The UI is served with a strict Content-Security-Policy; anything it
    // blocks (an inline style or script, a foreign request) fails the test.
    const blocked: string[] = [];
    page.on('console', (msg) => {
      if (msg.type() === 'error' && /Content[- ]Security[- ]Policy/i.test(msg.text())) blocked.push(msg.text());
    });
    await use(async (hash = '') => {
      await page.goto(ccmesh.uiURL + hash);
      await expect(page.getByRole('tablist')).toBeVisible();
      await page.evaluate(() => {
        (window as unknown as { __noReload: boolean }).__noReload = true;
      });
      return page;
    });
    expect(blocked, 'CSP violations').toEqual([]);
  },
});

/** Fails if the page was reloaded since openUI. */
export async function expectNoReload(page: Page): Promise<void> {
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
}

export { expect };
