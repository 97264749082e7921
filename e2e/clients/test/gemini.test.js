// Gemini through ccmesh with real clients (docs/BEHAVIOUR.md#translation,
// docs/BEHAVIOUR.md#gemini-cli): the pinned Gemini CLI through endpoints
// that speak only Anthropic Messages or only Chat Completions, and Claude
// Code and Codex CLI through an endpoint that speaks only the Gemini API
// and checks thought signatures as Gemini 3 does (lib/fake-gemini.js).
// One run per behaviour; every fake answers 404 on the others' paths, so
// an answer proves ccmesh translated both ways.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startUpstream, answerOf, TOOL_MARKER, PROTOCOL_PATHS } from '../lib/fake-upstream.js';
import { startGemini, GEMINI_PATH } from '../lib/fake-gemini.js';
import { startCCMesh } from '../lib/ccmesh.js';
import { offlineSuite } from '../lib/offline.js';
import { runClaude, runCodex, runGemini } from '../lib/clients.js';

const suite = offlineSuite('ccmesh-gemini-');
const GEMINI_CLIENT_KEY = 'gemini-client-key-ccmesh-must-replace';
// A named model: with its default (auto) Gemini CLI first asks a
// classifier for a JSON verdict, which a fake of another protocol answers
// with plain text, and the CLI then retries it until it times out.
const GEMINI_ARGS = ['-m', 'gemini-2.5-flash'];

/** withEndpoint starts ccmesh with one endpoint (up, of protocol) and runs fn. */
async function withEndpoint(up, spec, fn) {
  const mesh = await startCCMesh();
  try {
    await mesh.addEndpoint({ name: up.name, base_url: up.url, ...spec });
    await fn(mesh);
  } finally {
    await mesh.stop();
    await up.close();
  }
}

/** project makes a folder for Gemini CLI to run in, with the note its read_file tool reads. */
function project(word) {
  const dir = mkdtempSync(path.join(suite.workDir, 'project-'));
  const note = path.join(dir, 'note.txt');
  writeFileSync(note, `the secret word is ${word}\n`);
  return { dir, note };
}

function detailOf(run) {
  return `exit ${run.code} signal ${run.signal}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(-3000)}`;
}

function assertOffline() {
  assert.deepEqual(suite.trap.attempts, [], 'a client tried to reach hosts other than 127.0.0.1');
}

/** assertForeignUpstream checks the fake got only its own protocol's path, with the endpoint's key. */
function assertForeignUpstream(up, protocol, model) {
  assert.ok(up.requests.length >= 1, `${up.name} got no request`);
  for (const r of up.requests) {
    assert.equal(`${r.method} ${r.path.split('?')[0]}`, `POST ${PROTOCOL_PATHS[protocol][0]}`, 'the endpoint protocol\'s path');
    assert.equal(r.body?.model, model, 'the model the upstream got');
    const key = protocol === 'anthropic' ? r.headers['x-api-key'] : r.headers.authorization;
    assert.equal(key, protocol === 'anthropic' ? `sk-${up.name}-key` : `Bearer sk-${up.name}-key`, 'the endpoint key');
    assert.ok(!JSON.stringify(r.headers).includes(GEMINI_CLIENT_KEY), "the client's key must not reach the upstream");
    assert.equal(r.headers['x-goog-api-key'], undefined, 'no Gemini key header towards another protocol');
  }
}

/** toolResultOf is the text of the first tool result a request of protocol carries, or null. */
function toolResultOf(protocol, body) {
  if (protocol === 'anthropic') {
    const block = (body.messages ?? []).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === 'tool_result');
    return block ? JSON.stringify(block.content) : null;
  }
  const msg = (body.messages ?? []).find((m) => m.role === 'tool');
  return msg ? JSON.stringify(msg.content) : null;
}

