import { screen, waitFor } from '@testing-library/react';
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

  it('offers hedging and says a hedge may be billed', async () => {
    stubFetch({ ...baseRoutes([]), 'GET /api/settings': { body: { language: '', strategy: 'sticky', hedge_after_ms: 300 } } });
    renderApp(<SettingsPanel />);
    expect(await screen.findByLabelText('Hedge after (ms, 0 = off)')).toHaveValue('300');
    expect(screen.getByTestId('hedge-help')).toHaveTextContent('may still be billed');
  });

  it('explains the strategy chosen, the session one included', async () => {
    stubFetch({ ...baseRoutes([]), 'GET /api/settings': { body: { language: '', strategy: 'sticky' } } });
    renderApp(<SettingsPanel />);
    expect(await screen.findByText(/same endpoint until it fails/)).toHaveAttribute('data-testid', 'strategy-help');
    await userEvent.selectOptions(screen.getByLabelText('Strategy'), 'session');
    expect(screen.getByTestId('strategy-help')).toHaveTextContent('Each conversation keeps its own endpoint');
  });

  // docs/BEHAVIOUR.md#capture-and-resend
  it('sets capture with its help, and never sends the price rows with the settings', async () => {
    const prices = [{ model: 'my-model', input: 1, output: 2 }];
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/settings': { body: { language: '', strategy: 'sticky', capture: 'off', prices } },
      'PUT /api/settings': (c) => ({ body: { language: '', strategy: 'sticky', prices, ...(c.body as object) } }),
    });
    const user = userEvent.setup();
    renderApp(<SettingsPanel />);
    const capture = await screen.findByLabelText('Capture requests');
    expect(capture).toHaveValue('off');
    expect(screen.getByRole('option', { name: 'errors only' })).toBeInTheDocument();
    expect(screen.getByTestId('capture-help')).toHaveTextContent('Nothing is kept beyond the request log row.');
    expect(screen.getByTestId('capture-help')).toHaveTextContent('up to the body cap');
    expect(screen.getByTestId('capture-help')).toHaveTextContent('API keys, tokens and cookies are removed before anything is stored.');
    await user.selectOptions(capture, 'all');
    expect(screen.getByTestId('capture-help')).toHaveTextContent('Kept for every request.');
    await user.click(screen.getByRole('button', { name: 'Save settings' }));

    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    const put = calls.find((c) => c.method === 'PUT')!;
    expect(put.path).toBe('/api/settings');
    expect(put.body).toMatchObject({ capture: 'all', strategy: 'sticky' });
    expect('prices' in (put.body as object)).toBe(false);
  });

  // docs/BEHAVIOUR.md#capture-and-resend: the caps are settings.
  it('shows the capture caps and saves them', async () => {
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/settings': { body: { language: '', strategy: 'sticky', capture: 'all', capture_body_bytes: 1048576, capture_total_bytes: 268435456 } },
      'PUT /api/settings': (c) => ({ body: { language: '', strategy: 'sticky', ...(c.body as object) } }),
    });
    const user = userEvent.setup();
    renderApp(<SettingsPanel />);
    const body = await screen.findByLabelText('Capture: cap per body (bytes)');
    expect(body).toHaveValue('1048576');
    expect(screen.getByLabelText('Capture: total cap (bytes)')).toHaveValue('268435456');
    await user.clear(body);
    await user.type(body, '2048');
    await user.click(screen.getByRole('button', { name: 'Save settings' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    expect(calls.find((c) => c.method === 'PUT')!.body).toMatchObject({ capture_body_bytes: 2048, capture_total_bytes: 268435456 });
  });

  it('labels the capture caps in Chinese too', async () => {
    stubFetch({ ...baseRoutes([]), 'GET /api/settings': { body: { language: '', strategy: 'sticky', capture_body_bytes: 1024, capture_total_bytes: 1048576 } } });
    renderApp(<SettingsPanel />, 'zh-CN');
    expect(await screen.findByLabelText('记录：每个请求体上限（字节）')).toHaveValue('1024');
    expect(screen.getByLabelText('记录：合计上限（字节）')).toHaveValue('1048576');
  });

  it('has Connect Codex beside Connect Claude Code', async () => {
    stubFetch(baseRoutes([]));
    renderApp(<SettingsPanel />);
    expect(await screen.findByRole('heading', { name: 'Connect Claude Code' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Connect Codex' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Prices' })).toBeInTheDocument();
  });
});

describe('settings and routing rules', () => {
  it('leaves the rules out of its save: the Routing tab saves them', async () => {
    stubEventSource();
    const rules = [{ name: 'r', when: {}, then: { endpoints: ['a'], fallback: true } }];
    const calls = stubFetch({
      ...baseRoutes([]),
      'GET /api/settings': { body: { language: '', strategy: 'sticky', rules } },
      'PUT /api/settings': (c) => ({ body: { language: '', strategy: 'sticky', rules, ...(c.body as object) } }),
    });
    const user = userEvent.setup();
    renderApp(<SettingsPanel />);
    await user.selectOptions(await screen.findByLabelText('Strategy'), 'fastest');
    await user.click(screen.getByRole('button', { name: 'Save settings' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    const body = calls.find((c) => c.method === 'PUT')!.body as Record<string, unknown>;
    expect(body.strategy).toBe('fastest');
    expect('rules' in body).toBe(false);
  });
});
