// Small fake upstreams for e2e traffic: an Anthropic-style /v1/messages that
// answers, fails with 503, or rate-limits with Retry-After; `echo` answers
// like `ok` with the key it was sent in the text, as upstreams do in errors.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Mode = 'ok' | 'fail' | 'ratelimit' | 'echo';

export interface Upstream {
  url: string;
  mode: Mode;
  hits: number;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((res, rej) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => res(Buffer.concat(chunks).toString('utf8')));
    req.on('error', rej);
  });
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function message(model: string, text = 'pong') {
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 5, output_tokens: 1 },
  };
}

function stream(res: ServerResponse, model: string, text = 'pong') {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  send('message_start', { type: 'message_start', message: { ...message(model), content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 0 } } });
  send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
  // The text in two deltas, "pong" and the rest, so a reader has to join them.
  send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: text.slice(0, 4) } });
  if (text.length > 4) send('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: text.slice(4) } });
  send('content_block_stop', { type: 'content_block_stop', index: 0 });
  send('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } });
  send('message_stop', { type: 'message_stop' });
  res.end();
}

export async function startUpstream(mode: Mode): Promise<Upstream> {
  const up: Upstream = { url: '', mode, hits: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const path = (req.url ?? '').split('?')[0];
      if (req.method === 'GET' && path === '/v1/models') {
        return json(res, 200, { data: [{ id: 'claude-sonnet-4-5', type: 'model' }, { id: 'claude-haiku-4-5', type: 'model' }], has_more: false });
      }
      if (req.method !== 'POST' || !path.startsWith('/v1/messages')) {
        return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: `fake upstream: no ${req.method} ${path}` } });
      }
      up.hits++;
      if (up.mode === 'fail') {
        return json(res, 503, { type: 'error', error: { type: 'overloaded_error', message: 'fake upstream is down' } });
      }
      if (up.mode === 'ratelimit') {
        return json(res, 429, { type: 'error', error: { type: 'rate_limit_error', message: 'fake upstream: slow down' } }, { 'retry-after': '45' });
      }
      let parsed: { model?: string; stream?: boolean } = {};
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        return json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'not JSON' } });
      }
      const key = String(req.headers['x-api-key'] ?? req.headers.authorization ?? '');
      const text = up.mode === 'echo' ? `pong (you sent the key ${key})` : 'pong';
      if (parsed.stream) return stream(res, parsed.model ?? 'unknown', text);
      return json(res, 200, message(parsed.model ?? 'unknown', text));
    })();
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  up.close = () =>
    new Promise<void>((res) => {
      server.closeAllConnections();
      server.close(() => res());
    });
  return up;
}
