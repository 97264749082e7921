import { expect, expectNoReload, test } from './fixtures';

test.describe('endpoints', () => {
  test('adds an endpoint through the form, rejects a duplicate name, never shows the key', async ({ ccmesh, openUI, upstream }) => {
    const up = await upstream('ok');
    const secret = 'sk-ant-e2e-SECRET-0123456789-abcd';
    const page = await openUI();

    // A first run opens on the dashboard's welcome, which leads to the add form.
    await expect(page.getByTestId('dashboard-welcome')).toBeVisible();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await expect(page.getByRole('tab', { name: 'Endpoints' })).toHaveAttribute('aria-selected', 'true');
    // Adding starts at the preset list; Custom is the empty form.
    await page.getByTestId('preset-picker').getByRole('button', { name: 'Custom', exact: true }).click();
    const form = page.getByRole('form', { name: 'Add endpoint' });
    await form.getByLabel('Name', { exact: true }).fill('relay-one');
    await form.getByLabel('Base URL').fill(up.url);
    await form.getByLabel('Protocol').selectOption('anthropic');
    await form.getByLabel('API key').fill(secret);
    await form.getByLabel(/^Models/).fill('claude-*');
    await expect(form.getByTestId('endpoint-serves')).toHaveText(
      'Serves Claude Code and Anthropic SDK clients asking for claude-*. Translated for OpenAI Chat, Codex, OpenAI Responses and Gemini clients asking for claude-*.',
    );
    await form.getByRole('switch', { name: 'Add to fast queue' }).check();
    await form.getByRole('button', { name: 'Save' }).click();

    const card = page.getByTestId('endpoint-card-relay-one');
    await expect(card).toBeVisible();
    await expect(card.getByTestId('status-badge')).toHaveText('healthy');
    await expect(card).toContainText('abcd'); // the masked key's tail
    expect(await page.content()).not.toContain(secret);
    const [saved] = await ccmesh.endpoints();
    expect(saved).toMatchObject({ name: 'relay-one', fast: true });

    // The same name again: the API's 409 shows next to the Name field.
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('button', { name: 'Custom', exact: true }).click();
    const again = page.getByRole('form', { name: 'Add endpoint' });
    await again.getByLabel('Name', { exact: true }).fill('relay-one');
    await again.getByLabel('Base URL').fill(up.url);
    await again.getByRole('button', { name: 'Save' }).click();
    const name = again.getByLabel('Name', { exact: true });
    await expect(name).toHaveAttribute('aria-invalid', 'true');
    await expect(name).toHaveAccessibleDescription(/already exists/);
    await expect(again.getByRole('alert')).toContainText('relay-one');
    expect(await ccmesh.endpoints()).toHaveLength(1);

    // Edit without touching the key keeps it; the page still never holds it.
    await again.getByRole('button', { name: 'Cancel' }).click();
    await card.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('form', { name: 'Edit relay-one' });
    await expect(edit.getByLabel('API key')).toHaveValue('');
    await edit.getByLabel('Base URL').fill(`${up.url}/`);
    await edit.getByRole('button', { name: 'Save' }).click();
    await expect(edit).toBeHidden();
    await expect(card).toContainText('abcd');
    expect(await page.content()).not.toContain(secret);

    // Delete asks first.
    await card.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('alertdialog');
    await expect(dialog).toContainText('Delete endpoint relay-one?');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await expect(card).toBeHidden();
    expect(await ccmesh.endpoints()).toHaveLength(0);
    await expectNoReload(page);
  });

  test('test and fetch models show their results on the card', async ({ ccmesh, openUI, upstream }) => {
    const up = await upstream('ok');
    await ccmesh.addEndpoint({ name: 'fetchy', base_url: up.url, api_key: 'sk-fetch-1111' });
    const page = await openUI('#/endpoints');
    const card = page.getByTestId('endpoint-card-fetchy');
    await card.getByRole('button', { name: 'Test' }).click();
    await expect(card.getByRole('status')).toContainText(/OK 200 in \d+ ms/);
    await card.getByRole('button', { name: 'Fetch models' }).click();
    await expect(card.getByRole('status')).toContainText('Fetched 2 models');
    await expect(card.getByTestId('fetched-models')).toContainText('claude-sonnet-4-5');
    // Fetching saves nothing; the list replaces the models once the user accepts it.
    expect((await ccmesh.endpoints()).find((e) => e.name === 'fetchy')?.models).toEqual([]);
    await card.getByRole('button', { name: 'Use these models' }).click();
    await expect(card.getByRole('status')).toContainText('Saved 2 models');
    await expect(card).toContainText('claude-sonnet-4-5, claude-haiku-4-5');
    expect((await ccmesh.endpoints()).find((e) => e.name === 'fetchy')?.models).toEqual(['claude-sonnet-4-5', 'claude-haiku-4-5']);
  });

  // docs/BEHAVIOUR.md#presets
  test('adds endpoints from a preset: the form comes filled, named after it, and the key is the user’s', async ({ ccmesh, openUI }) => {
    const secret = 'sk-deepseek-e2e-SECRET-77aa';
    const page = await openUI('#/endpoints');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const picker = page.getByTestId('preset-picker');
    const deepseek = picker.getByTestId('preset-deepseek');
    await expect(deepseek).toContainText('DeepSeek');
    await expect(deepseek.getByRole('link', { name: 'source' })).toHaveAttribute('href', /^https:\/\/api-docs\.deepseek\.com\//);
    await expect(picker.getByTestId('preset-custom')).toBeVisible();
    await deepseek.getByRole('button', { name: 'DeepSeek', exact: true }).click();

    const form = page.getByRole('form', { name: 'Add endpoint' });
    await expect(form.getByTestId('form-preset')).toContainText('DeepSeek');
    await expect(form.getByLabel('Name', { exact: true })).toHaveValue('deepseek');
    await expect(form.getByLabel('Base URL')).toHaveValue('https://api.deepseek.com/anthropic');
    await expect(form.getByLabel('Protocol')).toHaveValue('anthropic');
    await expect(form.getByLabel('Price multiplier')).toHaveValue('1');
    await form.getByLabel('API key').fill(secret);
    await form.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByTestId('endpoint-card-deepseek')).toBeVisible();

    // The same preset again: a free name, and a relay's price multiplier.
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByTestId('preset-deepseek').getByRole('button', { name: 'DeepSeek', exact: true }).click();
    const again = page.getByRole('form', { name: 'Add endpoint' });
    await expect(again.getByLabel('Name', { exact: true })).toHaveValue('deepseek-2');
    await again.getByLabel('Price multiplier').fill('0.3');
    await again.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByTestId('endpoint-card-deepseek-2').getByTestId('price-multiplier')).toHaveText('× 0.3');

    const saved = await ccmesh.api<Array<Record<string, unknown>>>('GET', '/api/endpoints');
    expect(saved).toEqual([
      expect.objectContaining({ name: 'deepseek', base_url: 'https://api.deepseek.com/anthropic', protocol: 'anthropic', auth: 'x-api-key', has_key: true, price_multiplier: 1 }),
      expect.objectContaining({ name: 'deepseek-2', base_url: 'https://api.deepseek.com/anthropic', has_key: false, price_multiplier: 0.3 }),
    ]);
    expect(await page.content()).not.toContain(secret);
    await expectNoReload(page);
  });
});
