// A fake upstream speaking Anthropic Messages (streamed and not,
// count_tokens) and OpenAI Chat Completions / Responses, with switchable
// faults. It answers every request so that clients never stall on it, and
// records what it was sent so tests can check what ccmesh forwarded.
//
// Each protocol can take a tool round trip: a request whose conversation
// holds TOOL_MARKER and that offers the tool the fake wants (`Read` with
// `toolFile`, or any `toolCall`) is answered with a call to that tool; a
// request that carries a tool result is answered with text quoting it.
// `only` makes the fake speak one protocol and answer 404 on the others'
// paths, as a real single-protocol upstream does.
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

/** The marker in a prompt that makes the fake ask for a tool call. */
export const TOOL_MARKER = 'E2E-READ-TOOL';

/** The paths each endpoint protocol serves (docs/BEHAVIOUR.md#inbound-api). */
export const PROTOCOL_PATHS = Object.freeze({
  anthropic: ['/v1/messages', '/v1/messages/count_tokens'],
  'openai-chat': ['/v1/chat/completions'],
  'openai-responses': ['/v1/responses'],
});

/**
 * startUpstream listens on 127.0.0.1 on a free port.
 * @param {string} name - used in answers and message ids
 * @param {{toolFile?: string, toolCall?: {name: string, input: object}, only?: 'anthropic'|'openai-chat'|'openai-responses',
 *   refuse?: {fields?: string[], betas?: string[]}}} [opts]
 *   toolFile: the file a `Read` tool call asks for;
 *   toolCall: the tool (and its input) the fake calls instead of Read;
 *   only: the one protocol the fake speaks (other protocols' paths are 404);
 *   refuse: as a relay in front of an older backend, a Messages request that
 *   carries one of these top-level fields or anthropic-beta values gets one
 *   400 naming them all, the field in an OpenAI-style gateway's words and the
 *   beta in Anthropic's (`up.refusals` counts them)
 */
export async function startUpstream(name, opts = {}) {
  if (opts.only && !PROTOCOL_PATHS[opts.only]) throw new Error(`startUpstream: unknown protocol ${opts.only}`);
  const up = {
    name,
    fault: Fault.none,
    requests: [], // {method, path, headers, body}
    refusals: 0,
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
  if (opts.only && !PROTOCOL_PATHS[opts.only].includes(path)) {
    const message = `fake ${up.name} speaks only ${opts.only}: no ${req.method} ${path}`;
    return json(res, 404, opts.only === 'anthropic'
      ? { type: 'error', error: { type: 'not_found_error', message } }
      : { error: { message, type: 'invalid_request_error', param: null, code: 'unknown_url' } });
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
  if (opts.refuse && path === '/v1/messages') {
    const message = refusalOf(opts.refuse, req.headers['anthropic-beta'] ?? '', body);
    if (message) {
      up.refusals += 1;
      return json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message } });
    }
  }
  switch (path) {
    case '/v1/messages/count_tokens':
      return json(res, 200, { input_tokens: 42 });
    case '/v1/messages':
      return messages(up, opts, res, body);
    case '/v1/chat/completions':
      return chat(up, opts, res, body);
    case '/v1/responses':
      return responses(up, opts, res, body);
  }
  return json(res, 404, { error: { message: `fake ${up.name}: unknown path ${path}`, type: 'invalid_request_error' } });
}

/** refusalOf is a relay's words for what of refuse the request carries, or "" when none. */
function refusalOf(refuse, betaHeader, body) {
  const parts = [];
  const fields = (refuse.fields ?? []).filter((f) => f in body);
  if (fields.length) parts.push(`Unrecognized request argument supplied: ${fields.join(', ')}`);
  const sent = betaHeader.split(',').map((v) => v.trim());
  const betas = (refuse.betas ?? []).filter((b) => sent.includes(b));
  if (betas.length) parts.push(`Unexpected value(s) ${betas.map((b) => `\`${b}\``).join(', ')} for the \`anthropic-beta\` header. Please consult our documentation at docs.anthropic.com or try again without the header.`);
  return parts.join('; ');
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

