// Real clients through endpoints of another protocol
// (docs/BEHAVIOUR.md#translation, docs/BEHAVIOUR.md#candidates): each fake
// upstream speaks one protocol only and answers 404 on the others' paths,
// so an answer proves ccmesh translated the request and the response.
// Claude Code and Codex CLI run fully offline (docs/BEHAVIOUR.md#what-clients-send).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { startUpstream, answerOf, TOOL_MARKER, PROTOCOL_PATHS } from '../lib/fake-upstream.js';
import { startCCMesh } from '../lib/ccmesh.js';
import { offlineSuite } from '../lib/offline.js';
import { runClaude, runCodex } from '../lib/clients.js';

const suite = offlineSuite('ccmesh-translation-');

/**
 * withTranslated starts a fake that speaks only `protocol`, and a fresh
 * ccmesh whose one endpoint is that fake (`naming`: its `models` and/or
 * `model_map`), runs fn, and stops both.
 */
async function withTranslated({ name, protocol, naming, fake = {} }, fn) {
  const up = await startUpstream(name, { ...fake, only: protocol });
  const mesh = await startCCMesh();
  try {
    await mesh.addEndpoint({ name, base_url: up.url, protocol, api_key: `sk-${name}-key`, ...naming });
    await fn(mesh, up);
  } finally {
    await mesh.stop();
    await up.close();
  }
}

/**
 * assertUpstreamGot checks every request the fake got: the endpoint
 * protocol's path without the client's query, the endpoint's own key in
 * that protocol's header, no anthropic-* header towards an OpenAI protocol
 * (docs/BEHAVIOUR.md#translation, docs/BEHAVIOUR.md#endpoints).
 */
function assertUpstreamGot(up, protocol, model) {
  const want = PROTOCOL_PATHS[protocol][0];
  assert.ok(up.requests.length >= 1, `${up.name} got no request`);
  for (const r of up.requests) {
    assert.equal(`${r.method} ${r.path}`, `POST ${want}`, `every request to a ${protocol} endpoint goes to its own path`);
    assert.equal(r.body?.model, model, 'the model the upstream got');
    if (protocol === 'anthropic') {
      assert.equal(r.headers['x-api-key'], `sk-${up.name}-key`, 'the endpoint key, as x-api-key');
      assert.equal(r.headers.authorization, undefined, "the client's key must not reach the upstream");
      assert.ok(r.headers['anthropic-version'], 'an anthropic endpoint always gets anthropic-version');
    } else {
      assert.equal(r.headers.authorization, `Bearer sk-${up.name}-key`, 'the endpoint key, as a bearer token');
      assert.equal(r.headers['x-api-key'], undefined, "the client's key must not reach the upstream");
      const anthropicHeaders = Object.keys(r.headers).filter((h) => h.startsWith('anthropic-'));
      assert.deepEqual(anthropicHeaders, [], 'anthropic-* headers go only to anthropic endpoints');
    }
    for (const h of Object.keys(r.headers)) assert.ok(!h.startsWith('x-ccmesh-'), `ccmesh forwarded its own header ${h}`);
  }
}

/**
 * assertLoggedTranslated waits for the request-log rows of the client's
 * requests (count_tokens aside) and checks each: answered 200 by the
 * endpoint in one attempt that names the translation, one row per request
 * the fake got, a stream that ended complete (docs/BEHAVIOUR.md#request-log).
 */
