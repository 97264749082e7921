import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { SyncResult, SyncSettings } from '../api/types';
import { baseRoutes, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { SyncPanel } from './SyncPanel';

function settings(over: Partial<SyncSettings> = {}): SyncSettings {
  return {
    url: 'https://dav.example/ccmesh/', user: 'me', has_password: true, has_passphrase: true,
    file: 'ccmesh-sync.age', last_sync: null, last_action: '', warning: '', ...over,
  };
}

const done = (over: Partial<SyncResult>): SyncResult => ({ ok: true, conflict: false, action: 'push', last_sync: '2026-12-01T10:00:00Z', message: '', ...over });

const conflict: SyncResult = {
  ok: false, conflict: true, action: '', last_sync: '2026-11-30T08:00:00Z',
  message: 'both this computer’s configuration and the remote file changed since the last sync',
  local: { changed: true, modified_at: '2026-12-01T09:15:00Z', exported_at: null, endpoints: 3 },
  remote: { changed: true, modified_at: '2026-12-01T09:40:00Z', exported_at: '2026-12-01T09:39:58Z', endpoints: 2 },
};

describe('Sync', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('shows write-only fields as saved and sends them only when typed', async () => {
    let saved = settings({ has_password: true, has_passphrase: false, url: '', user: '' });
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/sync': () => ({ body: saved }),
      'PUT /api/sync': (c) => {
        const b = c.body as { url: string; user: string; passphrase?: string };
        saved = settings({ url: b.url, user: b.user, has_passphrase: saved.has_passphrase || !!b.passphrase });
        return { body: saved };
      },
    });
    const user = userEvent.setup();
    renderApp(<SyncPanel />);
    expect(await screen.findByTestId('sync-password-saved')).toHaveTextContent('(saved)');
    expect(screen.queryByTestId('sync-passphrase-saved')).toBeNull();
    expect(screen.getByLabelText(/^Password/)).toHaveValue('');
    expect(screen.getByTestId('sync-last')).toHaveTextContent('Never synced');

    await user.type(screen.getByLabelText('Folder URL'), 'https://dav.example/ccmesh/');
    await user.type(screen.getByLabelText('User'), 'me');
    await user.type(screen.getByLabelText(/^Passphrase/), 'a long passphrase');
    await user.click(screen.getByRole('button', { name: 'Save sync settings' }));
    expect(await screen.findByRole('status')).toHaveTextContent('Sync settings saved');
    expect(calls.filter((c) => c.method === 'PUT').map((c) => c.body)).toEqual([
      { url: 'https://dav.example/ccmesh/', user: 'me', passphrase: 'a long passphrase' },
    ]);
    // Saved, the secret is shown only as such.
    expect(await screen.findByTestId('sync-passphrase-saved')).toBeInTheDocument();
    expect(screen.getByLabelText(/^Passphrase/)).toHaveValue('');
  });

  it('warns while the saved URL is plain http to another machine', async () => {
    let saved = settings({ url: 'http://nas.lan/dav/', warning: 'this URL is plain http:// to nas.lan: …' });
    stubFetch({
      ...baseRoutes([]),
      'GET /api/sync': () => ({ body: saved }),
      'PUT /api/sync': (c) => {
        saved = settings({ url: (c.body as { url: string }).url });
        return { body: saved };
      },
    });
    const user = userEvent.setup();
    renderApp(<SyncPanel />);
    expect(await screen.findByTestId('sync-warning')).toHaveTextContent('the WebDAV user name and password cross the network unencrypted');
    await user.clear(screen.getByLabelText('Folder URL'));
    await user.type(screen.getByLabelText('Folder URL'), 'https://nas.lan/dav/');
    await user.click(screen.getByRole('button', { name: 'Save sync settings' }));
    expect(await screen.findByRole('status')).toHaveTextContent('Sync settings saved');
    expect(screen.queryByTestId('sync-warning')).toBeNull();
  });

  it('pushes and pulls, showing the last sync', async () => {
    let s = settings();
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/sync': () => ({ body: s }),
      'POST /api/sync/push': () => {
        s = settings({ last_sync: '2026-12-01T10:00:00Z', last_action: 'push' });
        return { body: done({ action: 'push' }) };
      },
      'POST /api/sync/pull': { body: done({ action: 'pull', import: { replace: true, schema: 2, exported_at: null, encrypted: true, keys: true, added: ['a', 'b'], changed: [], removed: ['c'], fields: {}, settings: [], endpoints: 2, key_moves: [], keys_moved: false } }) },
    });
    const user = userEvent.setup();
    renderApp(<SyncPanel />);
    await user.click(await screen.findByRole('button', { name: 'Push' }));
    expect(await screen.findByRole('status')).toHaveTextContent('Pushed this computer’s configuration.');
    await waitFor(() => expect(screen.getByTestId('sync-last')).toHaveTextContent(/Last sync: .+ \(push\)/));
    await user.click(screen.getByRole('button', { name: 'Pull' }));
    expect(await screen.findByRole('status')).toHaveTextContent('Pulled: 2 added, 0 changed, 1 removed.');
    expect(calls.filter((c) => c.method === 'POST').map((c) => [c.path, c.body])).toEqual([
      ['/api/sync/push', {}],
      ['/api/sync/pull', {}],
    ]);
  });

  it('asks which side wins a conflict, showing both sides’ times, and sends the choice', async () => {
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/sync': { body: settings({ last_sync: '2026-11-30T08:00:00Z', last_action: 'pull' }) },
      'POST /api/sync/pull': (c) => ((c.body as { force?: string }).force ? { body: done({ action: 'none' }) } : { status: 409, body: conflict }),
      'POST /api/sync/push': (c) => ((c.body as { force?: string }).force ? { body: done({ action: 'push' }) } : { status: 409, body: conflict }),
    });
    const user = userEvent.setup();
    renderApp(<SyncPanel />);
    await user.click(await screen.findByRole('button', { name: 'Pull' }));
    const dialog = await screen.findByRole('alertdialog', { name: 'Both sides may have changed' });
    expect(dialog).toHaveTextContent('This computer’s configuration and the remote file both changed since the last sync.');
    const when = (iso: string) => new Date(iso).toLocaleString('en', { hour12: false });
    expect(within(dialog).getByTestId('conflict-local')).toHaveTextContent(`This computer: changed ${when('2026-12-01T09:15:00Z')} · 3 endpoints`);
    expect(within(dialog).getByTestId('conflict-remote')).toHaveTextContent(
      `Remote file: changed ${when('2026-12-01T09:40:00Z')} · written ${when('2026-12-01T09:39:58Z')} · 2 endpoints`,
    );
    expect(dialog).toHaveTextContent(`Last sync: ${when('2026-11-30T08:00:00Z')}`);
    // Cancel is where focus starts: Enter overwrites nothing.
    expect(within(dialog).getByRole('button', { name: 'Cancel' })).toHaveFocus();

    await user.click(within(dialog).getByRole('button', { name: 'Keep this computer’s (push)' }));
    expect(await screen.findByRole('status')).toHaveTextContent('Pushed');
    expect(screen.queryByRole('alertdialog')).toBeNull();

    await user.click(screen.getByRole('button', { name: 'Push' }));
    await user.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Keep the remote file (pull)' }));
    expect(await screen.findByRole('status')).toHaveTextContent('Already in sync');
    expect(calls.filter((c) => c.method === 'POST').map((c) => [c.path, c.body])).toEqual([
      ['/api/sync/pull', {}],
      ['/api/sync/push', { force: 'local' }],
      ['/api/sync/push', {}],
      ['/api/sync/pull', { force: 'remote' }],
    ]);
  });

  it('says every failure in words, with the server’s detail', async () => {
    const detail = 'the WebDAV server at https://dav.example/ccmesh/ refused the user name or password (401): check them; nothing was changed here or there';
    stubFetch({
      ...baseRoutes([]),
      'GET /api/sync': { body: settings() },
      'POST /api/sync/push': { status: 502, body: { error: { code: 'sync_unauthorized', message: detail } } },
      'POST /api/sync/pull': { status: 409, body: { error: { code: 'sync_busy', message: 'another push or pull is running' } } },
    });
    const user = userEvent.setup();
    renderApp(<SyncPanel />);
    await user.click(await screen.findByRole('button', { name: 'Push' }));
    const err = await screen.findByTestId('sync-error');
    expect(err).toHaveTextContent('The WebDAV server refused the user name or password.');
    expect(err).toHaveTextContent('(401)');
    await user.click(screen.getByRole('button', { name: 'Pull' }));
    await waitFor(() => expect(screen.getByTestId('sync-error')).toHaveTextContent('Another push or pull is running.'));
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });

  it('speaks Chinese', async () => {
    stubFetch({ ...baseRoutes([]), 'GET /api/sync': { body: settings() }, 'POST /api/sync/push': { status: 502, body: { error: { code: 'sync_no_space', message: '507' } } } });
    const user = userEvent.setup();
    renderApp(<SyncPanel />, 'zh-CN');
    expect(await screen.findByRole('heading', { name: '通过 WebDAV 同步' })).toBeInTheDocument();
    await user.click(await screen.findByRole('button', { name: '推送' }));
    expect(await screen.findByTestId('sync-error')).toHaveTextContent('WebDAV 服务器空间已满');
  });
});