for (const { protocol, label } of [
  { protocol: 'anthropic', label: 'an Anthropic-only' },
  { protocol: 'openai-chat', label: 'a Chat-only' },
]) {
  const short = protocol.replace('openai-', '');
  const model = `${short}-e2e`;
  const naming = { protocol, model_map: { 'gemini-*': model } };

  test(`Gemini CLI answers a text turn through ${label} endpoint`, async () => {
    const up = await startUpstream(`gem-${short}`, { only: protocol });
    await withEndpoint(up, { ...naming, api_key: `sk-gem-${short}-key` }, async (mesh) => {
      const { dir } = project('unused');
      const run = await runGemini({ baseURL: mesh.url, prompt: 'say hello', cwd: dir, args: GEMINI_ARGS, env: suite.trap.env });
      assert.equal(run.code, 0, `gemini exit code; ${detailOf(run)}`);
      assert.ok(run.stdout.includes(answerOf(up.name)), `Gemini CLI printed the fake's answer; ${detailOf(run)}`);
      assertForeignUpstream(up, protocol, model);
    });
    assertOffline();
  });

  test(`Gemini CLI runs a read_file round trip through ${label} endpoint`, async () => {
    const { dir, note } = project('marmalade');
    const up = await startUpstream(`gem-${short}-tool`, { only: protocol, toolCall: { name: 'read_file', input: { file_path: note } } });
    await withEndpoint(up, { ...naming, api_key: `sk-gem-${short}-tool-key` }, async (mesh) => {
      const run = await runGemini({ baseURL: mesh.url, prompt: `${TOOL_MARKER}: read the file note.txt and tell me the secret word`, cwd: dir, args: GEMINI_ARGS, env: suite.trap.env });
      assert.equal(run.code, 0, `gemini exit code; ${detailOf(run)}`);
      assertForeignUpstream(up, protocol, model);
      const results = up.requests.map((r) => toolResultOf(protocol, r.body)).filter((x) => x !== null);
      assert.ok(results.length >= 1, `no request carried the read_file result: ${JSON.stringify(up.requests.map((r) => r.body))}`.slice(0, 3000));
      assert.ok(results[0].includes('marmalade'), `the tool result that reached the fake: ${results[0]}`);
      // The fake quotes the result: only a round trip prints the word.
      assert.ok(run.stdout.includes(`${answerOf(up.name)}; the tool said:`), `Gemini CLI printed the answer after the tool; ${detailOf(run)}`);
      assert.ok(run.stdout.includes('marmalade'), detailOf(run));
    });
    assertOffline();
  });
}

/** assertGeminiUpstream checks every request the Gemini fake got: its paths, the endpoint's key, no refusal. */
function assertGeminiUpstream(up, model) {
  assert.ok(up.requests.length >= 1, `${up.name} got no request`);
  for (const r of up.requests) {
    const m = GEMINI_PATH.exec(r.path);
    assert.ok(m, `a Gemini API path: ${r.method} ${r.path}`);
    if (m[2] !== 'countTokens') assert.equal(m[1], model, 'the model, in the path');
    assert.equal(r.headers['x-api-key'], undefined, "no Anthropic key header towards Gemini");
    assert.equal(r.headers.authorization, undefined, "no bearer token towards Gemini");
    const anthropicHeaders = Object.keys(r.headers).filter((h) => h.startsWith('anthropic-'));
    assert.deepEqual(anthropicHeaders, [], 'anthropic-* headers go only to anthropic endpoints');
  }
  assert.deepEqual(up.refusals, [], 'a function call came back without its thought signature');
}

/** signedReturn is the request that returned the fake's call, checked to carry its signature and result. */
function signedReturn(up, name) {
  const back = up.requests.find((r) => (r.body?.contents ?? []).some((c) => (c.parts ?? []).some((p) => p.functionResponse)));
  assert.ok(back, `no request carried a functionResponse: ${JSON.stringify(up.requests.map((r) => r.body?.contents))}`.slice(0, 3000));
  const call = back.body.contents.flatMap((c) => (c.role === 'model' ? c.parts : [])).find((p) => p.functionCall?.name === name);
  assert.ok(call, `the history returned the ${name} call`);
  assert.ok([...up.signatures.values()].includes(call.thoughtSignature), `the call came back with the fake's signature: ${JSON.stringify(call)}`);
  return back.body.contents.flatMap((c) => c.parts ?? []).find((p) => p.functionResponse);
}

