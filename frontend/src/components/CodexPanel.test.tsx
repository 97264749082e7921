import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Codex } from '../api/types';
import { baseRoutes, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { CodexPanel } from './CodexPanel';

const block = '[model_providers.ccmesh]\nname = "ccmesh"\nbase_url = "http://127.0.0.1:3457/v1"\nenv_key = "CCMESH_API_KEY"\nwire_api = "responses"\nsupports_websockets = false\n';

function preview(over: Partial<Codex> = {}): Codex {
  return {
    base_url: 'http://127.0.0.1:3457/v1',
    block,
    exports: "export CCMESH_API_KEY='ccmesh'\n",
    config_path: '/home/u/.codex/config.toml',
    current: 'model = "o3"\nmodel_provider = "openai"\n',
    proposed: `model = "o3"\nmodel_provider = "ccmesh"\n\n${block}`,
    hash: 'c'.repeat(64),
    env: "export CCMESH_API_KEY='ccmesh'\n",
    preview: `model = "o3"\nmodel_provider = "ccmesh"\n\n${block}`,
    ...over,
  };
}

describe('Connect Codex', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('shows the block and export line to copy, previews the change as a diff and applies it by its hash', async () => {
    let shown = preview();
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/codex': () => ({ body: shown }),
      'POST /api/codex/apply': () => {
        shown = preview({ current: shown.proposed, hash: 'd'.repeat(64) });
        return { body: { config_path: '/home/u/.codex/config.toml', backup_path: '/home/u/.codex/config.toml.ccmesh-backup-20261201-101500' } };
      },
    });
    const user = userEvent.setup();
    renderApp(<CodexPanel />);
    expect(await screen.findByTestId('codex-block')).toHaveTextContent('wire_api = "responses"');
    expect(screen.getByTestId('codex-exports')).toHaveTextContent("export CCMESH_API_KEY='ccmesh'");
    expect(screen.getByRole('button', { name: 'Copy provider block' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Copy export line' })).toBeInTheDocument();
    expect(screen.getByText('Or let ccmesh make the change in /home/u/.codex/config.toml')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Show the change' }));
    const diff = screen.getByTestId('codex-diff');
    expect(diff.querySelector('.diff-removed')).toHaveTextContent('- model_provider = "openai"');
    expect([...diff.querySelectorAll('.diff-added')].map((e) => e.textContent?.trim())).toContain('+ model_provider = "ccmesh"');
    expect(diff.querySelector('.diff-same')).toHaveTextContent('model = "o3"');
    await user.click(screen.getByRole('button', { name: 'Write config.toml' }));

    expect(await screen.findByRole('status')).toHaveTextContent('Backup kept at /home/u/.codex/config.toml.ccmesh-backup-20261201-101500');
    expect(calls.filter((c) => c.method === 'POST')).toEqual([{ method: 'POST', path: '/api/codex/apply', body: { hash: 'c'.repeat(64) } }]);
    expect(await screen.findByTestId('codex-unchanged')).toHaveTextContent('already selects ccmesh');
  });

  it('says in words that the file changed since the preview, and shows the change as it is now', async () => {
    let shown = preview();
    stubFetch({
      ...baseRoutes([]),
      'GET /api/codex': () => ({ body: shown }),
      'POST /api/codex/apply': { status: 409, body: { error: { code: 'codex_config_changed', field: 'hash', message: '/home/u/.codex/config.toml (or ccmesh’s address) changed since the preview' } } },
    });
    const user = userEvent.setup();
    renderApp(<CodexPanel />);
    await user.click(await screen.findByRole('button', { name: 'Show the change' }));
    shown = preview({ current: 'model = "gpt-5"\n', hash: 'e'.repeat(64) });
    await user.click(screen.getByRole('button', { name: 'Write config.toml' }));
    expect(await screen.findByTestId('codex-error')).toHaveTextContent('config.toml changed since the preview, so nothing was written.');
    await waitFor(() => expect(screen.getByTestId('codex-diff')).toHaveTextContent('model = "gpt-5"'));
  });

  it('says in words when the file cannot be edited or read', async () => {
    stubFetch({
      ...baseRoutes([]),
      'GET /api/codex': { status: 409, body: { error: { code: 'codex_config_unreadable', message: '/home/u/.codex/config.toml is not valid TOML (toml: line 1)' } } },
    });
    renderApp(<CodexPanel />);
    const err = await screen.findByTestId('codex-error');
    expect(err).toHaveTextContent('config.toml is not valid TOML, so ccmesh will not touch it.');
    expect(err).toHaveTextContent('(toml: line 1)');
    expect(err).not.toHaveTextContent('codex_config_unreadable');
  });

  it('says it in Chinese too', async () => {
    stubFetch({
      ...baseRoutes([]),
      'GET /api/codex': { status: 409, body: { error: { code: 'codex_config_uneditable', message: 'cannot change' } } },
    });
    renderApp(<CodexPanel />, 'zh-CN');
    expect(await screen.findByRole('heading', { name: '连接 Codex' })).toBeInTheDocument();
    expect(await screen.findByTestId('codex-error')).toHaveTextContent('ccmesh 无法安全地修改 config.toml');
  });
});
