import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ClaudeCode } from '../api/types';
import { baseRoutes, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { ClaudeCodePanel } from './ClaudeCodePanel';

function preview(over: Partial<ClaudeCode> = {}): ClaudeCode {
  return {
    base_url: 'http://127.0.0.1:3457',
    exports: "export ANTHROPIC_BASE_URL='http://127.0.0.1:3457'\n",
    settings_path: '/home/u/.claude/settings.json',
    current: '{"model":"opus"}',
    proposed: '{\n  "env": {\n    "ANTHROPIC_BASE_URL": "http://127.0.0.1:3457"\n  },\n  "model": "opus"\n}\n',
    hash: 'a'.repeat(64),
    ...over,
  };
}

describe('Connect Claude Code', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('applies the change it showed, naming it by the preview hash', async () => {
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/claude-code': { body: preview() },
      'POST /api/claude-code/apply': { body: { settings_path: '/home/u/.claude/settings.json', backup_path: '/home/u/.claude/settings.json.bak' } },
    });
    const user = userEvent.setup();
    renderApp(<ClaudeCodePanel />);
    await user.click(await screen.findByRole('button', { name: 'Show the change' }));
    expect(screen.getByTestId('claude-current')).toHaveTextContent('{"model":"opus"}');
    await user.click(screen.getByRole('button', { name: 'Write settings.json' }));

    expect(await screen.findByRole('status')).toHaveTextContent('Backup kept at /home/u/.claude/settings.json.bak');
    expect(calls.filter((c) => c.method === 'POST')).toEqual([{ method: 'POST', path: '/api/claude-code/apply', body: { hash: 'a'.repeat(64) } }]);
  });

  it('shows the file as it is now when it changed since the preview', async () => {
    let current = preview();
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/claude-code': () => ({ body: current }),
      'POST /api/claude-code/apply': (call) =>
        (call.body as { hash: string }).hash === current.hash
          ? { body: { settings_path: current.settings_path, backup_path: '' } }
          : { status: 409, body: { error: { code: 'claude_settings_changed', message: 'settings.json changed since the preview', field: 'hash' } } },
    });
    const user = userEvent.setup();
    renderApp(<ClaudeCodePanel />);
    await user.click(await screen.findByRole('button', { name: 'Show the change' }));
    current = preview({ current: '{"model":"sonnet"}', hash: 'b'.repeat(64) }); // edited elsewhere
    await user.click(screen.getByRole('button', { name: 'Write settings.json' }));

    expect(await screen.findByRole('alert')).toHaveTextContent('settings.json changed since the preview');
    await waitFor(() => expect(screen.getByTestId('claude-current')).toHaveTextContent('{"model":"sonnet"}'));
    await user.click(screen.getByRole('button', { name: 'Write settings.json' }));
    await waitFor(() => expect(calls.filter((c) => c.method === 'POST')).toHaveLength(2));
    expect(calls.filter((c) => c.method === 'POST').map((c) => c.body)).toEqual([{ hash: 'a'.repeat(64) }, { hash: 'b'.repeat(64) }]);
  });
});
