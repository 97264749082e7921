import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { baseRoutes, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { SettingsPanel } from './SettingsPanel';

const FEED = 'https://api.github.com/repos/ccmesh/ccmesh/releases';

// docs/BEHAVIOUR.md#update-check: off by default; on, Check now reads the feed and says what it found.
describe('settings: update check', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('turns the check on with its feed', async () => {
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/settings': { body: { language: '', strategy: 'sticky', update_check: false, update_feed_url: FEED } },
      'PUT /api/settings': (c) => ({ body: { language: '', strategy: 'sticky', ...(c.body as object) } }),
    });
    const user = userEvent.setup();
    renderApp(<SettingsPanel />);
    const toggle = await screen.findByRole('checkbox', { name: 'Check for updates' });
    expect(toggle).not.toBeChecked();
    expect(toggle).toHaveAccessibleDescription(/never downloads or installs anything/);
    expect(screen.queryByRole('button', { name: 'Check now' })).toBeNull();
    await user.click(toggle);
    await user.click(screen.getByRole('button', { name: 'Save settings' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect(calls.find((c) => c.method === 'PUT')!.body).toMatchObject({ update_check: true, update_feed_url: FEED });
    expect(await screen.findByRole('button', { name: 'Check now' })).toBeInTheDocument();
  });

  const cases = [
    { name: 'a newer release', reply: { available: true, latest: 'v1.4.0', error: '' }, want: 'Update available: v1.4.0' },
    { name: 'none newer', reply: { available: false, latest: 'v1.3.0', error: '' }, want: 'Latest release v1.3.0; this is v1.3.0' },
    { name: 'a failed check', reply: { available: false, latest: '', error: 'update check: the feed answered 403 Forbidden' }, want: 'the feed answered 403' },
  ];
  for (const c of cases) {
    it(`Check now shows ${c.name}`, async () => {
      const calls = stubFetch({
        ...baseRoutes([]),
        'GET /api/settings': { body: { language: '', strategy: 'sticky', update_check: true, update_feed_url: FEED } },
        'POST /api/update/check': {
          body: { enabled: true, checked_at: '2026-12-01T08:00:00Z', current: 'v1.3.0', url: '', notes: '', ...c.reply },
        },
      });
      const user = userEvent.setup();
      renderApp(<SettingsPanel />);
      await user.click(await screen.findByRole('button', { name: 'Check now' }));
      expect(calls.some((x) => x.method === 'POST' && x.path === '/api/update/check')).toBe(true);
      expect(await screen.findByTestId('update-status')).toHaveTextContent(c.want);
    });
  }
});
