import { expect, test } from './fixtures';

// docs/BEHAVIOUR.md#key-pools: a pool edited in the form, a key forced open from its card.
test.describe('key pools', () => {
  test('keys pasted in the form join the pool; one key forced open from the card is unhealthy alone', async ({ ccmesh, openUI, upstream }) => {
    const up = await upstream('ok');
    await ccmesh.addEndpoint({ name: 'pool', base_url: up.url, api_key: 'sk-ant-first-0123456789' });
    const page = await openUI('#/endpoints');
    const card = page.getByTestId('endpoint-card-pool');
    await card.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit pool' });
    await form.getByLabel('More keys (one a line, “label: key” optional)').fill('spare: sk-ant-spare-0123456789\nsk-ant-third-0123456789');
    await form.getByRole('button', { name: 'Save' }).click();

    const keys = card.getByTestId('endpoint-keys');
    await expect(keys.getByRole('listitem')).toHaveCount(3);
    await expect(keys).toContainText('spare (sk-…6789)');
    expect(await page.content()).not.toContain('sk-ant-spare-0123456789');
    const stored = (await ccmesh.endpoints())[0];
    expect(stored.keys.map((k) => k.label)).toEqual(['', 'spare', '']);

    const spareId = stored.keys[1].id;
    await keys.getByRole('button', { name: 'Force open spare (sk-…6789)' }).click();
    await expect(keys.getByTestId(`key-${spareId}`).getByTestId('status-badge')).toHaveText('unhealthy');
    await expect(keys.getByTestId(`key-${stored.keys[0].id}`).getByTestId('status-badge')).toHaveText('healthy');
    await expect(card.getByTestId('status-badge').first()).toHaveText('healthy');
    // Requests go on, on the other keys.
    expect((await ccmesh.message()).status).toBe(200);
  });
});
