import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CaptureReply, LogDetail, LogRow } from '../api/types';
import { baseRoutes, endpoint, renderApp, stubEventSource, stubFetch } from '../test/utils';
import { LogsPanel } from './LogsPanel';

const row: LogRow = {
  id: 7, at: '2026-11-30T08:01:00Z', protocol: 'anthropic', path: '/v1/messages', model_asked: 'claude-sonnet-4-5', model_forwarded: 'claude-sonnet-4-5',
  explicit: false, endpoint_id: 1, endpoint: 'alpha', status: 200, attempts: 1, duration_ms: 30, ttfb_ms: 10, stream: true, stream_end: 'complete',
  tokens_in: 5, tokens_out: 1, sent_upstream: true, client_gone: false, error: '', usage: null, cost_usd: null, rule: '',
};
const detail: LogDetail = { ...row, routing: { strategy: 'sticky', candidates: [], excluded: [] }, history: [] };

const sse = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","content":[]}}',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"po"}}',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ng"}}',
  'event: message_stop\ndata: {"type":"message_stop"}',
  '',
].join('\n\n');

const capture: CaptureReply = {
  request: {
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'user-agent': 'claude-cli/2.0' },
    body: '{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"ping"}]}',
    truncated: false,
  },
  response: { status: 200, headers: { 'content-type': 'text/event-stream' }, body: sse, truncated: true },
};

const endpoints = [endpoint({ id: 1, name: 'alpha' }), endpoint({ id: 2, name: 'beta', sort_order: 1 })];

async function openRow(routes: Parameters<typeof stubFetch>[0], r: LogRow = row) {
  const calls = stubFetch({ ...baseRoutes(endpoints), 'GET /api/logs': { body: { items: [r], next_before: null } }, ...routes });
  const user = userEvent.setup();
  renderApp(<LogsPanel />);
  await user.click(await screen.findByRole('button', { name: `Request ${r.id}` }));
  return { calls, user, drawer: await screen.findByTestId('log-detail') };
}

