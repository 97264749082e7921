import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { GeminiCLI } from '../api/types';
import { baseRoutes, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { GeminiCLIPanel } from './GeminiCLIPanel';

const envPath = '/home/u/.gemini/.env';
const settingsPath = '/home/u/.gemini/settings.json';
const exportsText = "export GOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'\nexport GEMINI_API_KEY='ccmesh'\n";
const envNew = "# mine\nGEMINI_API_KEY='ccmesh'\nGOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'\n";
const settingsNew = '{\n  "privacy": {\n    "usageStatisticsEnabled": false\n  },\n  "security": {\n    "auth": {\n      "selectedType": "gemini-api-key"\n    }\n  }\n}\n';

function preview(envCurrent = '# mine\nGEMINI_API_KEY=old\n', settingsCurrent = '', hash = 'c'.repeat(64)): GeminiCLI {
  return {
    base_url: 'http://127.0.0.1:3457',
    exports: exportsText,
    files: [
      { name: 'env', path: envPath, current: envCurrent, proposed: envNew },
      { name: 'settings', path: settingsPath, current: settingsCurrent, proposed: settingsNew },
    ],
    hash,
  };
}

describe('Connect Gemini CLI', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('shows the lines to copy and why settings.json changes, previews both files and applies them by one hash', async () => {
    let shown = preview();
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/gemini-cli': () => ({ body: shown }),
      'POST /api/gemini-cli/apply': () => {
        shown = preview(envNew, settingsNew, 'd'.repeat(64));
        return { body: { env_path: envPath, env_backup_path: `${envPath}.ccmesh-backup-20261202-011500`, settings_path: settingsPath, settings_backup_path: '' } };
      },
    });
    const user = userEvent.setup();
    renderApp(<GeminiCLIPanel />);
    expect(await screen.findByTestId('gemini-exports')).toHaveTextContent("export GOOGLE_GEMINI_BASE_URL='http://127.0.0.1:3457'");
    expect(screen.getByRole('button', { name: 'Copy export lines' })).toBeInTheDocument();
    expect(screen.getByText(`Or let ccmesh set them in Gemini CLI’s own files: ${envPath}, ${settingsPath}`)).toBeInTheDocument();
    expect(screen.getByTestId('gemini-privacy')).toHaveTextContent('play.googleapis.com');

    await user.click(screen.getByRole('button', { name: 'Show the change' }));
    const env = screen.getByTestId('gemini-env-diff');
    expect(env.querySelector('.diff-removed')).toHaveTextContent('- GEMINI_API_KEY=old');
    expect(env.querySelector('.diff-same')).toHaveTextContent('# mine');
    expect(screen.getByRole('heading', { name: `The new file ${settingsPath}` })).toBeInTheDocument();
    expect(screen.getByTestId('gemini-settings-diff')).toHaveTextContent('"usageStatisticsEnabled": false');
    expect(screen.getByTestId('gemini-settings')).toHaveTextContent('privacy.usageStatisticsEnabled false stops the usage statistics');
    await user.click(screen.getByRole('button', { name: 'Write both files' }));

    expect(await screen.findByRole('status')).toHaveTextContent(`Backups kept at ${envPath}.ccmesh-backup-20261202-011500`);
    expect(calls.filter((c) => c.method === 'POST')).toEqual([{ method: 'POST', path: '/api/gemini-cli/apply', body: { hash: 'c'.repeat(64) } }]);
    expect(await screen.findByTestId('gemini-unchanged')).toHaveTextContent('already point Gemini CLI at ccmesh');
    // Many steps, and the first test of the file pays for the first render: more than the default 5 s on a busy machine.
  }, 15_000);

  it('says in words that a file changed since the preview, and shows the change as it is now', async () => {
    let shown = preview();
    stubFetch({
      ...baseRoutes([]),
      'GET /api/gemini-cli': () => ({ body: shown }),
      'POST /api/gemini-cli/apply': { status: 409, body: { error: { code: 'gemini_config_changed', field: 'hash', message: `${envPath} or ${settingsPath} (or ccmesh’s address) changed since the preview` } } },
    });
    const user = userEvent.setup();
    renderApp(<GeminiCLIPanel />);
    await user.click(await screen.findByRole('button', { name: 'Show the change' }));
    shown = preview('DEBUG=1\n', '', 'e'.repeat(64));
    await user.click(screen.getByRole('button', { name: 'Write both files' }));
    expect(await screen.findByTestId('gemini-error')).toHaveTextContent('A file changed since the preview, so nothing was written.');
    await waitFor(() => expect(screen.getByTestId('gemini-env-diff')).toHaveTextContent('DEBUG=1'));
  });

  it('says which file was written when only one was', async () => {
    stubFetch({
      ...baseRoutes([]),
      'GET /api/gemini-cli': () => ({ body: preview() }),
      'POST /api/gemini-cli/apply': { status: 500, body: { error: { code: 'client_config_partly_written', message: `${envPath} was written; ${settingsPath} was not: replace: permission denied` } } },
    });
    const user = userEvent.setup();
    renderApp(<GeminiCLIPanel />);
    await user.click(await screen.findByRole('button', { name: 'Show the change' }));
    await user.click(screen.getByRole('button', { name: 'Write both files' }));
    const err = await screen.findByTestId('gemini-error');
    expect(err).toHaveTextContent('Only one of the two files was written');
    expect(err).toHaveTextContent(`${envPath} was written`);
  });

  it('says it in Chinese too', async () => {
    stubFetch({
      ...baseRoutes([]),
      'GET /api/gemini-cli': { status: 409, body: { error: { code: 'gemini_settings_unreadable', message: `${settingsPath} is not JSON` } } },
    });
    renderApp(<GeminiCLIPanel />, 'zh-CN');
    expect(await screen.findByRole('heading', { name: '连接 Gemini CLI' })).toBeInTheDocument();
    expect(await screen.findByTestId('gemini-error')).toHaveTextContent('settings.json 不是 ccmesh 能读取的 JSON');
  });
});
