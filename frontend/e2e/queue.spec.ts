import type { Locator, Page } from '@playwright/test';
import { expect, expectNoReload, test } from './fixtures';

/** A mouse drag in small steps, as dnd-kit's pointer sensor needs movement to start. */
async function drag(page: Page, from: Locator, to: Locator, where: 'above' | 'below' | 'center' = 'center') {
  const a = (await from.boundingBox())!;
  const b = (await to.boundingBox())!;
  // Past the target row's edge, so the row being dragged settles beside it, as a user would
  // drag until the preview shows the row in its new place.
  const y = where === 'above' ? b.y + 4 : where === 'below' ? b.y + b.height * 1.3 : b.y + b.height / 2;
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(a.x + a.width / 2 + 8, a.y + a.height / 2 + 8, { steps: 4 });
  await page.mouse.move(b.x + b.width / 2, y, { steps: 15 });
  await page.mouse.move(b.x + b.width / 2, y + 1, { steps: 2 });
  await page.mouse.up();
}

/**
 * Keyboard drag: Space picks up, arrows move, Space drops. Each step waits for
 * the feedback a screen reader gets: the pressed row, then dnd-kit's live region.
 */
async function keyboardMove(page: Page, row: Locator, keys: string[]) {
  const name = (await row.getAttribute('aria-label'))!.replace(/^Move /, '');
  const live = page.locator('[id^="DndLiveRegion"]');
  await row.focus();
  await page.keyboard.press('Space');
  await expect(page.locator('[aria-pressed="true"]')).toHaveCount(1); // picked up
  // dnd-kit's keyboard sensor starts listening for arrows in a setTimeout(0)
  // queued at pick-up; a timer queued now runs after it.
  await page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
  for (const key of keys) {
    const before = await live.allTextContents();
    await page.keyboard.press(key);
    await expect.poll(() => live.allTextContents()).not.toEqual(before);
  }
  await page.keyboard.press('Space');
  await expect(live.filter({ hasText: `Dropped ${name}.` })).toHaveCount(1);
}

const saved = (page: Page, path: string) => page.waitForResponse((r) => r.url().endsWith(path) && r.request().method() === 'PUT' && r.ok());

test('fast queue: drag two endpoints in, reorder by mouse and by keyboard, order read back from the API', async ({ ccmesh, openUI, upstream }) => {
  const up = await upstream('ok');
  for (const name of ['alpha', 'bravo', 'charlie']) await ccmesh.addEndpoint({ name, base_url: up.url });
  const page = await openUI();
  await page.getByRole('tab', { name: 'Fast queue' }).click();

  const fast = page.getByTestId('fast-queue');
  const other = page.getByTestId('other-queue');
  await expect(fast).toContainText('The fast queue is empty: all enabled endpoints are used');
  await expect(other.getByRole('button')).toHaveCount(3);

  // Mouse: alpha, then bravo below it, into the fast queue.
  let put = saved(page, '/api/fast-queue');
  await drag(page, other.getByRole('button', { name: 'Move alpha' }), fast);
  await put;
  await expect(fast.getByRole('button')).toHaveCount(1);
  put = saved(page, '/api/fast-queue');
  await drag(page, other.getByRole('button', { name: 'Move bravo' }), fast.getByRole('button', { name: 'Move alpha' }), 'below');
  await put;
  await expect.poll(() => ccmesh.fastQueue()).toEqual(['alpha', 'bravo']);
  await expect(fast.getByRole('button')).toHaveText([/alpha/, /bravo/]);

  // Mouse: bravo above alpha.
  put = saved(page, '/api/fast-queue');
  await drag(page, fast.getByRole('button', { name: 'Move bravo' }), fast.getByRole('button', { name: 'Move alpha' }), 'above');
  await put;
  await expect.poll(() => ccmesh.fastQueue()).toEqual(['bravo', 'alpha']);

  // Keyboard: pick up bravo, move it down one, drop.
  put = saved(page, '/api/fast-queue');
  await keyboardMove(page, fast.getByRole('button', { name: 'Move bravo' }), ['ArrowDown']);
  await put;
  await expect.poll(() => ccmesh.fastQueue()).toEqual(['alpha', 'bravo']);
  await expect(fast.getByRole('button')).toHaveText([/alpha/, /bravo/]);

  // Keyboard: charlie from the other list into the queue.
  put = saved(page, '/api/fast-queue');
  await keyboardMove(page, other.getByRole('button', { name: 'Move charlie' }), ['ArrowLeft']);
  await put;
  await expect.poll(async () => (await ccmesh.fastQueue()).sort()).toEqual(['alpha', 'bravo', 'charlie']);
  await expect(other).toContainText('No other enabled endpoints.');

  // The full list reorders the same way (PUT /api/order).
  const full = page.getByTestId('full-order');
  put = saved(page, '/api/order');
  await keyboardMove(page, full.getByRole('button', { name: 'Move alpha' }), ['ArrowDown', 'ArrowDown']);
  await put;
  await expect
    .poll(async () => (await ccmesh.endpoints()).sort((a, b) => a.sort_order - b.sort_order).map((e) => e.name))
    .toEqual(['bravo', 'charlie', 'alpha']);
  await expectNoReload(page);
});