async function assertLoggedTranslated(mesh, up, translation, { stream = true } = {}) {
  const clientPath = PROTOCOL_PATHS[translation.split('→')[0]][0];
  const end = Date.now() + 5000;
  let rows = [];
  for (;;) {
    rows = (await mesh.logs(1)).filter((row) => row.path?.split('?')[0] === clientPath);
    if (rows.length >= up.requests.length || Date.now() > end) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(rows.length, up.requests.length, `one ${clientPath} log row per upstream request: ${JSON.stringify(rows)}`);
  for (const row of rows) {
    const detail = `log row ${JSON.stringify(row)}`;
    assert.equal(row.status, 200, detail);
    assert.equal(row.endpoint, up.name, detail);
    assert.deepEqual(row.history.map((a) => `${a.endpoint}:${a.outcome}:${a.translation}`), [`${up.name}:success:${translation}`], detail);
    assert.equal(row.stream, stream, detail);
    if (stream) assert.equal(row.stream_end, 'complete', detail);
  }
  return rows;
}

function assertOffline() {
  assert.deepEqual(suite.trap.attempts, [], 'a client tried to reach hosts other than 127.0.0.1');
}

function assertClaudeAnswered(run, want) {
  const detail = `exit ${run.code} signal ${run.signal}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;
  assert.equal(run.code, 0, `claude exit code; ${detail}`);
  assert.ok(run.result, `claude printed no JSON; ${detail}`);
  assert.equal(run.result.is_error, false, `claude reports an error; ${detail}`);
  assert.equal(run.result.subtype, 'success', detail);
  assert.ok(String(run.result.result).includes(want), `claude's answer ${JSON.stringify(run.result.result)} should contain ${JSON.stringify(want)}`);
}

/** claudeReadsNote has Claude Code read a file through the Read tool via mesh. */
async function claudeReadsNote(mesh, note) {
  return runClaude({
    baseURL: mesh.url,
    prompt: `${TOOL_MARKER}: read the note ${note} and tell me the secret word`,
    cwd: suite.workDir,
    args: ['--allowedTools', 'Read'],
    // No retries: an error ccmesh answers shows at once, with its message,
    // instead of after minutes of Claude Code's backoff.
    env: { ...suite.trap.env, CLAUDE_CODE_MAX_RETRIES: '0' },
  });
}

function writeNote(word) {
  const note = path.join(mkdtempSync(path.join(suite.workDir, 'note-')), 'note.txt');
  writeFileSync(note, `the secret word is ${word}\n`);
  return note;
}

test('Claude Code runs a Read tool round trip through a Chat-only endpoint (model_map)', async () => {
  const note = writeNote('marmalade');
  await withTranslated({ name: 'chat-only', protocol: 'openai-chat', naming: { model_map: { 'claude-*': 'gpt-e2e' } }, fake: { toolFile: note } }, async (mesh, up) => {
    const run = await claudeReadsNote(mesh, note);
    assertClaudeAnswered(run, 'marmalade');
    assertUpstreamGot(up, 'openai-chat', 'gpt-e2e');
    for (const r of up.requests) {
      assert.equal(r.body.stream, true, 'Claude Code streams every turn');
      assert.equal(r.body.stream_options?.include_usage, true, 'a streamed Chat request asks for usage (docs/BEHAVIOUR.md#translation)');
    }
    // The tool call and its result, paired: the tool message right after
    // the assistant message that carries the call.
    const second = up.requests.find((r) => r.body.messages.some((m) => m.role === 'tool'));
    assert.ok(second, `no request carried a tool message: ${JSON.stringify(up.requests.map((r) => r.body.messages.map((m) => m.role)))}`);
    const msgs = second.body.messages;
    const at = msgs.findIndex((m) => m.role === 'tool');
    const call = msgs[at - 1];
    assert.equal(call?.role, 'assistant', `the message before the tool message: ${JSON.stringify(msgs.slice(at - 1, at + 1))}`);
    assert.equal(call.tool_calls?.length, 1, JSON.stringify(call));
    assert.equal(call.tool_calls[0].type, 'function');
    assert.equal(call.tool_calls[0].function.name, 'Read');
    assert.deepEqual(JSON.parse(call.tool_calls[0].function.arguments), { file_path: note }, 'the arguments, whole again after three fragments');
    assert.equal(msgs[at].tool_call_id, call.tool_calls[0].id, 'the tool message answers the call');
    assert.ok(JSON.stringify(msgs[at].content).includes('marmalade'), `the tool message carries the file: ${JSON.stringify(msgs[at])}`);
    const rows = await assertLoggedTranslated(mesh, up, 'anthropic→openai-chat');
    for (const row of rows) {
      assert.equal(row.model_forwarded, 'gpt-e2e', 'model_map applied');
      assert.equal(row.tokens_out, 4, `the usage chunk was read: ${JSON.stringify(row)}`);
    }
  });
  assertOffline();
});

test('Claude Code runs a Read tool round trip through a Responses-only endpoint (models)', async () => {
  const note = writeNote('quince');
  await withTranslated({ name: 'responses-only', protocol: 'openai-responses', naming: { models: ['claude-*'] }, fake: { toolFile: note } }, async (mesh, up) => {
    const run = await claudeReadsNote(mesh, note);
    assertClaudeAnswered(run, 'quince');
    const model = up.requests[0]?.body?.model;
    assert.match(String(model), /^claude-/, 'without a model_map the asked model goes upstream');
    assertUpstreamGot(up, 'openai-responses', model);
    for (const r of up.requests) assert.equal(r.body.stream, true, 'Claude Code streams every turn');
    const second = up.requests.find((r) => r.body.input.some((i) => i.type === 'function_call_output'));
    assert.ok(second, `no request carried a function_call_output: ${JSON.stringify(up.requests.map((r) => r.body.input.map((i) => i.type ?? i.role)))}`);
    const items = second.body.input;
    const at = items.findIndex((i) => i.type === 'function_call_output');
    const call = items.findLast((i, k) => k < at && i.type === 'function_call');
    assert.ok(call, `no function_call before the output: ${JSON.stringify(items.map((i) => i.type ?? i.role))}`);
    assert.equal(call.name, 'Read');
    assert.deepEqual(JSON.parse(call.arguments), { file_path: note }, 'the arguments, whole again after three deltas');
    assert.equal(items[at].call_id, call.call_id, 'the output answers the call');
    assert.ok(JSON.stringify(items[at].output).includes('quince'), `the output carries the file: ${JSON.stringify(items[at])}`);
    const rows = await assertLoggedTranslated(mesh, up, 'anthropic→openai-responses');
    for (const row of rows) assert.equal(row.tokens_out, 4, `the usage of response.completed was read: ${JSON.stringify(row)}`);
  });
  assertOffline();
});

function assertCodexAnswered(run, want) {
  const detail = `exit ${run.code} signal ${run.signal}\nstdout: ${run.stdout.slice(0, 3000)}\nstderr: ${run.stderr.slice(-3000)}`;
  assert.equal(run.code, 0, `codex exit code; ${detail}`);
  const bad = run.events.filter((e) => e.type === 'error' || e.type === 'turn.failed');
  assert.deepEqual(bad, [], `codex reported errors; ${detail}`);
  const said = run.events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message').map((e) => e.item.text);
  assert.ok(said.some((t) => t.includes(want)), `codex's messages ${JSON.stringify(said)} should contain ${JSON.stringify(want)}; ${detail}`);
  const done = run.events.at(-1);
  assert.equal(done?.type, 'turn.completed', `the last event; ${detail}`);
  return done;
}

test('Codex CLI through a Chat-only endpoint', async () => {
  await withTranslated({ name: 'codex-chat', protocol: 'openai-chat', naming: { models: ['gpt-5.5'] } }, async (mesh, up) => {
    const run = await runCodex({ baseURL: `${mesh.url}/v1`, prompt: 'say hello', cwd: suite.workDir, env: suite.trap.env });
    const done = assertCodexAnswered(run, answerOf('codex-chat'));
    assert.equal(done.usage?.input_tokens, 9, `usage from the Chat usage chunk: ${JSON.stringify(done)}`);
    assert.equal(done.usage?.output_tokens, 4, `usage from the Chat usage chunk: ${JSON.stringify(done)}`);
    assertUpstreamGot(up, 'openai-chat', 'gpt-5.5');
    for (const r of up.requests) {
      assert.equal(r.body.stream, true, 'Codex streams');
      assert.equal(r.body.stream_options?.include_usage, true, 'a streamed Chat request asks for usage');
      const roles = r.body.messages.map((m) => m.role);
      assert.equal(roles[0], 'system', `Codex's developer messages lead as a system message: ${JSON.stringify(roles)}`);
      assert.ok(JSON.stringify(r.body.messages[0].content).includes('You are Codex'), 'the system message carries the instructions');
      assert.deepEqual(roles.filter((x) => !['system', 'user', 'assistant', 'tool'].includes(x)), [], `Chat roles only: ${JSON.stringify(roles)}`);
    }
    await assertLoggedTranslated(mesh, up, 'openai-responses→openai-chat');
  });
  assertOffline();
});

test('Codex CLI runs a shell command through a Chat-only endpoint', async () => {
  const fake = { toolCall: { name: 'exec_command', input: { cmd: 'echo ccmesh-e2e-$((6*7))' } } };
  await withTranslated({ name: 'codex-chat-tool', protocol: 'openai-chat', naming: { models: ['gpt-5.5'] }, fake }, async (mesh, up) => {
    const run = await runCodex({ baseURL: `${mesh.url}/v1`, prompt: `${TOOL_MARKER}: run the echo and tell me what it printed`, cwd: suite.workDir, env: suite.trap.env });
    // Only a command Codex really ran prints 42: the fake asked for $((6*7)).
    assertCodexAnswered(run, 'ccmesh-e2e-42');
    const ran = run.events.filter((e) => e.type === 'item.completed' && e.item?.type === 'command_execution');
    assert.equal(ran.length, 1, `codex ran one command: ${run.stdout.slice(0, 3000)}`);
    assert.equal(ran[0].item.exit_code, 0, JSON.stringify(ran[0]));
    assert.ok(ran[0].item.aggregated_output.includes('ccmesh-e2e-42'), JSON.stringify(ran[0]));
    assertUpstreamGot(up, 'openai-chat', 'gpt-5.5');
    const second = up.requests.find((r) => r.body.messages.some((m) => m.role === 'tool'));
    assert.ok(second, 'no request carried a tool message');
    const msgs = second.body.messages;
    const at = msgs.findIndex((m) => m.role === 'tool');
    const call = msgs[at - 1];
    assert.equal(call?.role, 'assistant', JSON.stringify(msgs.slice(at - 1, at + 1)));
    assert.equal(call.tool_calls?.[0]?.function?.name, 'exec_command');
    assert.deepEqual(JSON.parse(call.tool_calls[0].function.arguments), fake.toolCall.input);
    assert.equal(msgs[at].tool_call_id, call.tool_calls[0].id, 'the tool message answers the call');
    // Codex's own tools arrive as Chat functions; apply_patch (a custom
    // tool) as a function of one string.
    const offered = up.requests[0].body.tools.map((t) => `${t.type}:${t.function?.name}`);
    assert.ok(offered.includes('function:exec_command'), JSON.stringify(offered));
    assert.ok(offered.includes('function:apply_patch'), `apply_patch offered as a function: ${JSON.stringify(offered)}`);
    await assertLoggedTranslated(mesh, up, 'openai-responses→openai-chat');
  });
  assertOffline();
});

test('Codex CLI through an Anthropic-only endpoint', async () => {
  await withTranslated({ name: 'codex-anthropic', protocol: 'anthropic', naming: { models: ['gpt-5.5'] } }, async (mesh, up) => {
    const run = await runCodex({ baseURL: `${mesh.url}/v1`, prompt: 'say hello', cwd: suite.workDir, env: suite.trap.env });
    const done = assertCodexAnswered(run, answerOf('codex-anthropic'));
    assert.equal(done.usage?.input_tokens, 12, `usage from message_start/message_delta: ${JSON.stringify(done)}`);
    assert.equal(done.usage?.output_tokens, 6, `usage from message_start/message_delta: ${JSON.stringify(done)}`);
    assertUpstreamGot(up, 'anthropic', 'gpt-5.5');
    for (const r of up.requests) {
      assert.equal(r.body.stream, true, 'Codex streams');
      assert.equal(typeof r.body.max_tokens, 'number', 'Messages requires max_tokens');
      assert.ok(r.body.system, "Codex's developer messages become the system prompt");
      assert.deepEqual(r.body.messages.filter((m) => !['user', 'assistant'].includes(m.role)), [], 'only user and assistant messages');
      assert.equal(r.body.messages[0].role, 'user');
    }
    await assertLoggedTranslated(mesh, up, 'openai-responses→anthropic');
  });
  assertOffline();
});

/** openaiClient is an OpenAI SDK client on mesh that keeps each raw response body. */
function openaiClient(mesh) {
  const raw = [];
  const client = new OpenAI({
    baseURL: `${mesh.url}/v1`,
    apiKey: 'sk-client-key',
    maxRetries: 0,
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      raw.push(res.clone().text());
      return res;
    },
  });
  return { client, raw };
}

