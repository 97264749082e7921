import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { baseRoutes, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { SettingsPanel } from './SettingsPanel';

describe('settings', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('shows the request log rows lost since start', async () => {
    const routes = baseRoutes([]);
    stubFetch({
      ...routes,
      'GET /api/info': { body: { ...(routes['GET /api/info'] as { body: object }).body, log_rows_dropped: 3, log_rows_failed: 7 } },
    });
    renderApp(<SettingsPanel />);
    const lost = await screen.findByTestId('log-rows-lost');
    expect(lost).toHaveTextContent('Request log rows dropped since start (queue full): 3');
    expect(lost).toHaveTextContent('not written (see ccmesh.log): 7');
  });

  it('says it in Chinese too', async () => {
    const routes = baseRoutes([]);
    stubFetch({
      ...routes,
      'GET /api/info': { body: { ...(routes['GET /api/info'] as { body: object }).body, log_rows_dropped: 0, log_rows_failed: 2 } },
    });
    renderApp(<SettingsPanel />, 'zh-CN');
    expect(await screen.findByTestId('log-rows-lost')).toHaveTextContent('未能写入（见 ccmesh.log）：2');
  });

  it('explains the strategy chosen, the session one included', async () => {
    stubFetch({ ...baseRoutes([]), 'GET /api/settings': { body: { language: '', strategy: 'sticky' } } });
    renderApp(<SettingsPanel />);
    expect(await screen.findByText(/same endpoint until it fails/)).toHaveAttribute('data-testid', 'strategy-help');
    await userEvent.selectOptions(screen.getByLabelText('Strategy'), 'session');
    expect(screen.getByTestId('strategy-help')).toHaveTextContent('Each conversation keeps its own endpoint');
  });
});
