import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ImportReport } from '../api/types';
import { baseRoutes, renderApp, stubEventSource, stubFetch, type Routes } from '../test/utils';
import { BackupPanel } from './BackupPanel';

interface Sent {
  key: string;
  headers: Record<string, string>;
  body: unknown;
}

function readText(b: Blob): Promise<string> {
  return new Promise((resolve) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.readAsText(b);
  });
}

/**
 * stubFetch for the JSON routes, plus `files`: routes that get a file (a Blob body) or answer one with headers of
 * their own. Every call to them is kept in the returned list.
 */
function stubWithFiles(routes: Routes, files: Record<string, (s: Sent) => Response>): Sent[] {
  stubFetch(routes);
  const json = globalThis.fetch;
  const sent: Sent[] = [];
  vi.stubGlobal('fetch', async (input: string, init?: RequestInit) => {
    const key = `${init?.method ?? 'GET'} ${String(input)}`;
    const route = files[key];
    if (!route) return json(input, init);
    const body = init?.body instanceof Blob ? await readText(init.body) : init?.body ? JSON.parse(String(init.body)) : undefined;
    const s: Sent = { key, headers: { ...(init?.headers as Record<string, string>) }, body };
    sent.push(s);
    return route(s);
  });
  return sent;
}

const jsonReply = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

function report(over: Partial<ImportReport> = {}): ImportReport {
  return {
    replace: true, schema: 2, exported_at: '2026-12-01T09:00:00Z', encrypted: true, keys: true,
    added: [], changed: [], removed: [], fields: {}, settings: [], endpoints: 0, key_moves: [], keys_moved: false, ...over,
  };
}

/** Catches the download: the saved blob's name, instead of a navigation. */
function catchDownloads() {
  vi.stubGlobal('URL', class extends URL {
    static createObjectURL = vi.fn(() => 'blob:backup');
    static revokeObjectURL = vi.fn();
  });
  return vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => undefined);
}

