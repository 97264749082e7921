import { expect, expectNoReload, test } from './fixtures';

// docs/BEHAVIOUR.md#routing-rules through the UI against the real binary: tags on endpoints, rules from templates,
// the dry run naming the rule and why the earlier one did not match, and the rule on the log row.
test('rules from templates route a subagent to the tagged endpoint; the dry run and the log row say which rule', async ({ ccmesh, openUI, upstream }) => {
  const big = await upstream('ok');
  const cheap = await upstream('ok');
  await ccmesh.addEndpoint({ name: 'main', base_url: big.url, tags: ['big'] });
  const page = await openUI('#/endpoints');

  // The second endpoint and its tag through the form; the card shows the tag.
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await page.getByTestId('preset-picker').getByRole('button', { name: 'Custom', exact: true }).click();
  const form = page.getByRole('form', { name: 'Add endpoint' });
  await form.getByLabel('Name', { exact: true }).fill('cheap-one');
  await form.getByLabel('Base URL').fill(cheap.url);
  await form.getByLabel('Tags').fill('cheap, fast-lane');
  await form.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByTestId('endpoint-card-cheap-one').getByTestId('endpoint-tags')).toHaveText('cheapfast-lane');
  await expect(page.getByTestId('endpoint-card-main').getByTestId('endpoint-tags')).toHaveText('big');

  // Two rules from templates: long context first, then subagents; each needs its endpoint picked.
  await page.getByRole('tab', { name: 'Routing' }).click();
  const editor = page.getByTestId('rules-editor');
  await expect(editor.getByTestId('rules-empty')).toBeVisible();
  await editor.getByRole('button', { name: 'Long context' }).click();
  let ruleForm = editor.getByTestId('rule-form');
  await expect(ruleForm.getByLabel('Input tokens over')).toHaveValue('60000');
  await ruleForm.getByLabel('Endpoints', { exact: true }).selectOption('tag:big');
  await editor.getByRole('button', { name: 'Close' }).click();
  await editor.getByRole('button', { name: 'Subagents' }).click();
  ruleForm = editor.getByTestId('rule-form');
  await expect(ruleForm.getByLabel('Agent')).toHaveValue('subagent');
  await editor.getByRole('button', { name: 'Save rules' }).click();
  await expect(ruleForm.getByTestId('rule-error-then.endpoints')).toHaveText('Pick at least one endpoint or tag.');
  await ruleForm.getByLabel('Endpoints', { exact: true }).selectOption('tag:cheap');
  await editor.getByRole('button', { name: 'Save rules' }).click();
  await expect(editor.getByText('Rules saved.')).toBeVisible();
  await expect(editor.getByTestId('rule-name')).toHaveText(['long-context', 'subagents']);
  const settings = await ccmesh.api<{ rules: unknown[] }>('GET', '/api/settings');
  expect(settings.rules).toEqual([
    { name: 'long-context', when: { input_tokens_over: 60000 }, then: { endpoints: ['tag:big'], fallback: true } },
    { name: 'subagents', when: { agent: 'subagent' }, then: { endpoints: ['tag:cheap'], fallback: true } },
  ]);

  // The dry run of a small subagent request: long-context does not match, subagents does, cheap-one first.
  const why = page.getByTestId('route-why');
  await why.getByLabel('Model').fill('claude-sonnet-4-5');
  await why.getByLabel('Agent').selectOption('subagent');
  await why.getByLabel('Input tokens').fill('1200');
  await why.getByRole('button', { name: 'Explain' }).click();
  await expect(why.getByTestId('route-rule')).toHaveText('Rule “subagents” matches: its endpoints are tried.');
  const steps = why.getByTestId('route-rules').getByRole('listitem');
  await expect(steps).toHaveCount(2);
  await expect(steps.first()).toContainText('long-context no match:');
  await expect(steps.first()).toContainText('1200');
  await expect(steps.first()).toContainText('60000');
  await expect(steps.last()).toHaveText('subagents matches');
  await expect(why.getByTestId('route-candidates').getByRole('listitem').first()).toContainText('cheap-one');

  // A subagent's request through the proxy goes to cheap-one; its log row and detail name the rule.
  const r = await fetch(`${ccmesh.base}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'client-key', 'x-claude-code-agent-id': '0123456789abcdef0' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'ping' }] }),
  });
  await r.text();
  expect(r.status).toBe(200);
  expect(r.headers.get('x-ccmesh-endpoint')).toBe('cheap-one');
  expect(cheap.hits).toBe(1);

  await page.getByRole('tab', { name: 'Logs' }).click();
  const row = page.getByTestId('log-row').first();
  await expect(row).toContainText('cheap-one');
  await expect(row.getByTestId('row-rule')).toHaveText('rule: subagents');
  await row.click();
  await expect(page.getByTestId('log-detail').getByTestId('routing-rule')).toHaveText('Rule “subagents” picked the endpoints.');

  // The main conversation matches no rule and goes to the normal list.
  const plain = await ccmesh.message('claude-sonnet-4-5');
  expect(plain.headers.get('x-ccmesh-endpoint')).toBe('main');
  await expect(page.getByTestId('log-row')).toHaveCount(2);
  await expect(page.getByTestId('log-row').first().getByTestId('row-rule')).toHaveCount(0);

  // Statistics grouped by rule: one request per key.
  await page.getByRole('tab', { name: 'Stats' }).click();
  await page.getByLabel('Group by').selectOption('rule');
  const totals = page.getByTestId('stats-totals');
  await expect(totals).toContainText('subagents');
  await expect(totals).toContainText('(no rule)');
  await expectNoReload(page);
});
