// A fake upstream speaking Anthropic Messages (streamed and not,
// count_tokens) and OpenAI Chat Completions / Responses, with switchable
// faults. It answers every request so that clients never stall on it, and
// records what it was sent so tests can check what ccmesh forwarded.
import http from 'node:http';

// Faults a fake can be switched to (`upstream.fault = ...`).
export const Fault = Object.freeze({
  none: 'none',
  status500: 'status500', // an Anthropic/OpenAI-shaped 500
  reset: 'reset', // the connection is destroyed before any header
  dieAfterMessageStart: 'dieAfterMessageStart', // 200, message_start, then the socket dies
  creditTooLow: 'creditTooLow', // Anthropic's spent-credit 400 (docs/BEHAVIOUR.md#spent-quota)
  unauthorized: 'unauthorized', // 401: the endpoint's key is wrong
});

/** The text a healthy fake answers with; tests recognise the endpoint by it. */
export const answerOf = (name) => `answer from ${name}`;

/** The marker in a prompt that makes the fake ask for a Read tool call. */
export const TOOL_MARKER = 'E2E-READ-TOOL';

/**
 * startUpstream listens on 127.0.0.1 on a free port.
 * @param {string} name - used in answers and message ids
 * @param {{toolFile?: string}} [opts] - toolFile: the file the Read tool call asks for
 */
export async function startUpstream(name, opts = {}) {
  const up = {
    name,
    fault: Fault.none,
    requests: [], // {method, path, headers, body}
    url: '',
    server: null,
    close: () => new Promise((resolve) => { up.server.closeAllConnections(); up.server.close(resolve); }),
  };
  up.server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try { body = raw ? JSON.parse(raw) : null; } catch { body = null; }
      up.requests.push({ method: req.method, path: req.url, headers: req.headers, body });
      route(up, opts, req, res, body);
    });
  });
  await new Promise((resolve) => up.server.listen(0, '127.0.0.1', resolve));
  up.url = `http://127.0.0.1:${up.server.address().port}`;
  return up;
}

function route(up, opts, req, res, body) {
  const path = req.url.split('?')[0];
  if (up.fault === Fault.reset) {
    req.socket.resetAndDestroy();
    return;
  }
  if (req.method === 'GET' && path === '/v1/models') {
    return json(res, 200, { object: 'list', data: [{ id: 'gpt-e2e', object: 'model', owned_by: up.name }] });
  }
  if (req.method !== 'POST' || !body) {
    return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: `fake ${up.name}: no ${req.method} ${path}` } });
  }
  if (up.fault === Fault.status500) {
    return json(res, 500, { type: 'error', error: { type: 'api_error', message: 'Internal server error' } });
  }
  if (up.fault === Fault.creditTooLow) {
    return json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.' } });
  }
  if (up.fault === Fault.unauthorized) {
    return json(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
  }
  switch (path) {
    case '/v1/messages/count_tokens':
      return json(res, 200, { input_tokens: 42 });
    case '/v1/messages':
      return messages(up, opts, res, body);
    case '/v1/chat/completions':
      return chat(up, res, body);
    case '/v1/responses':
      return responses(up, res, body);
  }
  return json(res, 404, { error: { message: `fake ${up.name}: unknown path ${path}`, type: 'invalid_request_error' } });
}

function json(res, status, doc) {
  const b = JSON.stringify(doc);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) });
  res.end(b);
}

function sse(res) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

