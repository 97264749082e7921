import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { baseRoutes, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { SettingsPanel } from './SettingsPanel';

// docs/BEHAVIOUR.md#start-at-login: the setting reads the system's entry; saving it writes or removes the entry.
describe('settings: start at login', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('shows what is on disk and saves the change', async () => {
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/settings': { body: { language: '', strategy: 'sticky', start_at_login: false } },
      'PUT /api/settings': (c) => ({ body: { language: '', strategy: 'sticky', ...(c.body as object) } }),
    });
    const user = userEvent.setup();
    renderApp(<SettingsPanel />);
    const toggle = await screen.findByRole('checkbox', { name: 'Start at login, in the tray' });
    expect(toggle).not.toBeChecked();
    expect(toggle).toHaveAccessibleDescription(/when you log in/);
    await user.click(toggle);
    await user.click(screen.getByRole('button', { name: 'Save settings' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect(calls.find((c) => c.method === 'PUT')!.body).toMatchObject({ start_at_login: true });
    expect(await screen.findByRole('checkbox', { name: 'Start at login, in the tray' })).toBeChecked();
  });

  it('leaves the entry alone when the toggle was not touched', async () => {
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/settings': { body: { language: '', strategy: 'sticky', start_at_login: true } },
      'PUT /api/settings': (c) => ({ body: { language: '', strategy: 'sticky', start_at_login: true, ...(c.body as object) } }),
    });
    const user = userEvent.setup();
    renderApp(<SettingsPanel />);
    expect(await screen.findByRole('checkbox', { name: 'Start at login, in the tray' })).toBeChecked();
    await user.click(screen.getByRole('button', { name: 'Save settings' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect('start_at_login' in (calls.find((c) => c.method === 'PUT')!.body as object)).toBe(false);
  });

  it('says why the entry could not be written', async () => {
    stubFetch({
      ...baseRoutes([]),
      'GET /api/settings': { body: { language: '', strategy: 'sticky', start_at_login: false } },
      'PUT /api/settings': {
        status: 500,
        body: { error: { code: 'start_at_login_failed', field: 'start_at_login', message: 'could not write the start-at-login entry /x: permission denied' } },
      },
    });
    const user = userEvent.setup();
    renderApp(<SettingsPanel />, 'zh-CN');
    await user.click(await screen.findByRole('checkbox', { name: '登录时启动（仅托盘）' }));
    await user.click(screen.getByRole('button', { name: '保存设置' }));
    expect(await screen.findByText(/permission denied/)).toHaveAttribute('role', 'alert');
  });
});
