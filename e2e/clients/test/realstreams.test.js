// Recorded streams (proxy/testdata/realstreams: reductions of streams real
// providers sent, each with the answer it must give in a .want.json) replayed
// by a fake upstream of their protocol through one ccmesh, read by the
// pinned official SDKs of each client protocol: @anthropic-ai/sdk
// messages.stream → finalMessage, openai chat.completions.stream →
// finalChatCompletion, openai responses.stream → finalResponse
// (docs/BEHAVIOUR.md#translation). Text, tool calls, reasoning where the SDK
// keeps it, usage and the end must arrive; a recording that ends in an error
// must make the SDK throw.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startCCMesh } from '../lib/ccmesh.js';
import { assertLoopbackOnly } from '../lib/offline.js';

const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'proxy', 'testdata', 'realstreams');
const MODEL = 'rs-model';
const PROTOCOLS = { anthropic: 'anthropic', chat: 'openai-chat', responses: 'openai-responses' };
// The corpus's folders: every client protocol's, and Gemini's, whose
// recordings reach the three SDKs through a translation only.
const FOLDERS = { ...PROTOCOLS, gemini: 'gemini' };

/** recordings lists the reductions: protocol, name, SSE events, want. */
function recordings() {
  const out = [];
  for (const [dir, protocol] of Object.entries(FOLDERS)) {
    for (const f of readdirSync(path.join(corpus, dir)).filter((f) => f.endsWith('.chunks.txt')).sort()) {
      const base = path.join(corpus, dir, f.replace(/\.chunks\.txt$/, ''));
      const lines = readFileSync(`${base}.chunks.txt`, 'utf8').split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
      const want = JSON.parse(readFileSync(`${base}.want.json`, 'utf8'));
      out.push({ name: `${dir}/${path.basename(base)}`, protocol, sse: frame(protocol, lines), want });
    }
  }
  return out;
}

/**
 * frame renders the lines as the upstream sends them (SOURCES.md of the
 * corpus); Gemini's as streamGenerateContent?alt=sse, data only.
 */
function frame(protocol, lines) {
  let s = '';
  for (const l of lines) {
    if (protocol === 'openai-chat' || protocol === 'gemini') {
      s += `data: ${l}\n\n`;
      continue;
    }
    let type = '';
    try {
      type = JSON.parse(l).type ?? '';
    } catch {
      // an unreadable line goes as data only
    }
    s += (type ? `event: ${type}\n` : '') + `data: ${l}\n\n`;
  }
  const last = lines.at(-1);
  if (protocol === 'openai-chat' && !(last && JSON.parse(last).error)) s += 'data: [DONE]\n\n';
  return s;
}

let mesh;
let upstream;
let current = '';

