// The Anthropic and OpenAI TypeScript SDKs (pinned in package.json) through
// ccmesh, streamed and not, including an endpoint pinned with `@name/model`
// and with the x-ccmesh-endpoint header (docs/BEHAVIOUR.md#inbound-api, docs/BEHAVIOUR.md#explicit-endpoint, docs/BEHAVIOUR.md#attempt-loop, docs/BEHAVIOUR.md#headers).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startUpstream, answerOf } from '../lib/fake-upstream.js';
import { startCCMesh } from '../lib/ccmesh.js';
import { assertLoopbackOnly } from '../lib/offline.js';

const CLAUDE_MODEL = 'claude-opus-5-5';
// An endpoint of another protocol that names a model serves it translated
// (docs/BEHAVIOUR.md#candidates); these tests are about same-protocol
// routing, so each OpenAI protocol's endpoints name a model of their own.
const CHAT_MODEL = 'gpt-e2e-chat';
const RESPONSES_MODEL = 'gpt-e2e-responses';

let mesh;
const ups = {};

// Two endpoints per protocol; sticky routing sends unpinned requests to the
// first of each, so a pinned request answered by the second is visible.
const ENDPOINTS = [
  { name: 'claude-1', protocol: 'anthropic' },
  { name: 'claude-2', protocol: 'anthropic' },
  { name: 'chat-1', protocol: 'openai-chat', models: [CHAT_MODEL] },
  { name: 'chat-2', protocol: 'openai-chat', models: [CHAT_MODEL] },
  { name: 'resp-1', protocol: 'openai-responses', models: [RESPONSES_MODEL] },
  { name: 'resp-2', protocol: 'openai-responses', models: [RESPONSES_MODEL] },
];

before(async () => {
  assertLoopbackOnly();
  mesh = await startCCMesh();
  for (const e of ENDPOINTS) {
    ups[e.name] = await startUpstream(e.name);
    await mesh.addEndpoint({ name: e.name, base_url: ups[e.name].url, protocol: e.protocol, api_key: `sk-${e.name}-key`, models: e.models });
  }
});

after(async () => {
  await mesh?.stop();
  await Promise.all(Object.values(ups).map((u) => u.close()));
});

const anthropic = (headers = {}) => new Anthropic({ baseURL: mesh.url, apiKey: 'sk-ant-client-key', maxRetries: 0, defaultHeaders: headers });
const openai = (headers = {}) => new OpenAI({ baseURL: `${mesh.url}/v1`, apiKey: 'sk-client-key', maxRetries: 0, defaultHeaders: headers });

/** lastRequest is the newest request the named fake got. */
const lastRequest = (name) => ups[name].requests.at(-1);

function assertRouted(response, endpoint) {
  assert.equal(response.headers.get('x-ccmesh-endpoint'), endpoint, 'x-ccmesh-endpoint');
  assert.equal(response.headers.get('x-ccmesh-attempts'), '1', 'x-ccmesh-attempts');
  assert.equal(response.headers.get('x-fallback-triggered'), 'false', 'x-fallback-triggered');
}

/** assertForwarded checks what the upstream got: its own key, no ccmesh header, the bare model. */
function assertForwarded(name, model, authHeader) {
  const req = lastRequest(name);
  assert.ok(req, `${name} got no request`);
  assert.equal(req.body.model, model, 'the model the upstream got');
  const want = authHeader === 'x-api-key' ? `sk-${name}-key` : `Bearer sk-${name}-key`;
  assert.equal(req.headers[authHeader], want, 'the endpoint key replaces the client key');
  for (const h of Object.keys(req.headers)) {
    assert.ok(!h.startsWith('x-ccmesh-'), `ccmesh forwarded its own header ${h}`);
  }
}

// Each case: how the request names its endpoint, and which one answers.
const PINS = [
  { name: 'routed', via: 'none', index: 1 },
  { name: 'pinned with @name/model', via: 'model', index: 2 },
  { name: 'pinned with the x-ccmesh-endpoint header', via: 'header', index: 2 },
];

const pinnedModel = (pin, endpoint, model) => (pin.via === 'model' ? `@${endpoint}/${model}` : model);
const pinnedHeaders = (pin, endpoint) => (pin.via === 'header' ? { 'x-ccmesh-endpoint': endpoint } : {});