describe('Backup', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('exports without keys as it is, and with keys only with a passphrase typed twice', async () => {
    const sent = stubWithFiles(baseRoutes([]), {
      'POST /api/export': (s) => {
        const { keys, passphrase } = s.body as { keys: boolean; passphrase: string };
        if (keys && passphrase.length < 8) {
          return jsonReply(422, { error: { code: 'short_passphrase', field: 'passphrase', message: 'the passphrase must be at least 8 characters long, not 5' } });
        }
        const name = keys ? 'ccmesh-backup-20261201-100000.age' : 'ccmesh-backup-20261201-100000.json';
        return new Response(keys ? 'age-encryption.org/v1\n…' : '{}', { headers: { 'Content-Disposition': `attachment; filename="${name}"` } });
      },
    });
    const click = catchDownloads();
    const user = userEvent.setup();
    renderApp(<BackupPanel />);

    expect(screen.getByText(/the file holds no API key and no client token/)).toBeInTheDocument();
    expect(screen.queryByLabelText('Passphrase')).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Export' }));
    expect(await screen.findByRole('status')).toHaveTextContent('Saved as ccmesh-backup-20261201-100000.json');
    expect(sent.map((s) => s.body)).toEqual([{ keys: false, passphrase: '' }]);
    expect((click.mock.contexts[0] as HTMLAnchorElement).download).toBe('ccmesh-backup-20261201-100000.json');

    await user.click(screen.getByRole('checkbox', { name: /Include keys/ }));
    expect(screen.getByText(/Without the passphrase nobody can open it/)).toBeInTheDocument();
    await user.type(screen.getByLabelText('Passphrase'), 'short');
    await user.type(screen.getByLabelText('Repeat the passphrase'), 'shorter');
    await user.click(screen.getByRole('button', { name: 'Export' }));
    expect(await screen.findByTestId('export-error')).toHaveTextContent('The two passphrases differ.');
    expect(sent).toHaveLength(1); // nothing sent

    await user.clear(screen.getByLabelText('Repeat the passphrase'));
    await user.type(screen.getByLabelText('Repeat the passphrase'), 'short');
    await user.click(screen.getByRole('button', { name: 'Export' }));
    expect(await screen.findByTestId('export-error')).toHaveTextContent('The passphrase must be at least 8 characters long.');

    await user.type(screen.getByLabelText('Passphrase'), ' horse');
    await user.type(screen.getByLabelText('Repeat the passphrase'), ' horse');
    await user.click(screen.getByRole('button', { name: 'Export' }));
    expect(await screen.findByRole('status')).toHaveTextContent('Saved as ccmesh-backup-20261201-100000.age');
    expect(sent.at(-1)!.body).toEqual({ keys: true, passphrase: 'short horse' });
    expect(click).toHaveBeenCalledTimes(2);
  });

  it('asks an encrypted file’s passphrase, previews what changes, then applies it', async () => {
    const pass = '正确的马 horse';
    const preview = report({ added: ['two'], changed: ['one'], fields: { one: ['base_url', 'api_key'] }, removed: ['old'], settings: ['strategy'], endpoints: 2 });
    const sent = stubWithFiles(baseRoutes([]), {
      'POST /api/import/preview': (s) =>
        s.headers['X-Ccmesh-Passphrase'] === encodeURIComponent(pass)
          ? jsonReply(200, preview)
          : jsonReply(422, { error: { code: 'bad_passphrase', field: 'passphrase', message: 'wrong passphrase: this file does not open with it; nothing was changed' } }),
      'POST /api/import': () => jsonReply(200, preview),
    });
    const user = userEvent.setup();
    renderApp(<BackupPanel />);
    const file = new File(['age-encryption.org/v1\n-> scrypt abc 18\n…'], 'ccmesh-backup.age');
    await user.upload(screen.getByLabelText('Backup file'), file);

    expect(await screen.findByText('This file is encrypted: enter the passphrase it was exported with.')).toBeInTheDocument();
    expect(sent).toHaveLength(0); // no preview without the passphrase
    await user.type(screen.getByLabelText('Passphrase'), 'wrong one');
    await user.click(screen.getByRole('button', { name: 'Show the changes' }));
    expect(await screen.findByTestId('import-error')).toHaveTextContent('Wrong passphrase: the file does not open with it. Nothing was changed.');

    await user.clear(screen.getByLabelText('Passphrase'));
    await user.type(screen.getByLabelText('Passphrase'), pass);
    await user.click(screen.getByRole('button', { name: 'Show the changes' }));
    expect(await screen.findByTestId('import-added')).toHaveTextContent('Added (1)two');
    expect(screen.getByTestId('import-changed')).toHaveTextContent('Changed (1)one base_url, api_key');
    expect(screen.getByTestId('import-removed')).toHaveTextContent('Removed (1)old');
    expect(screen.getByTestId('import-settings')).toHaveTextContent('strategy');
    expect(screen.getByText(/endpoints that are not in the file are removed/)).toBeInTheDocument();
    expect(screen.queryByTestId('import-error')).toBeNull();
    expect(sent.at(-1)!.body).toBe(await readText(file)); // the file's own bytes

    await user.click(screen.getByRole('button', { name: 'Apply' }));
    expect(await screen.findByRole('status')).toHaveTextContent('Imported: 1 added, 1 changed, 1 removed.');
    const applied = sent.at(-1)!;
    expect(applied.key).toBe('POST /api/import');
    expect(applied.headers['X-Ccmesh-Passphrase']).toBe(encodeURIComponent(pass));
    expect(screen.queryByTestId('import-preview')).toBeNull();
  });

  it('previews a plain file at once, says when nothing changes, and refuses a newer one in words', async () => {
    let answer: Response = jsonReply(200, report({ encrypted: false, keys: false, endpoints: 1 }));
    const sent = stubWithFiles(baseRoutes([]), { 'POST /api/import/preview': () => answer });
    const user = userEvent.setup();
    renderApp(<BackupPanel />);
    await user.upload(screen.getByLabelText('Backup file'), new File(['{"version":2,"endpoints":[]}'], 'b.json', { type: 'application/json' }));
    expect(await screen.findByTestId('import-nothing')).toHaveTextContent('Nothing would change');
    expect(screen.getByText(/The file has no keys: endpoints keep the keys stored here/)).toBeInTheDocument();
    expect(sent[0].headers['X-Ccmesh-Passphrase']).toBeUndefined();

    answer = jsonReply(422, { error: { code: 'newer_schema', field: 'version', message: 'this file was written by a newer ccmesh (schema 3); this one reads up to 2: update ccmesh to import it' } });
    await user.upload(screen.getByLabelText('Backup file'), new File(['{"version":3}'], 'c.json'));
    const err = await screen.findByTestId('import-error');
    expect(err).toHaveTextContent('This file was written by a newer ccmesh. Update ccmesh to import it.');
    expect(err).toHaveTextContent('(schema 3); this one reads up to 2');
    expect(screen.queryByRole('button', { name: 'Apply' })).toBeNull();
  });

  it('warns when a keyless file points a stored key at another host, and sends it there only when confirmed', async () => {
    const moves = [{ name: 'one', from: 'https://one.example', to: 'https://elsewhere.example' }];
    const preview = report({ encrypted: false, keys: false, changed: ['one'], fields: { one: ['base_url', 'api_key'] }, endpoints: 1, key_moves: moves });
    const sent = stubWithFiles(baseRoutes([]), {
      'POST /api/import/preview': () => jsonReply(200, preview),
      'POST /api/import': () => jsonReply(200, preview),
      'POST /api/import?move_keys=1': () => jsonReply(200, { ...preview, fields: { one: ['base_url'] }, keys_moved: true }),
    });
    const user = userEvent.setup();
    renderApp(<BackupPanel />);
    const file = () => new File(['{"version":2,"keys":false,"endpoints":[]}'], 'b.json', { type: 'application/json' });

    // Left as it is, the import drops the key.
    await user.upload(screen.getByLabelText('Backup file'), file());
    const warning = await screen.findByTestId('import-key-moves');
    expect(warning).toHaveTextContent('Its key would go to a host it was never sent to');
    expect(warning).toHaveTextContent('one: https://one.example → https://elsewhere.example');
    const box = screen.getByRole('checkbox', { name: 'Send the stored keys to the new addresses' });
    expect(box).not.toBeChecked();
    expect(warning).toHaveTextContent('the import drops those keys');
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    expect(await screen.findByRole('status')).toHaveTextContent('Imported');
    expect(sent.at(-1)!.key).toBe('POST /api/import');

    // Ticked, the import says so.
    await user.upload(screen.getByLabelText('Backup file'), file());
    await user.click(await screen.findByRole('checkbox', { name: 'Send the stored keys to the new addresses' }));
    expect(screen.getByTestId('import-key-moves')).toHaveTextContent('The stored keys will be sent to the new addresses.');
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    await waitFor(() => expect(sent.at(-1)!.key).toBe('POST /api/import?move_keys=1'));
  });

  it('shows no key warning when nothing moves', async () => {
    stubWithFiles(baseRoutes([]), { 'POST /api/import/preview': () => jsonReply(200, report({ encrypted: false, keys: false, endpoints: 1 })) });
    const user = userEvent.setup();
    renderApp(<BackupPanel />);
    await user.upload(screen.getByLabelText('Backup file'), new File(['{"version":2,"endpoints":[]}'], 'b.json', { type: 'application/json' }));
    expect(await screen.findByTestId('import-nothing')).toBeInTheDocument();
    expect(screen.queryByTestId('import-key-moves')).toBeNull();
    expect(screen.queryByRole('checkbox', { name: /Send the stored keys/ })).toBeNull();
  });

  it('speaks Chinese', async () => {
    stubWithFiles(baseRoutes([]), {});
    renderApp(<BackupPanel />, 'zh-CN');
    expect(screen.getByRole('heading', { name: '备份与同步' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: '导出' })).toBeInTheDocument();
    await waitFor(() => expect(screen.getByLabelText('备份文件')).toBeInTheDocument());
  });
});
