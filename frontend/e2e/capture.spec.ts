// docs/BEHAVIOUR.md#capture-and-resend, end to end: capture on through Settings, a streamed request captured,
// shown and resent to another endpoint from the log, and no secret — the endpoints' keys or the client's own —
// on the page, in the captures the API serves, or in the database beyond the endpoints' own rows.
import { join } from 'node:path';
import { expect, expectNoReload, test } from './fixtures';
import { pagesWith } from './sqlite-pages';

const keyAlpha = 'sk-secret-xyz-alpha-0123456789abcdef';
const keyBeta = 'sk-secret-xyz-beta-fedcba9876543210';
const clientKey = 'sk-client-own-key-5a5a5a5a5a5a5a5a';

test('capture all: a request shown in the log, resent to another endpoint, and no key kept anywhere', async ({ ccmesh, openUI, upstream }) => {
  // The upstreams put the key they were sent into the answer's text, as real ones do in their errors.
  const upAlpha = await upstream('echo');
  const upBeta = await upstream('echo');
  await ccmesh.addEndpoint({ name: 'alpha', base_url: upAlpha.url, api_key: keyAlpha });
  await ccmesh.addEndpoint({ name: 'beta', base_url: upBeta.url, api_key: keyBeta });

  const page = await openUI('#/settings');
  const capture = page.getByLabel('Capture requests');
  await expect(capture).toHaveValue('off');
  await capture.selectOption('all');
  await expect(page.getByTestId('capture-help')).toContainText('API keys, tokens and cookies are removed before anything is stored.');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Settings saved' })).toBeVisible();
  expect((await ccmesh.api<{ capture: string }>('GET', '/api/settings')).capture).toBe('all');

  // A client with its own key, which it also pastes into its prompt.
  const r = await ccmesh.message('claude-sonnet-4-5', true, { apiKey: clientKey, prompt: `ping; my key is ${clientKey}` });
  expect(r.status).toBe(200);
  expect(r.headers.get('x-ccmesh-endpoint')).toBe('alpha');
  // The log writer commits within 200 ms.
  const logged = async () => (await ccmesh.api<{ items: Array<{ id: number }> }>('GET', '/api/logs?limit=1')).items;
  await expect.poll(async () => (await logged()).length).toBe(1);
  const [original] = await logged();

  await page.getByRole('tab', { name: 'Logs' }).click();
  await page.getByRole('button', { name: `Request ${original.id}` }).click();
  const detail = page.getByTestId('log-detail');
  const request = detail.getByTestId('capture-request');
  await expect(request.getByTestId('capture-request-body')).toContainText('"model": "claude-sonnet-4-5"'); // pretty-printed
  await expect(request.getByTestId('capture-request-body')).toContainText('ping; my key is sk-…5a5a');
  await expect(request.getByRole('table', { name: 'Request headers' })).toContainText('anthropic-version');
  await expect(request.getByRole('table', { name: 'Request headers' })).not.toContainText('x-api-key');
  const response = detail.getByTestId('capture-response');
  await expect(response.getByTestId('capture-status')).toHaveText('status 200');
  // The stream's text deltas joined; the key alpha's upstream echoed is masked.
  await expect(response.getByTestId('capture-response-body')).toHaveText('pong (you sent the key sk-…cdef)');
  await expect(response.getByTestId('capture-raw-events')).toContainText(/Raw events \(\d+\)/);

  // Resend to beta, without streaming: the result beside the original, linking to the new row.
  const form = detail.getByTestId('resend-form');
  await form.getByLabel('Send to').selectOption('beta');
  await form.getByRole('switch', { name: 'Stream' }).uncheck();
  await form.getByRole('button', { name: 'Resend' }).click();
  const result = form.getByTestId('resend-result');
  await expect(result).toContainText('Resent: status 200 from beta.');
  const link = result.getByRole('link', { name: /^Open request #\d+$/ });
  const resentId = Number((await link.getAttribute('href'))!.replace('#/logs/', ''));
  expect(resentId).toBeGreaterThan(original.id);

  // The new row arrives live in the list, marked.
  const newRow = page.getByRole('button', { name: `Request ${resentId}` });
  await expect(newRow).toBeVisible();
  await expect(newRow.getByTestId('row-resent-from')).toHaveText(`resent from #${original.id}`);
  await expect(newRow).toContainText('beta');

  await link.click();
  await expect(detail).toHaveAccessibleName(`Request ${resentId}`);
  await expect(detail.getByTestId('resent-from')).toHaveText(`resent from #${original.id}`);
  await expect(detail.getByTestId('capture-response-body')).toContainText('"text": "pong (you sent the key sk-…3210)"');
  await expect(detail.getByTestId('attempt').first()).toContainText('beta');
  await detail.getByTestId('resent-from').getByRole('link').click();
  await expect(detail).toHaveAccessibleName(`Request ${original.id}`);
  await expectNoReload(page);

  const secrets = [keyAlpha, keyBeta, clientKey];
  // Not on the page.
  const html = await page.content();
  for (const s of secrets) expect(html, `page holds ${s}`).not.toContain(s);

  // Not in what the API serves of either row: the capture (decompressed), the row and the curl command.
  for (const id of [original.id, resentId]) {
    for (const path of [`/api/logs/${id}/capture`, `/api/logs/${id}`, `/api/logs/${id}/curl`]) {
      const text = JSON.stringify(await ccmesh.api('GET', path));
      for (const s of secrets) expect(text, `${path} holds ${s}`).not.toContain(s);
    }
  }
  const captured = await ccmesh.api<{ request: { headers: Record<string, string> } }>('GET', `/api/logs/${original.id}/capture`);
  expect(Object.keys(captured.request.headers)).not.toContain('x-api-key');

  // Not in the database or its WAL, while running and after a clean stop: the client's key nowhere, an
  // endpoint's key only on the pages that hold its own endpoint row (its base URL beside it).
  const db = join(ccmesh.dataDir, 'ccmesh.db');
  const checkDatabase = () => {
    expect(pagesWith(db, clientKey), 'pages with the client key').toEqual([]);
    for (const [key, url] of [[keyAlpha, upAlpha.url], [keyBeta, upBeta.url]]) {
      const hits = pagesWith(db, key);
      expect(hits.length, `the endpoint row with ${key}`).toBeGreaterThan(0);
      for (const h of hits) expect(h.bytes.includes(url), `${key} on ${h.file} page ${h.page}, which is not its endpoint row`).toBe(true);
    }
  };
  checkDatabase();
  await ccmesh.stop();
  checkDatabase();
});
