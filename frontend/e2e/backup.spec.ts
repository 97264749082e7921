import { readFileSync } from 'node:fs';
import { expect, expectNoReload, test } from './fixtures';

interface EndpointKey {
  name: string;
  has_key: boolean;
}

test('an encrypted backup with keys brings a deleted endpoint back, after a preview of what changes', async ({ ccmesh, openUI, upstream }) => {
  const up = await upstream('ok');
  const secret = 'sk-ant-e2e-BACKUP-0123456789-wxyz';
  const pass = 'e2e backup passphrase';
  await ccmesh.addEndpoint({ name: 'keep', base_url: up.url, api_key: `${secret}-keep` });
  await ccmesh.addEndpoint({ name: 'gone', base_url: up.url, api_key: secret });

  const page = await openUI('#/settings');
  const backup = page.getByRole('region', { name: 'Backup and sync' });
  const exportForm = backup.getByRole('form', { name: 'Export' });
  await exportForm.getByRole('checkbox', { name: /Include keys/ }).check();
  await exportForm.getByLabel('Passphrase', { exact: true }).fill(pass);
  await exportForm.getByLabel('Repeat the passphrase').fill(pass);
  const [download] = await Promise.all([page.waitForEvent('download'), exportForm.getByRole('button', { name: 'Export' }).click()]);
  expect(download.suggestedFilename()).toMatch(/^ccmesh-backup-\d{8}-\d{6}\.age$/);
  const file = await download.path();
  const bytes = readFileSync(file);
  expect(bytes.subarray(0, 22).toString()).toBe('age-encryption.org/v1\n');
  expect(bytes.includes(secret)).toBe(false);
  await expect(exportForm.getByRole('status')).toContainText('Saved as ccmesh-backup-');

  const gone = (await ccmesh.endpoints()).find((e) => e.name === 'gone')!;
  await ccmesh.api('DELETE', `/api/endpoints/${gone.id}`);

  await backup.getByLabel('Backup file').setInputFiles(file);
  const importForm = backup.getByRole('form', { name: 'Import' });
  await expect(importForm.getByText('This file is encrypted: enter the passphrase it was exported with.')).toBeVisible();
  // A wrong passphrase says so and changes nothing.
  await importForm.getByLabel('Passphrase').fill('not the passphrase');
  await importForm.getByRole('button', { name: 'Show the changes' }).click();
  await expect(backup.getByTestId('import-error')).toContainText('Wrong passphrase');
  await importForm.getByLabel('Passphrase').fill(pass);
  await importForm.getByRole('button', { name: 'Show the changes' }).click();
  await expect(backup.getByTestId('import-added')).toContainText('Added (1)');
  await expect(backup.getByTestId('import-added')).toContainText('gone');
  await expect(backup.getByTestId('import-changed')).toContainText('Changed (0)');
  await expect(backup.getByTestId('import-removed')).toContainText('Removed (0)');
  expect((await ccmesh.endpoints()).map((e) => e.name)).toEqual(['keep']); // the preview changed nothing

  await backup.getByRole('button', { name: 'Apply' }).click();
  await expect(backup.getByRole('status').filter({ hasText: 'Imported' })).toHaveText('Imported: 1 added, 0 changed, 0 removed.');
  const after = await ccmesh.api<EndpointKey[]>('GET', '/api/endpoints');
  expect(after.map((e) => [e.name, e.has_key])).toEqual([
    ['keep', true],
    ['gone', true],
  ]);
  expect(await page.content()).not.toContain(secret);

  // The endpoint is back with its key: a request named for it reaches the upstream.
  const before = up.hits;
  const r = await fetch(`${ccmesh.base}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'client-key', 'x-ccmesh-endpoint': 'gone' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'ping' }] }),
  });
  expect(r.status).toBe(200);
  expect(up.hits).toBe(before + 1);
  await expectNoReload(page);
});