describe('log detail: capture', () => {
  beforeEach(() => {
    stubEventSource();
  });

  it('shows the request headers and pretty JSON body, and a stream’s message text with its raw events folded', async () => {
    const { drawer } = await openRow({ 'GET /api/logs/7': { body: detail }, 'GET /api/logs/7/capture': { body: capture } });
    const req = await within(drawer).findByTestId('capture-request');
    const headers = within(req).getByRole('table', { name: 'Request headers' });
    expect(within(headers).getByText('anthropic-version').closest('tr')).toHaveTextContent('2023-06-01');
    const body = within(req).getByTestId('capture-request-body');
    expect(body.textContent).toBe(JSON.stringify(JSON.parse(capture.request.body), null, 2));
    expect(within(req).queryByTestId('capture-truncated')).toBeNull();

    const res = within(drawer).getByTestId('capture-response');
    expect(within(res).getByTestId('capture-status')).toHaveTextContent('status 200');
    expect(within(res).getByTestId('capture-response-body')).toHaveTextContent(/^pong$/);
    const raw = within(res).getByTestId('capture-raw-events');
    expect(raw).not.toHaveAttribute('open');
    expect(raw).toHaveTextContent('Raw events (4)');
    expect(raw).toHaveTextContent('event: message_start');
    expect(within(res).getByTestId('capture-truncated')).toHaveTextContent('truncated');
  });

  it('shows a JSON response pretty-printed', async () => {
    const json = { ...capture, response: { status: 529, headers: { 'content-type': 'application/json' }, body: '{"type":"error","error":{"type":"overloaded_error"}}', truncated: false } };
    const { drawer } = await openRow({ 'GET /api/logs/7': { body: { ...detail, stream: false } }, 'GET /api/logs/7/capture': { body: json } });
    const res = await within(drawer).findByTestId('capture-response');
    expect(within(res).getByTestId('capture-status')).toHaveTextContent('status 529');
    expect(within(res).getByTestId('capture-response-body').textContent).toBe('{\n  "type": "error",\n  "error": {\n    "type": "overloaded_error"\n  }\n}');
    expect(within(res).queryByTestId('capture-raw-events')).toBeNull();
  });

  it('says how to get captures when the row has none', async () => {
    const { drawer } = await openRow({
      'GET /api/logs/7': { body: detail },
      'GET /api/logs/7/capture': { status: 404, body: { error: { code: 'no_capture', message: 'request log 7 has no capture' } } },
    });
    const none = await within(drawer).findByTestId('no-capture');
    expect(none).toHaveTextContent('Not captured; turn capture on in Settings');
    expect(within(none).getByRole('link', { name: 'Open Settings' })).toHaveAttribute('href', '#/settings');
    expect(within(drawer).queryByRole('button', { name: 'Resend' })).toBeNull();
  });

  it('resends to a chosen endpoint with stream off and links the new row beside the original', async () => {
    const { drawer, calls, user } = await openRow({
      'GET /api/logs/7': { body: detail },
      'GET /api/logs/7/capture': { body: capture },
      'POST /api/logs/7/resend': { body: { log_id: 12, status: 200, endpoint: 'beta' } },
    });
    const form = await within(drawer).findByTestId('resend-form');
    const target = within(form).getByLabelText('Send to');
    expect(within(target).getAllByRole('option').map((o) => o.textContent)).toEqual(['normal routing', 'alpha', 'beta']);
    const stream = within(form).getByRole('switch', { name: 'Stream' });
    expect(stream).toBeChecked(); // as the original was sent
    await user.selectOptions(target, 'beta');
    await user.click(stream);
    await user.click(within(form).getByRole('button', { name: 'Resend' }));

    const result = await within(form).findByTestId('resend-result');
    expect(result).toHaveTextContent('Resent: status 200 from beta.');
    expect(within(result).getByRole('link', { name: 'Open request #12' })).toHaveAttribute('href', '#/logs/12');
    expect(calls.find((c) => c.method === 'POST')).toEqual({ method: 'POST', path: '/api/logs/7/resend', body: { endpoint: 'beta', stream: false } });
  });

  it('resends through normal routing without naming an endpoint, and says a refusal in words', async () => {
    const { drawer, calls, user } = await openRow({
      'GET /api/logs/7': { body: detail },
      'GET /api/logs/7/capture': { body: capture },
      'POST /api/logs/7/resend': { status: 422, body: { error: { code: 'unknown_endpoint', field: 'endpoint', message: 'no endpoint is named "x"' } } },
    });
    await user.click(await within(drawer).findByRole('button', { name: 'Resend' }));
    expect(await within(drawer).findByRole('alert')).toHaveTextContent('No endpoint has that name any more.');
    expect(calls.find((c) => c.method === 'POST')?.body).toEqual({}); // as it was sent, routed normally
  });

  it('cannot resend a request whose body was cut', async () => {
    const cut = { ...capture, request: { ...capture.request, body: '{"model":"claude', truncated: true } };
    const { drawer } = await openRow({ 'GET /api/logs/7': { body: detail }, 'GET /api/logs/7/capture': { body: cut } });
    const req = await within(drawer).findByTestId('capture-request');
    expect(within(req).getByTestId('capture-truncated')).toBeInTheDocument();
    expect(within(req).getByTestId('capture-request-body')).toHaveTextContent('{"model":"claude');
    expect(within(drawer).getByRole('button', { name: 'Resend' })).toBeDisabled();
    expect(within(drawer).getByRole('button', { name: 'Copy as curl' })).toBeDisabled();
    expect(within(drawer).getByTestId('resend-form')).toHaveTextContent('cannot be sent again');
  });

  it('copies the request as a curl command', async () => {
    const command = "curl -sS -X POST 'http://127.0.0.1:3457/v1/messages' \\\n  -H \"x-api-key: $CCMESH_KEY\"";
    const { drawer, user } = await openRow({
      'GET /api/logs/7': { body: detail },
      'GET /api/logs/7/capture': { body: capture },
      'GET /api/logs/7/curl': { body: { command } },
    });
    await user.click(await within(drawer).findByRole('button', { name: 'Copy as curl' }));
    await waitFor(() => expect(within(drawer).getByTestId('curl-command').textContent).toBe(command));
    expect(await navigator.clipboard.readText()).toBe(command);
  });

  it('marks a resent row in the list and links its detail back to the original', async () => {
    const resent = { ...row, id: 12, resent_from: 7 };
    const { drawer, user } = await openRow(
      {
        'GET /api/logs/12': { body: { ...detail, ...resent } },
        'GET /api/logs/12/capture': { body: capture },
        'GET /api/logs/7': { body: detail },
        'GET /api/logs/7/capture': { body: capture },
      },
      resent,
    );
    expect(screen.getByTestId('row-resent-from')).toHaveTextContent('resent from #7');
    const back = within(within(drawer).getByTestId('resent-from')).getByRole('link', { name: 'resent from #7' });
    expect(back).toHaveAttribute('href', '#/logs/7');
    // Followed in place, even when the address already names that request.
    window.history.replaceState(null, '', '#/logs/7');
    await user.click(back);
    await waitFor(() => expect(screen.getByTestId('log-detail')).toHaveAccessibleName('Request 7'));
    expect(window.location.hash).toBe('#/logs/7');
  });

  it('says it in Chinese too', async () => {
    stubFetch({
      ...baseRoutes(endpoints),
      'GET /api/logs': { body: { items: [{ ...row, resent_from: 3 }], next_before: null } },
      'GET /api/logs/7': { body: detail },
      'GET /api/logs/7/capture': { status: 404, body: { error: { code: 'no_capture', message: 'no capture' } } },
    });
    const user = userEvent.setup();
    renderApp(<LogsPanel />, 'zh-CN');
    expect(await screen.findByTestId('row-resent-from')).toHaveTextContent('重发自 #3');
    await user.click(screen.getByTestId('log-row'));
    expect(await screen.findByTestId('no-capture')).toHaveTextContent('未记录');
  });
});