/** splitIn cuts s into n pieces (some may be empty when s is short). */
function splitIn(s, n) {
  const size = Math.ceil(s.length / n);
  return Array.from({ length: n }, (_, i) => s.slice(i * size, (i + 1) * size));
}

// --- The turn, whatever the protocol --------------------------------------

/**
 * decideTurn picks what the fake answers: text quoting a tool result the
 * conversation carries, a call to the wanted tool when the conversation
 * holds TOOL_MARKER and the tool is offered, else plain text.
 * @param {{conversation: string, tools: string[], toolResult: string|null}} view
 */
function decideTurn(up, opts, view) {
  if (view.toolResult !== null) {
    return { kind: 'text', text: `${answerOf(up.name)}; the tool said: ${view.toolResult}` };
  }
  const want = opts.toolCall ?? (opts.toolFile ? { name: 'Read', input: { file_path: opts.toolFile } } : null);
  if (want && view.conversation.includes(TOOL_MARKER) && view.tools.includes(want.name)) {
    return { kind: 'tool', n: up.requests.length, name: want.name, input: want.input };
  }
  return { kind: 'text', text: answerOf(up.name) };
}

/** textOf flattens a content value (a string or an array of text parts). */
function textOf(c) {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map((x) => (typeof x === 'string' ? x : x?.text ?? '')).join('');
  return '';
}

// --- Anthropic Messages --------------------------------------------------

function anthropicView(body) {
  let toolResult = null;
  for (const m of body.messages ?? []) {
    if (!Array.isArray(m.content) || toolResult !== null) continue;
    const block = m.content.find((b) => b.type === 'tool_result');
    if (block) toolResult = textOf(block.content);
  }
  return {
    conversation: JSON.stringify(body.messages ?? []),
    tools: (body.tools ?? []).map((t) => t.name),
    toolResult,
  };
}

function messages(up, opts, res, body) {
  const turn = decideTurn(up, opts, anthropicView(body));
  const id = `msg_${up.name}_${up.requests.length}`;
  const toolId = `toolu_${up.name}_${turn.n}`;
  const content = turn.kind === 'tool'
    ? [{ type: 'tool_use', id: toolId, name: turn.name, input: turn.input }]
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
    event(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: toolId, name: turn.name, input: {} } });
    for (const part of splitIn(JSON.stringify(turn.input), 2)) {
      event(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: part } });
    }
  } else {
    event(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    // Two deltas: a client that got only one of them got half an answer.
    for (const part of splitIn(turn.text, 2)) {
      event(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: part } });
    }
  }
  event(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
  event(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 6 } });
  event(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

// --- OpenAI Chat Completions ---------------------------------------------

function chatView(body) {
  const toolMsg = (body.messages ?? []).find((m) => m.role === 'tool');
  return {
    conversation: JSON.stringify(body.messages ?? []),
    tools: (body.tools ?? []).map((t) => t.function?.name).filter(Boolean),
    toolResult: toolMsg ? textOf(toolMsg.content) : null,
  };
}

function chat(up, opts, res, body) {
  const turn = decideTurn(up, opts, chatView(body));
  const id = `chatcmpl-${up.name}-${up.requests.length}`;
  const created = Math.floor(Date.now() / 1000);
  const callId = `call_${up.name}_${turn.n}`;
  const args = turn.kind === 'tool' ? JSON.stringify(turn.input) : '';
  const finish = turn.kind === 'tool' ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 };
  if (!body.stream) {
    const message = turn.kind === 'tool'
      ? { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: callId, type: 'function', function: { name: turn.name, arguments: args } }] }
      : { role: 'assistant', content: turn.text, refusal: null };
    return json(res, 200, { id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage });
  }
  sse(res);
  const chunk = (delta, fin = null) => ({ id, object: 'chat.completion.chunk', created, model: body.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: fin }] });
  if (turn.kind === 'tool') {
    // The id and name come in the first fragment, the arguments in three more.
    event(res, '', chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: turn.name, arguments: '' } }] }));
    for (const part of splitIn(args, 3)) {
      event(res, '', chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] }));
    }
  } else {
    event(res, '', chunk({ role: 'assistant', content: '' }));
    event(res, '', chunk({ content: turn.text.slice(0, 6) }));
    event(res, '', chunk({ content: turn.text.slice(6) }));
  }
  event(res, '', chunk({}, finish));
  if (body.stream_options?.include_usage) {
    event(res, '', { id, object: 'chat.completion.chunk', created, model: body.model, choices: [], usage });
  }
  event(res, '', '[DONE]');
  res.end();
}