test('OpenAI SDK chat completions, not streamed, through an Anthropic-only endpoint', async () => {
  await withTranslated({ name: 'sdk-anthropic', protocol: 'anthropic', naming: { models: ['gpt-e2e'] } }, async (mesh, up) => {
    const { client } = openaiClient(mesh);
    const { data, response } = await client.chat.completions.create({
      model: 'gpt-e2e', max_tokens: 64, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }],
    }).withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.equal(data.choices[0].message.role, 'assistant');
    assert.equal(data.choices[0].message.content, answerOf('sdk-anthropic'));
    assert.equal(data.choices[0].finish_reason, 'stop');
    assert.deepEqual(
      { p: data.usage?.prompt_tokens, c: data.usage?.completion_tokens, t: data.usage?.total_tokens },
      { p: 12, c: 6, t: 18 }, `usage ${JSON.stringify(data.usage)}`,
    );
    assert.equal(response.headers.get('x-ccmesh-endpoint'), 'sdk-anthropic');
    assertUpstreamGot(up, 'anthropic', 'gpt-e2e');
    const body = up.requests[0].body;
    assert.ok(!body.stream, 'not streamed upstream either');
    assert.equal(body.max_tokens, 64);
    assert.equal(JSON.stringify(body.system).includes('be brief'), true, `the system message: ${JSON.stringify(body)}`);
    assert.deepEqual(body.messages.map((m) => m.role), ['user']);
    await assertLoggedTranslated(mesh, up, 'openai-chat→anthropic', { stream: false });
  });
});

