import { act, render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import { Root } from './Root';
import { baseRoutes, endpoint, health, stubEventSource, stubFetch } from './test/utils';

const noStats = { 'GET /api/stats': { body: { buckets: [] } }, 'GET /api/logs': { body: { items: [], next_before: null } } };

describe('the page', () => {
  beforeEach(() => window.history.replaceState(null, '', '/'));

  it('asks for the start-up link when the API answers 401', async () => {
    stubEventSource();
    const unauthorized = { status: 401, body: { error: { code: 'unauthorized', message: 'admin token missing or wrong' } } };
    stubFetch({ 'GET /api/info': unauthorized, 'GET /api/endpoints': unauthorized, 'GET /api/health': unauthorized, 'GET /api/settings': unauthorized });
    render(<Root />);
    expect(await screen.findByRole('alert')).toHaveTextContent('Open the link printed at start-up');
  });

  it('shows the proxy address and healthy count, and switches to Chinese (saved in settings)', async () => {
    stubEventSource();
    const calls = stubFetch({
      ...baseRoutes([endpoint({ id: 1, name: 'a' }), endpoint({ id: 2, name: 'b' })], [health({ id: 1, name: 'a' }), health({ id: 2, name: 'b', status: 'unhealthy', state: 'open', reason: 'broken', retry_in_ms: 5000 })]),
      'PUT /api/settings': { body: { language: 'zh-CN' } },
      ...noStats,
    });
    const user = userEvent.setup();
    render(<Root />);
    expect(await screen.findByTestId('proxy-url')).toHaveTextContent('http://127.0.0.1:3457');
    expect(await screen.findByTestId('health-count')).toHaveTextContent('1/2 healthy');

    // The dashboard is the first screen.
    expect(screen.getByRole('tab', { name: 'Dashboard' })).toHaveAttribute('aria-selected', 'true');
    // The dashboard is a lazy chunk: its first import may take longer than findBy's default second.
    expect(await screen.findByTestId('dash-endpoint-b', {}, { timeout: 10_000 })).toHaveTextContent('unhealthy');
    await user.click(screen.getByRole('tab', { name: 'Endpoints' }));
    await user.selectOptions(screen.getByLabelText('Language'), 'zh-CN');
    expect(screen.getByRole('tab', { name: '端点' })).toBeInTheDocument();
    expect(screen.getByRole('tab', { name: '概览' })).toBeInTheDocument();
    expect(screen.getByTestId('health-count')).toHaveTextContent('1/2 健康');
    expect(within(screen.getByTestId('endpoint-card-b')).getByTestId('status-badge')).toHaveTextContent('熔断');
    expect(calls.find((c) => c.method === 'PUT')).toMatchObject({ path: '/api/settings', body: { language: 'zh-CN' } });
  });

  it('moves between tabs with the arrow keys, Home and End; Tab reaches only the selected one', async () => {
    stubEventSource();
    stubFetch({ ...baseRoutes([]), ...noStats });
    render(<Root />);
    const user = userEvent.setup();
    const dashboard = await screen.findByRole('tab', { name: 'Dashboard' });
    expect(dashboard).toHaveAttribute('tabindex', '0');
    expect(screen.getByRole('tab', { name: 'Logs' })).toHaveAttribute('tabindex', '-1');
    dashboard.focus();
    await user.keyboard('{ArrowRight}');
    expect(screen.getByRole('tab', { name: 'Endpoints' })).toHaveFocus();
    expect(screen.getByRole('tab', { name: 'Endpoints' })).toHaveAttribute('aria-selected', 'true');
    await user.keyboard('{End}');
    expect(screen.getByRole('tab', { name: 'Settings' })).toHaveFocus();
    await user.keyboard('{ArrowRight}'); // wraps round
    expect(screen.getByRole('tab', { name: 'Dashboard' })).toHaveAttribute('aria-selected', 'true');
    await user.keyboard('{ArrowLeft}');
    expect(screen.getByRole('tab', { name: 'Settings' })).toHaveAttribute('aria-selected', 'true');
    await user.keyboard('{Home}');
    expect(screen.getByRole('tab', { name: 'Dashboard' })).toHaveFocus();
    expect(window.location.hash).toBe('#/dashboard');
  });

  it('pauses for 15 minutes from the header and shows until when; Resume ends it', async () => {
    const es = stubEventSource();
    const until = '2026-12-01T10:15:00Z';
    const calls = stubFetch({
      ...baseRoutes([]),
      ...noStats,
      'POST /api/pause': { body: { paused: true, paused_until: until } },
      'POST /api/resume': { body: { paused: false, paused_until: null } },
    });
    render(<Root />);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Pause 15 min' }));
    expect(calls.find((c) => c.path === '/api/pause')).toMatchObject({ method: 'POST', body: { minutes: 15 } });
    expect(calls.some((c) => c.path === '/api/resume')).toBe(false);
    // The window changes when the info event comes, as for a pause made in the tray.
    act(() => es.instances[0].emit('info', { paused: true, paused_until: until }));
    expect(await screen.findByTestId('paused')).toHaveTextContent(/^Proxy paused until \d\d:\d\d$/);
    await user.click(screen.getByRole('button', { name: 'Resume' }));
    expect(calls.find((c) => c.path === '/api/resume')).toMatchObject({ method: 'POST' });
    act(() => es.instances[0].emit('info', { paused: false, paused_until: null }));
    expect(screen.queryByTestId('paused')).toBeNull();
  });

  it('leads from the welcome to the add form, and from a failover to its timeline', async () => {
    stubEventSource();
    stubFetch({ ...baseRoutes([]), ...noStats });
    render(<Root />);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Add endpoint' }));
    expect(screen.getByRole('tab', { name: 'Endpoints' })).toHaveAttribute('aria-selected', 'true');
    // Add endpoint starts at the preset list; Custom is the empty form.
    expect(screen.getByRole('heading', { name: 'Start from a provider' })).toBeInTheDocument();
    await user.click(await screen.findByRole('button', { name: 'Custom' }));
    expect(screen.getByRole('heading', { name: 'Add endpoint' })).toBeInTheDocument();
    expect(window.location.hash).toBe('#/endpoints');
  });

  it('opens the timeline of a failover the dashboard links to', async () => {
    stubEventSource();
    const row = {
      id: 11, at: '2026-11-30T08:01:00Z', protocol: 'anthropic', path: '/v1/messages', model_asked: 'm', model_forwarded: 'm', explicit: false,
      endpoint_id: 1, endpoint: 'a', status: 200, attempts: 2, duration_ms: 10, ttfb_ms: 5, stream: false, stream_end: '', tokens_in: 0, tokens_out: 0,
      sent_upstream: true, client_gone: false, error: '',
    };
    stubFetch({
      ...baseRoutes([endpoint({ id: 1, name: 'a' })]),
      'GET /api/stats': { body: { buckets: [] } },
      'GET /api/logs': { body: { items: [row], next_before: null } },
      'GET /api/logs/11': { body: { ...row, history: [] } },
    });
    const user = userEvent.setup();
    render(<Root />);
    await user.click(await screen.findByRole('link', { name: 'Show timeline' }));
    expect(await screen.findByTestId('log-detail')).toHaveAccessibleName('Request 11');
    expect(screen.getByRole('tab', { name: 'Logs' })).toHaveAttribute('aria-selected', 'true');
  });
});
