import { expect, expectNoReload, test } from './fixtures';

test('traffic against a failing upstream makes a live log row whose timeline shows the failover', async ({ ccmesh, openUI, upstream }) => {
  const down = await upstream('fail');
  const good = await upstream('ok');
  await ccmesh.addEndpoint({ name: 'down', base_url: down.url });
  await ccmesh.addEndpoint({ name: 'good', base_url: good.url });
  const page = await openUI();
  await page.getByRole('tab', { name: 'Logs' }).click();
  await expect(page.getByText(/^No requests logged yet\./)).toBeVisible();

  const r = await ccmesh.message('claude-sonnet-4-5', true);
  expect(r.status).toBe(200);
  expect(r.headers.get('x-ccmesh-endpoint')).toBe('good');

  const row = page.getByTestId('log-row').first();
  await expect(row).toBeVisible({ timeout: 3000 }); // live, no reload
  await expect(row).toContainText('/v1/messages');
  await expect(row).toContainText('good');
  await expect(row).toContainText('200');
  await row.click();

  const detail = page.getByTestId('log-detail');
  const attempts = detail.getByTestId('attempt');
  await expect(attempts.first()).toBeVisible();
  const n = await attempts.count();
  expect(n).toBeGreaterThanOrEqual(2);
  await expect(attempts.first()).toContainText('down');
  await expect(attempts.first()).toContainText('503');
  await expect(attempts.first()).toContainText('counted by breaker');
  await expect(attempts.last()).toContainText('good');
  await expect(attempts.last()).toContainText('200');
  await expect(detail.getByTestId('routing-candidates')).toContainText('down');
  await expect(detail.getByTestId('routing-candidates')).toContainText('good');

  // Filters go to the server.
  await page.getByLabel('Endpoint').selectOption('down');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page.getByTestId('log-row')).toHaveCount(0);
  await page.getByLabel('Endpoint').selectOption('good');
  await page.getByRole('button', { name: 'Filter' }).click();
  await expect(page.getByTestId('log-row')).toHaveCount(1);
  await expectNoReload(page);
});

// docs/BEHAVIOUR.md#translation and #candidates: a Claude request offered to an openai-chat endpoint that names
// the model goes there translated, and an openai-responses endpoint that does not name it is left out.
test('the timeline tags a translated attempt and says why another protocol’s endpoint was left out', async ({ ccmesh, openUI, upstream }) => {
  const anthropicOnly = await upstream('ok'); // answers /v1/messages only: the translated request gets a 404
  const good = await upstream('ok');
  await ccmesh.addEndpoint({ name: 'chat-relay', base_url: anthropicOnly.url, protocol: 'openai-chat', models: ['claude-*'] });
  await ccmesh.addEndpoint({ name: 'codex-relay', base_url: good.url, protocol: 'openai-responses', models: ['gpt-5*'] });
  await ccmesh.addEndpoint({ name: 'claude', base_url: good.url });
  const page = await openUI();
  await page.getByRole('tab', { name: 'Logs' }).click();

  const r = await ccmesh.message('claude-sonnet-4-5');
  expect(r.headers.get('x-ccmesh-endpoint')).toBe('claude');

  await page.getByTestId('log-row').first().click();
  const detail = page.getByTestId('log-detail');
  const attempts = detail.getByTestId('attempt');
  await expect(attempts.first()).toContainText('chat-relay');
  await expect(attempts.first().getByTestId('attempt-translation')).toHaveText('Anthropic → OpenAI Chat');
  await expect(attempts.last()).toContainText('claude');
  await expect(attempts.last().getByTestId('attempt-translation')).toHaveCount(0);
  await expect(detail.getByTestId('routing-excluded')).toContainText('codex-relay speaks OpenAI Responses; model not named');
});