test('OpenAI SDK chat completions, streamed with usage, through an Anthropic-only endpoint', async () => {
  await withTranslated({ name: 'sdk-anthropic', protocol: 'anthropic', naming: { models: ['gpt-e2e'] } }, async (mesh, up) => {
    const { client, raw } = openaiClient(mesh);
    const { data: stream, response } = await client.chat.completions.create({
      model: 'gpt-e2e', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }],
    }).withResponse();
    let text = '';
    let usage = null;
    const finishes = [];
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, answerOf('sdk-anthropic'));
    assert.deepEqual(finishes, ['stop'], 'one finish chunk');
    assert.deepEqual({ p: usage?.prompt_tokens, c: usage?.completion_tokens, t: usage?.total_tokens }, { p: 12, c: 6, t: 18 }, `usage chunk ${JSON.stringify(usage)}`);
    assert.equal(response.headers.get('x-ccmesh-endpoint'), 'sdk-anthropic');
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const wire = await raw.at(-1);
    assert.ok(wire.trimEnd().endsWith('data: [DONE]'), `the stream ends with [DONE]: ${JSON.stringify(wire.slice(-300))}`);
    assert.equal(wire.split('data: [DONE]').length, 2, 'one [DONE]');
    assertUpstreamGot(up, 'anthropic', 'gpt-e2e');
    assert.equal(up.requests[0].body.stream, true, 'streamed upstream too');
    await assertLoggedTranslated(mesh, up, 'openai-chat→anthropic');
  });
});