test('the Gemini fake refuses a returned call without its thought signature', async () => {
  const up = await startGemini('gem-self', { key: 'k', toolCall: { name: 'read_file', input: { file_path: 'x' } } });
  try {
    const post = (body) => fetch(`${up.url}/v1beta/models/gemini-e2e:generateContent`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k' }, body: JSON.stringify(body),
    });
    const tools = [{ functionDeclarations: [{ name: 'read_file' }] }];
    const first = await (await post({ contents: [{ role: 'user', parts: [{ text: TOOL_MARKER }] }], tools })).json();
    const part = first.candidates[0].content.parts[0];
    assert.ok(part.functionCall && part.thoughtSignature, JSON.stringify(first));
    const history = (p) => ({ contents: [{ role: 'user', parts: [{ text: TOOL_MARKER }] }], tools, ...p });
    const result = { role: 'user', parts: [{ functionResponse: { name: 'read_file', response: { output: 'ok' } } }] };
    for (const [name, sig, want] of [['without', undefined, 400], ['another', 'b3RoZXI=', 400], ['its own', part.thoughtSignature, 200]]) {
      const model = { role: 'model', parts: [{ functionCall: part.functionCall, ...(sig ? { thoughtSignature: sig } : {}) }] };
      const body = history({});
      body.contents.push(model, result);
      const res = await post(body);
      assert.equal(res.status, want, `a returned call with ${name} signature: ${await res.text()}`);
    }
  } finally {
    await up.close();
  }
});

test('Claude Code runs a Read tool round trip through a Gemini-only endpoint', async () => {
  const { note } = project('quince');
  const up = await startGemini('cc-gemini', { key: 'sk-cc-gemini-key', toolCall: { name: 'Read', input: { file_path: note } } });
  await withEndpoint(up, { protocol: 'gemini', api_key: 'sk-cc-gemini-key', model_map: { 'claude-*': 'gemini-e2e' } }, async (mesh) => {
    const run = await runClaude({
      baseURL: mesh.url,
      prompt: `${TOOL_MARKER}: read the note ${note} and tell me the secret word`,
      cwd: suite.workDir,
      args: ['--allowedTools', 'Read'],
      env: { ...suite.trap.env, CLAUDE_CODE_MAX_RETRIES: '0' },
    });
    const detail = detailOf(run);
    assert.equal(run.code, 0, `claude exit code; ${detail}`);
    assert.equal(run.result?.is_error, false, `claude reports an error; ${detail}`);
    assert.ok(String(run.result.result).includes('quince'), `claude's answer ${JSON.stringify(run.result?.result)}; ${detail}`);
    assertGeminiUpstream(up, 'gemini-e2e');
    const result = signedReturn(up, 'Read');
    assert.ok(JSON.stringify(result).includes('quince'), `the tool result that reached the fake: ${JSON.stringify(result)}`);
  });
  assertOffline();
});

test('Codex CLI runs a shell command through a Gemini-only endpoint', async () => {
  const fake = { key: 'sk-codex-gemini-key', toolCall: { name: 'exec_command', input: { cmd: 'echo ccmesh-e2e-$((6*7))' } } };
  const up = await startGemini('codex-gemini', fake);
  await withEndpoint(up, { protocol: 'gemini', api_key: fake.key, model_map: { 'gpt-*': 'gemini-e2e' } }, async (mesh) => {
    const run = await runCodex({ baseURL: `${mesh.url}/v1`, prompt: `${TOOL_MARKER}: run the echo and tell me what it printed`, cwd: suite.workDir, env: suite.trap.env });
    const detail = `exit ${run.code} signal ${run.signal}\nstdout: ${run.stdout.slice(0, 3000)}\nstderr: ${run.stderr.slice(-3000)}`;
    assert.equal(run.code, 0, `codex exit code; ${detail}`);
    assert.deepEqual(run.events.filter((e) => e.type === 'error' || e.type === 'turn.failed'), [], `codex reported errors; ${detail}`);
    const ran = run.events.filter((e) => e.type === 'item.completed' && e.item?.type === 'command_execution');
    assert.equal(ran.length, 1, `codex ran one command; ${detail}`);
    const said = run.events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message').map((e) => e.item.text);
    // Only a command Codex really ran prints 42, and only its result quoted back.
    assert.ok(said.some((t) => t.includes('ccmesh-e2e-42')), `codex's messages ${JSON.stringify(said)}; ${detail}`);
    assertGeminiUpstream(up, 'gemini-e2e');
    const result = signedReturn(up, 'exec_command');
    assert.ok(JSON.stringify(result).includes('ccmesh-e2e-42'), `the tool result that reached the fake: ${JSON.stringify(result)}`);
  });
  assertOffline();
});
