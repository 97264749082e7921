import { expect, expectNoReload, test } from './fixtures';

// The server pushes at once; the margin over "within a second" absorbs a loaded CI machine.
const LIVE_MS = 2500;

test.describe('health, live', () => {
  test('force open turns the badge unhealthy, force close turns it healthy, without reload', async ({ ccmesh, openUI, upstream }) => {
    const up = await upstream('ok');
    await ccmesh.addEndpoint({ name: 'manual', base_url: up.url });
    const page = await openUI('#/endpoints');
    const card = page.getByTestId('endpoint-card-manual');
    const badge = card.getByTestId('status-badge');
    await expect(badge).toHaveText('healthy');
    await expect(page.getByTestId('health-count')).toHaveText('1/1 healthy');

    await card.getByRole('button', { name: 'Force open' }).click();
    await expect(badge).toHaveText('unhealthy');
    await expect(card.getByTestId('open-reason')).toHaveText('forced open');
    await expect(page.getByTestId('health-count')).toHaveText('0/1 healthy');

    await card.getByRole('button', { name: 'Force close' }).click();
    await expect(badge).toHaveText('healthy');
    await expect(card.getByTestId('open-reason')).toHaveCount(0);
    await expectNoReload(page);
  });

  test('changes made elsewhere (force open, force close, a new endpoint) arrive through /api/events within a second', async ({ ccmesh, openUI, upstream }) => {
    const up = await upstream('ok');
    const ep = await ccmesh.addEndpoint({ name: 'remote', base_url: up.url });
    const page = await openUI('#/endpoints');
    const card = page.getByTestId('endpoint-card-remote');
    await expect(card.getByTestId('status-badge')).toHaveText('healthy');

    // Another client (the tray, curl) changes state; the open page follows within a second.
    await ccmesh.api('POST', `/api/endpoints/${ep.id}/force-open`);
    await expect(card.getByTestId('status-badge')).toHaveText('unhealthy', { timeout: LIVE_MS });
    await ccmesh.api('POST', `/api/endpoints/${ep.id}/force-close`);
    await expect(card.getByTestId('status-badge')).toHaveText('healthy', { timeout: LIVE_MS });

    // A new endpoint added elsewhere shows up too.
    await ccmesh.addEndpoint({ name: 'second', base_url: up.url });
    await expect(page.getByTestId('endpoint-card-second')).toBeVisible({ timeout: LIVE_MS });
    await expectNoReload(page);
  });

  // docs/BEHAVIOUR.md#pause: the tray's pause goes through the same App call as the API's, and both publish info.
  test('a pause made elsewhere shows at once; the header pauses for 15 minutes and resumes', async ({ ccmesh, openUI, upstream }) => {
    const up = await upstream('ok');
    await ccmesh.addEndpoint({ name: 'one', base_url: up.url });
    const page = await openUI('#/dashboard');
    const tag = page.getByTestId('paused');
    await expect(tag).toHaveCount(0);

    await ccmesh.api('POST', '/api/pause', {});
    await expect(tag).toHaveText('Proxy paused', { timeout: LIVE_MS });
    expect((await ccmesh.message()).status).toBe(503);
    await ccmesh.api('POST', '/api/resume');
    await expect(tag).toHaveCount(0, { timeout: LIVE_MS });

    await page.getByRole('button', { name: 'Pause 15 min' }).click();
    await expect(tag).toHaveText(/^Proxy paused until \d\d:\d\d$/);
    const info = await ccmesh.api<{ paused: boolean; paused_until: string }>('GET', '/api/info');
    expect(info.paused).toBe(true);
    const left = Date.parse(info.paused_until) - Date.now();
    expect(left).toBeGreaterThan(14 * 60_000);
    expect(left).toBeLessThanOrEqual(15 * 60_000);
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect(tag).toHaveCount(0);
    expect((await ccmesh.api<{ paused: boolean }>('GET', '/api/info')).paused).toBe(false);
    expect((await ccmesh.message()).status).toBe(200);
    await expectNoReload(page);
  });

  test('a rate-limited endpoint shows unhealthy with a live countdown to half-open', async ({ ccmesh, openUI, upstream }) => {
    const limited = await upstream('ratelimit');
    const good = await upstream('ok');
    await ccmesh.addEndpoint({ name: 'limited', base_url: limited.url });
    await ccmesh.addEndpoint({ name: 'good', base_url: good.url });
    const page = await openUI('#/endpoints');
    const card = page.getByTestId('endpoint-card-limited');
    await expect(card.getByTestId('status-badge')).toHaveText('healthy');

    const r = await ccmesh.message();
    expect(r.status).toBe(200);
    await expect(card.getByTestId('status-badge')).toHaveText('unhealthy');
    await expect(card.getByTestId('open-reason')).toHaveText('rate limited');
    const countdown = card.getByRole('timer');
    await expect(countdown).toHaveText(/half-open in \d+ s/);
    const first = Number((await countdown.textContent())!.match(/(\d+) s/)![1]);
    await expect.poll(async () => Number((await countdown.textContent())!.match(/(\d+) s/)?.[1] ?? 99), { timeout: 5000 }).toBeLessThan(first);
    await expectNoReload(page);
  });

  test('reconnects by itself after the server restarts', async ({ ccmesh, openUI, upstream }) => {
    const up = await upstream('ok');
    await ccmesh.addEndpoint({ name: 'before', base_url: up.url });
    const page = await openUI('#/endpoints');
    await expect(page.getByTestId('endpoint-card-before')).toBeVisible();

    const port = ccmesh.port;
    await ccmesh.stop();
    await ccmesh.start(port);
    await ccmesh.addEndpoint({ name: 'after', base_url: up.url });
    await expect(page.getByTestId('endpoint-card-after')).toBeVisible({ timeout: 10_000 });
    await expectNoReload(page);
  });
});