// --- OpenAI Responses ----------------------------------------------------

function responsesView(body) {
  const input = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : (body.input ?? []);
  const out = input.find((i) => i.type === 'function_call_output' || i.type === 'custom_tool_call_output');
  return {
    conversation: JSON.stringify(input),
    tools: (body.tools ?? []).map((t) => t.name).filter(Boolean),
    toolResult: out ? textOf(out.output) : null,
  };
}

function responses(up, opts, res, body) {
  const turn = decideTurn(up, opts, responsesView(body));
  const id = `resp_${up.name}_${up.requests.length}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = { input_tokens: 9, output_tokens: 4, total_tokens: 13, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
  const response = (status, output, u = null) => ({ id, object: 'response', created_at: created, status, model: body.model, output, usage: u, error: null, incomplete_details: null, instructions: null, parallel_tool_calls: true, tool_choice: 'auto', tools: [], temperature: 1, top_p: 1, text: { format: { type: 'text' } } });
  let item;
  if (turn.kind === 'tool') {
    item = { id: `fc_${up.name}_${turn.n}`, type: 'function_call', status: 'completed', call_id: `call_${up.name}_${turn.n}`, name: turn.name, arguments: JSON.stringify(turn.input) };
  } else {
    item = { id: `msg_${up.name}_${up.requests.length}`, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: turn.text, annotations: [] }] };
  }
  if (!body.stream) {
    return json(res, 200, { ...response('completed', [item], usage), ...(turn.kind === 'text' ? { output_text: turn.text } : {}) });
  }
  sse(res);
  let seq = 0;
  const ev = (type, fields) => event(res, type, { type, sequence_number: seq++, ...fields });
  ev('response.created', { response: response('in_progress', []) });
  ev('response.in_progress', { response: response('in_progress', []) });
  if (turn.kind === 'tool') {
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } });
    for (const delta of splitIn(item.arguments, 3)) {
      ev('response.function_call_arguments.delta', { output_index: 0, item_id: item.id, delta });
    }
    ev('response.function_call_arguments.done', { output_index: 0, item_id: item.id, name: item.name, arguments: item.arguments });
  } else {
    const part = item.content[0];
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    ev('response.content_part.added', { output_index: 0, item_id: item.id, content_index: 0, part: { ...part, text: '' } });
    ev('response.output_text.delta', { output_index: 0, item_id: item.id, content_index: 0, delta: turn.text.slice(0, 6), logprobs: [] });
    ev('response.output_text.delta', { output_index: 0, item_id: item.id, content_index: 0, delta: turn.text.slice(6), logprobs: [] });
    ev('response.output_text.done', { output_index: 0, item_id: item.id, content_index: 0, text: turn.text, logprobs: [] });
    ev('response.content_part.done', { output_index: 0, item_id: item.id, content_index: 0, part });
  }
  ev('response.output_item.done', { output_index: 0, item });
  ev('response.completed', { response: response('completed', [item], usage) });
  res.end();
}