for (const pin of PINS) {
  const claudeEP = `claude-${pin.index}`;
  const chatEP = `chat-${pin.index}`;
  const respEP = `resp-${pin.index}`;

  test(`Anthropic SDK, not streamed, ${pin.name}`, async () => {
    const { data, response } = await anthropic(pinnedHeaders(pin, claudeEP)).messages.create({
      model: pinnedModel(pin, claudeEP, CLAUDE_MODEL), max_tokens: 64, messages: [{ role: 'user', content: 'hi' }],
    }).withResponse();
    assert.equal(data.content[0].text, answerOf(claudeEP));
    assertRouted(response, claudeEP);
    assertForwarded(claudeEP, CLAUDE_MODEL, 'x-api-key');
  });

  test(`Anthropic SDK, streamed, ${pin.name}`, async () => {
    const { data: stream, response } = await anthropic(pinnedHeaders(pin, claudeEP)).messages.create({
      model: pinnedModel(pin, claudeEP, CLAUDE_MODEL), max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }],
    }).withResponse();
    let text = '';
    const types = [];
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') text += ev.delta.text;
    }
    assert.equal(text, answerOf(claudeEP));
    assert.equal(types[0], 'message_start');
    assert.equal(types.at(-1), 'message_stop');
    assertRouted(response, claudeEP);
    assertForwarded(claudeEP, CLAUDE_MODEL, 'x-api-key');
  });

  test(`OpenAI SDK chat completions, not streamed, ${pin.name}`, async () => {
    const { data, response } = await openai(pinnedHeaders(pin, chatEP)).chat.completions.create({
      model: pinnedModel(pin, chatEP, CHAT_MODEL), messages: [{ role: 'user', content: 'hi' }],
    }).withResponse();
    assert.equal(data.choices[0].message.content, answerOf(chatEP));
    assertRouted(response, chatEP);
    assertForwarded(chatEP, CHAT_MODEL, 'authorization');
  });

  test(`OpenAI SDK chat completions, streamed with usage, ${pin.name}`, async () => {
    const { data: stream, response } = await openai(pinnedHeaders(pin, chatEP)).chat.completions.create({
      model: pinnedModel(pin, chatEP, CHAT_MODEL), stream: true, stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'hi' }],
    }).withResponse();
    let text = '';
    let usage = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, answerOf(chatEP));
    assert.equal(usage?.total_tokens, 13, 'the usage chunk must come through');
    assertRouted(response, chatEP);
    assertForwarded(chatEP, CHAT_MODEL, 'authorization');
  });

  test(`OpenAI SDK responses, not streamed, ${pin.name}`, async () => {
    const { data, response } = await openai(pinnedHeaders(pin, respEP)).responses.create({
      model: pinnedModel(pin, respEP, RESPONSES_MODEL), input: 'hi',
    }).withResponse();
    assert.equal(data.output_text, answerOf(respEP));
    assertRouted(response, respEP);
    assertForwarded(respEP, RESPONSES_MODEL, 'authorization');
  });

  test(`OpenAI SDK responses, streamed, ${pin.name}`, async () => {
    const { data: stream, response } = await openai(pinnedHeaders(pin, respEP)).responses.create({
      model: pinnedModel(pin, respEP, RESPONSES_MODEL), input: 'hi', stream: true,
    }).withResponse();
    let text = '';
    const seqs = [];
    let completed = null;
    for await (const ev of stream) {
      seqs.push(ev.sequence_number);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') completed = ev.response;
    }
    assert.equal(text, answerOf(respEP));
    assert.ok(completed, 'response.completed must arrive');
    assert.deepEqual(seqs, seqs.map((_, i) => i), 'every typed event arrives once, in order');
    assertRouted(response, respEP);
    assertForwarded(respEP, RESPONSES_MODEL, 'authorization');
  });
}

test('Anthropic SDK count_tokens through ccmesh', async () => {
  const res = await anthropic().messages.countTokens({ model: CLAUDE_MODEL, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(res.input_tokens, 42);
  assert.equal(lastRequest('claude-1').path.split('?')[0], '/v1/messages/count_tokens');
});

test('OpenAI SDK lists the models ccmesh serves', async () => {
  const ids = [];
  for await (const m of openai().models.list()) ids.push(m.id);
  for (const want of [CHAT_MODEL, RESPONSES_MODEL]) {
    assert.ok(ids.includes(want), `models ${JSON.stringify(ids)} should include ${want}`);
  }
});

test('an unknown pinned endpoint is a 400, never a silent fallback', async () => {
  await assert.rejects(
    anthropic({ 'x-ccmesh-endpoint': 'no-such-endpoint' }).messages.create({ model: CLAUDE_MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
    (err) => err.status === 400 && /no-such-endpoint/.test(err.message),
  );
});

test('Anthropic SDK with a bearer token: the upstream gets only the endpoint key', async () => {
  const client = new Anthropic({ baseURL: mesh.url, apiKey: null, authToken: 'client-bearer-token', maxRetries: 0 });
  const msg = await client.messages.create({ model: CLAUDE_MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(msg.content[0].text, answerOf('claude-1'));
  const req = lastRequest('claude-1');
  assert.equal(req.headers['x-api-key'], 'sk-claude-1-key');
  assert.equal(req.headers.authorization, undefined, 'the client bearer token must not reach the upstream');
});

test('a burst of 26 count_tokens requests, as Claude Code\'s /context sends, all succeed', async () => {
  const client = anthropic();
  const results = await Promise.all(Array.from({ length: 26 }, () => client.messages.countTokens({ model: CLAUDE_MODEL, messages: [{ role: 'user', content: 'hi' }] })));
  assert.deepEqual(results.map((r) => r.input_tokens), Array(26).fill(42));
});