before(async () => {
  assertLoopbackOnly();
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(current);
    });
  });
  await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${upstream.address().port}`;
  mesh = await startCCMesh();
  for (const protocol of Object.values(FOLDERS)) {
    await mesh.addEndpoint({ name: `rs-${protocol}`, base_url: url, protocol, api_key: 'sk-rs-key', models: [MODEL] });
  }
});

after(async () => {
  await mesh?.stop();
  await new Promise((resolve) => (upstream ? upstream.close(resolve) : resolve()));
});

/**
 * expectFor is what a client of protocol client must get (as the Go test's
 * forClient): a translated client does not get a custom call the upstream
 * ran itself, gets a namespaced call under the function's own name, and a
 * stop its protocol has.
 */
function expectFor(want, client, upstreamProtocol) {
  const translated = client !== upstreamProtocol;
  const calls = [];
  const tools = [];
  for (const c of want.calls ?? []) {
    if (translated && c.custom && client !== 'openai-responses') continue;
    if (c.namespace && client !== 'openai-responses') {
      calls.push({ name: c.fn, args: c.args });
      tools.push({ name: c.fn });
    } else {
      calls.push({ name: c.name, args: c.args });
      tools.push(c.namespace ? { name: c.fn, namespace: c.namespace } : { name: c.name, custom: !!c.custom });
    }
  }
  let stop = want.stop ?? 'end_turn';
  if (calls.length > 0 && (stop === 'end_turn' || stop === 'tool_use')) stop = 'tool_use';
  else if (stop === 'tool_use') stop = 'end_turn';
  // Responses has no refusal status: a refused answer completes (as forClient).
  if (translated && client === 'openai-responses' && stop === 'refusal') stop = 'end_turn';
  return { ...want, calls, tools, stop, text: want.text ?? '', reasoning: want.reasoning ?? '' };
}

const schema = { type: 'object', properties: {} };
const anthropic = (endpoint) => new Anthropic({ baseURL: mesh.url, apiKey: 'sk-client', maxRetries: 0, defaultHeaders: { 'x-ccmesh-endpoint': endpoint } });
const openai = (endpoint) => new OpenAI({ baseURL: `${mesh.url}/v1`, apiKey: 'sk-client', maxRetries: 0, defaultHeaders: { 'x-ccmesh-endpoint': endpoint } });

/** viaClaude reads the stream with the Anthropic SDK; an outcome in the want's words. */
async function viaClaude(endpoint, exp) {
  const tools = exp.tools.map((t) => ({ name: t.name, input_schema: schema }));
  const stream = anthropic(endpoint).messages.stream({ model: MODEL, max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }], ...(tools.length ? { tools } : {}) });
  const m = await stream.finalMessage();
  const u = m.usage;
  return {
    text: m.content.filter((b) => b.type === 'text' && b.text).map((b) => b.text).join('\n\n'),
    reasoning: m.content.filter((b) => b.type === 'thinking' && b.thinking).map((b) => b.thinking).join('\n\n'),
    calls: m.content.filter((b) => b.type === 'tool_use').map((b) => ({ name: b.name, args: b.input })),
    stop: m.stop_reason,
    prompt: u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
    output: u.output_tokens,
  };
}

async function viaChat(endpoint, exp) {
  const tools = exp.tools.map((t) => ({ type: 'function', function: { name: t.name, parameters: schema } }));
  const stream = openai(endpoint).chat.completions.stream({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream_options: { include_usage: true }, ...(tools.length ? { tools } : {}) });
  const c = await stream.finalChatCompletion();
  const choice = c.choices[0];
  const finish = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal' };
  return {
    text: choice.message.content ?? '',
    reasoning: choice.message.reasoning_content ?? '',
    calls: (choice.message.tool_calls ?? []).map((t) => ({ name: t.function.name, args: JSON.parse(t.function.arguments) })),
    stop: finish[choice.finish_reason] ?? choice.finish_reason,
    prompt: c.usage?.prompt_tokens ?? 0,
    output: c.usage?.completion_tokens ?? 0,
  };
}

async function viaResponses(endpoint, exp) {
  const tools = exp.tools.map((t) => {
    if (t.custom) return { type: 'custom', name: t.name };
    if (t.namespace) return { type: 'namespace', name: t.namespace, description: 'tools', tools: [{ type: 'function', name: t.name, parameters: schema }] };
    return { type: 'function', name: t.name, parameters: schema };
  });
  const stream = openai(endpoint).responses.stream({ model: MODEL, input: 'hi', ...(tools.length ? { tools } : {}) });
  const r = await stream.finalResponse();
  // The SDK resolves a stream that ended in response.failed; the client
  // sees the error in the response.
  if (r.status === 'failed') throw new Error(`response.failed: ${r.error?.message}`);
  const calls = [];
  for (const it of r.output) {
    if (it.type === 'function_call') calls.push({ name: it.namespace ? `${it.namespace}__${it.name}` : it.name, args: JSON.parse(it.arguments) });
    if (it.type === 'custom_tool_call') calls.push({ name: it.name, args: { input: it.input } });
  }
  const texts = r.output.filter((it) => it.type === 'message').flatMap((it) => it.content.filter((p) => p.type === 'output_text' && p.text).map((p) => p.text));
  return {
    text: texts.join('\n\n'),
    reasoning: r.output.filter((it) => it.type === 'reasoning').flatMap((it) => it.summary.map((s) => s.text)).filter(Boolean).join('\n\n'),
    calls,
    stop: r.status === 'incomplete' ? 'max_tokens' : calls.length ? 'tool_use' : 'end_turn',
    prompt: r.usage?.input_tokens ?? 0,
    output: r.usage?.output_tokens ?? 0,
  };
}

const READERS = { anthropic: viaClaude, 'openai-chat': viaChat, 'openai-responses': viaResponses };

for (const rec of recordings()) {
  for (const client of Object.values(PROTOCOLS)) {
    test(`${rec.name} → ${client} SDK`, async () => {
      current = rec.sse;
      const exp = expectFor(rec.want, client, rec.protocol);
      const read = () => READERS[client](`rs-${rec.protocol}`, exp);
      if (rec.want.error) {
        await assert.rejects(read, 'a recording that ends in an error must make the SDK throw');
        return;
      }
      const got = await read();
      assert.equal(got.text, exp.text, 'text');
      assert.deepEqual(got.calls, exp.calls, 'tool calls');
      // Through a pass-through the SDK reads the upstream's own stream: its
      // stop words and where it puts usage (Moonshot: inside the choice,
      // which the SDK does not read) are the upstream's.
      const translated = client !== rec.protocol;
      if (translated) assert.equal(got.stop, exp.stop, 'stop reason');
      // The OpenAI SDK keeps only the last reasoning_content delta (not an
      // OpenAI field), so Chat reasoning is checked by the Go test alone.
      if (exp.reasoning && client !== 'openai-chat') {
        assert.equal(got.reasoning, exp.reasoning, 'reasoning');
      }
      const u = rec.want.usage;
      if (u && translated) {
        assert.equal(got.prompt, (u.input ?? 0) + (u.cache_read ?? 0) + (u.cache_write ?? 0), 'prompt tokens');
        assert.equal(got.output, u.output ?? 0, 'output tokens');
      }
    });
  }
}
