import { expect, test } from './fixtures';

test('switching to Chinese changes the labels, and the choice is kept', async ({ ccmesh, openUI, upstream }) => {
  const up = await upstream('ok');
  await ccmesh.addEndpoint({ name: 'zh', base_url: up.url });
  const page = await openUI('#/endpoints');
  await expect(page.getByRole('tab', { name: 'Endpoints' })).toBeVisible();
  await expect(page.getByTestId('status-badge')).toHaveText('healthy');

  await page.getByLabel('Language').selectOption('zh-CN');
  await expect(page.getByRole('tab', { name: '端点' })).toBeVisible();
  await expect(page.getByRole('tab', { name: '快速队列' })).toBeVisible();
  await expect(page.getByRole('button', { name: '添加端点' })).toBeVisible();
  await expect(page.getByTestId('status-badge')).toHaveText('健康');
  await expect(page.getByTestId('health-count')).toHaveText('1/1 健康');
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');

  await page.getByTestId('endpoint-card-zh').getByRole('button', { name: '强制熔断' }).click();
  await expect(page.getByTestId('status-badge')).toHaveText('熔断');

  await expect.poll(async () => (await ccmesh.api<{ language: string }>('GET', '/api/settings')).language).toBe('zh-CN');
  await page.reload();
  await expect(page.getByRole('tab', { name: '端点' })).toBeVisible();
});