function event(res, name, data, done) {
  res.write(`${name ? `event: ${name}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`, done);
}

// --- Anthropic Messages --------------------------------------------------

/** The turn the fake takes: a Read tool call, the tool's result, or text. */
function anthropicTurn(up, opts, body) {
  const text = JSON.stringify(body.messages ?? []);
  const toolResult = findToolResult(body.messages ?? []);
  if (toolResult !== null) {
    return { kind: 'text', text: `${answerOf(up.name)}; the file says: ${toolResult}` };
  }
  if (opts.toolFile && text.includes(TOOL_MARKER) && (body.tools ?? []).some((t) => t.name === 'Read')) {
    return { kind: 'tool', id: `toolu_${up.name}_${up.requests.length}`, input: { file_path: opts.toolFile } };
  }
  return { kind: 'text', text: answerOf(up.name) };
}

function findToolResult(messages) {
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const block of m.content) {
      if (block.type !== 'tool_result') continue;
      const c = block.content;
      if (typeof c === 'string') return c;
      if (Array.isArray(c)) return c.map((x) => x.text ?? '').join('');
      return '';
    }
  }
  return null;
}

function messages(up, opts, res, body) {
  const turn = anthropicTurn(up, opts, body);
  const id = `msg_${up.name}_${up.requests.length}`;
  const content = turn.kind === 'tool'
    ? [{ type: 'tool_use', id: turn.id, name: 'Read', input: turn.input }]
    : [{ type: 'text', text: turn.text }];
  const stopReason = turn.kind === 'tool' ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: 12, output_tokens: 6, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (!body.stream) {
    return json(res, 200, { id, type: 'message', role: 'assistant', model: body.model, content, stop_reason: stopReason, stop_sequence: null, usage });
  }
  sse(res);
  const start = { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } };
  if (up.fault === Fault.dieAfterMessageStart) {
    // Once message_start is on the wire, the socket dies without an end.
    event(res, 'message_start', start, () => res.socket?.destroy());
    return;
  }
  event(res, 'message_start', start);
  event(res, 'ping', { type: 'ping' });
  if (turn.kind === 'tool') {
    event(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: turn.id, name: 'Read', input: {} } });
    event(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(turn.input) } });
  } else {
    event(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    // Two deltas: a client that got only one of them got half an answer.
    const half = Math.ceil(turn.text.length / 2);
    event(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: turn.text.slice(0, half) } });
    event(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: turn.text.slice(half) } });
  }
  event(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  event(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 6 } });
  event(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

// --- OpenAI Chat Completions ---------------------------------------------

function chat(up, res, body) {
  const id = `chatcmpl-${up.name}-${up.requests.length}`;
  const created = Math.floor(Date.now() / 1000);
  const text = answerOf(up.name);
  const usage = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 };
  if (!body.stream) {
    return json(res, 200, { id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }], usage });
  }
  sse(res);
  const chunk = (delta, finish = null) => ({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  event(res, '', chunk({ role: 'assistant', content: '' }));
  event(res, '', chunk({ content: text.slice(0, 6) }));
  event(res, '', chunk({ content: text.slice(6) }));
  event(res, '', chunk({}, 'stop'));
  if (body.stream_options?.include_usage) {
    event(res, '', { id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage });
  }
  event(res, '', '[DONE]');
  res.end();
}

// --- OpenAI Responses ----------------------------------------------------

function responses(up, res, body) {
  const id = `resp_${up.name}_${up.requests.length}`;
  const text = answerOf(up.name);
  const created = Math.floor(Date.now() / 1000);
  const msgId = `msg_${up.name}_${up.requests.length}`;
  const part = { type: 'output_text', text, annotations: [] };
  const item = { id: msgId, type: 'message', status: 'completed', role: 'assistant', content: [part] };
  const usage = { input_tokens: 9, output_tokens: 4, total_tokens: 13, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
  const response = (status, output, u = null) => ({ id, object: 'response', created_at: created, status, model: body.model, output, usage: u, error: null, incomplete_details: null, instructions: null, parallel_tool_calls: true, tool_choice: 'auto', tools: [], temperature: 1, top_p: 1, text: { format: { type: 'text' } } });
  if (!body.stream) {
    return json(res, 200, { ...response('completed', [item], usage), output_text: text });
  }
  sse(res);
  let seq = 0;
  const ev = (type, fields) => event(res, type, { type, sequence_number: seq++, ...fields });
  ev('response.created', { response: response('in_progress', []) });
  ev('response.in_progress', { response: response('in_progress', []) });
  ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
  ev('response.content_part.added', { output_index: 0, item_id: msgId, content_index: 0, part: { ...part, text: '' } });
  ev('response.output_text.delta', { output_index: 0, item_id: msgId, content_index: 0, delta: text.slice(0, 6), logprobs: [] });
  ev('response.output_text.delta', { output_index: 0, item_id: msgId, content_index: 0, delta: text.slice(6), logprobs: [] });
  ev('response.output_text.done', { output_index: 0, item_id: msgId, content_index: 0, text, logprobs: [] });
  ev('response.content_part.done', { output_index: 0, item_id: msgId, content_index: 0, part });
  ev('response.output_item.done', { output_index: 0, item });
  ev('response.completed', { response: response('completed', [item], usage) });
  res.end();
}
