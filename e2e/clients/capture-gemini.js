// Captures every request the pinned Gemini CLI sends to the Gemini API, for
// the Gemini codec's and the proxy's tests (docs/BEHAVIOUR.md#gemini-cli):
// a recording fake serves the Gemini API paths on loopback and Gemini CLI
// runs headless against it, offline, in three sessions — a plain text turn,
// a tool round trip (the fake calls read_file, one of the tools the CLI
// declares, with a thoughtSignature, then answers with text) and a turn the
// fake refuses with a spent daily quota (429 RESOURCE_EXHAUSTED).
//
//   cd e2e/clients && unshare --net sh -c 'ip link set lo up && exec node capture-gemini.js'
//
// Writes proxy/translate/testdata/captured/gemini-cli/<session>-<n>.json:
// method, path, query, headers (the key's value replaced, host's port and
// content-length left out) and the parsed body. Absolute temp paths and
// the time in the function call ids Gemini CLI makes up are replaced by
// stable placeholders; everything else is as sent.
import http from 'node:http';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertLoopbackOnly, startTrapProxy } from './lib/offline.js';
import { runGemini } from './lib/clients.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.resolve(here, '..', '..', 'proxy', 'translate', 'testdata', 'captured', 'gemini-cli');
const pkg = JSON.parse(readFileSync(path.join(here, 'package.json'), 'utf8'));
const KEY = 'test';
const SIGNATURE = 'Y2NtZXNoLWZha2UtdGhvdWdodC1zaWduYXR1cmUtMQ=='; // base64, as Gemini's are
const TOOL_ANSWER = 'The secret word is marmalade.';

/** part of a Gemini answer: one candidate of the given parts, with usage. */
function answer(model, parts) {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 120, candidatesTokenCount: 8, totalTokenCount: 140, thoughtsTokenCount: 12 },
    modelVersion: model,
    responseId: 'ccmesh-fake-response',
  };
}

const hasFunctionResponse = (body) => (body?.contents ?? []).some((c) => (c.parts ?? []).some((p) => p.functionResponse));

/**
 * plan is what the fake answers in one session: `main(body, model)` gives
 * the parts of an answer to a request that declares tools, or an error
 * {status, error} to send instead.
 */
const plans = {
  text: { main: () => [{ text: 'Hello from the fake Gemini.' }] },
  image: { main: () => [{ text: 'A single pixel.' }] },
  tool: {
    main: (body, note) => {
      if (hasFunctionResponse(body)) return [{ text: TOOL_ANSWER }];
      const declared = (body.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((f) => f.name);
      if (!declared.includes('read_file')) throw new Error(`Gemini CLI did not declare read_file: ${declared.join(', ')}`);
      return [
        { text: 'Reading the note.', thought: true },
        { functionCall: { name: 'read_file', args: { file_path: note } }, thoughtSignature: SIGNATURE },
      ];
    },
  },
  // A daily quota spent, as the Gemini API words it: Gemini CLI takes a
  // PerDay QuotaFailure as final and does not retry.
  quota: {
    main: (body) => ({ status: 429, error: QUOTA_ERROR(body.__model) }),
  },
};

function QUOTA_ERROR(model) {
  return {
    code: 429,
    message: 'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n' +
      `* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 50, model: ${model}\nPlease retry in 36.6s.`,
    status: 'RESOURCE_EXHAUSTED',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
        violations: [{
          quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
          quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier',
          quotaDimensions: { location: 'global', model },
          quotaValue: '50',
        }],
      },
      { '@type': 'type.googleapis.com/google.rpc.Help', links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }] },
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '36s' },
    ],
  };
}

/** jsonAnswer answers the CLI's side calls (the model router's classifier, the next-speaker check) in their schema. */
function jsonAnswer(body) {
  const schema = JSON.stringify(body?.generationConfig?.responseJsonSchema ?? body?.generationConfig?.responseSchema ?? {});
  if (schema.includes('complexity_score')) return { complexity_reasoning: 'Simple request.', complexity_score: 10 };
  if (schema.includes('next_speaker')) return { reasoning: 'The model answered.', next_speaker: 'user' };
  return {};
}

/** startFake serves the Gemini API paths and records every request. */
async function startFake(plan, note) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      const url = new URL(req.url, 'http://127.0.0.1');
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = raw;
      try { body = raw ? JSON.parse(raw) : null; } catch { /* kept as text */ }
      requests.push({ at: Date.now(), method: req.method, path: url.pathname, query: url.search.slice(1), headers: req.headers, body });
      try {
        serve(req, res, url, body, plan, note);
      } catch (err) {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 500, status: 'INTERNAL', message: String(err.message) } }));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

function sendJSON(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(value));
}

function serve(req, res, url, body, plan, note) {
  const m = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(url.pathname);
  if (req.method === 'GET' && url.pathname === '/v1beta/models') {
    sendJSON(res, 200, { models: [{ name: 'models/gemini-2.5-flash', supportedGenerationMethods: ['generateContent', 'countTokens'] }] });
    return;
  }
  if (req.method !== 'POST' || !m) {
    sendJSON(res, 404, { error: { code: 404, status: 'NOT_FOUND', message: `no such path ${url.pathname}` } });
    return;
  }
  const [, model, method] = m;
  if (method === 'countTokens') {
    sendJSON(res, 200, { totalTokens: 42 });
    return;
  }
  if (!(body?.tools ?? []).length) {
    // A side call: answered in the schema it asks for, or with text.
    const parts = body?.generationConfig?.responseMimeType === 'application/json' ? [{ text: JSON.stringify(jsonAnswer(body)) }] : [{ text: 'ok' }];
    reply(res, method, url, answer(model, parts));
    return;
  }
  const parts = plan.main({ ...body, __model: model }, note);
  if (parts.error) {
    sendJSON(res, parts.status, { error: parts.error });
    return;
  }
  reply(res, method, url, answer(model, parts));
}

function reply(res, method, url, value) {
  if (method === 'generateContent') {
    sendJSON(res, 200, value);
    return;
  }
  if (url.searchParams.get('alt') === 'sse') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${JSON.stringify(value)}\r\n\r\n`);
    return;
  }
  sendJSON(res, 200, [value]);
}

const workDir = mkdtempSync(path.join(os.tmpdir(), 'ccmesh-capture-gemini-'));
// The CLI lists its built-in skills by their path under node_modules.
const scrubs = [[workDir, '/tmp/ccmesh-capture'], [here, '/ccmesh/e2e/clients']];

function scrub(text) {
  for (const [from, to] of [...scrubs].sort((a, b) => b[0].length - a[0].length)) text = text.split(from).join(to);
  // The ids Gemini CLI makes up for function calls carry the time in ms.
  return text.replace(/"([a-z_]+)_\d{13}_(\d+)"/g, '"$1_1700000000000_$2"');
}

/** record turns one received request into what is committed. */
function record(r) {
  const headers = {};
  for (const [k, v] of Object.entries(r.headers)) {
    if (k === 'content-length') continue; // of the unscrubbed body
    if (k === 'host') headers[k] = '127.0.0.1:<port>';
    else if (v.includes(KEY) && (k === 'x-goog-api-key' || k === 'authorization')) headers[k] = v.replace(KEY, '<key removed>');
    else headers[k] = v;
  }
  return { method: r.method, path: r.path, query: r.query, headers, body: r.body };
}

function fail(what, run, up) {
  const seen = up.requests.map((r) => `${r.method} ${r.path}?${r.query}`).join(', ');
  throw new Error(`${what}\nexit ${run.code} signal ${run.signal}\nrequests: ${seen}\nstdout: ${run.stdout.slice(0, 3000)}\nstderr: ${run.stderr.slice(0, 3000)}`);
}

async function capture(session, prompt, check, env) {
  // A fixed name: Gemini CLI names its per-project temp dir after it.
  const project = path.join(workDir, session);
  mkdirSync(project);
  scrubs.push([project, `/tmp/ccmesh-capture/${session}`]);
  const note = path.join(project, 'note.txt');
  writeFileSync(note, 'the secret word is marmalade\n');
  // A 1×1 PNG: a prompt that names it sends it inline, and Gemini CLI
  // counts the tokens of a request with media through countTokens.
  writeFileSync(path.join(project, 'pic.png'), Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'));
  const up = await startFake(plans[session], note);
  const started = Date.now();
  try {
    const run = await runGemini({ baseURL: up.url, prompt, cwd: project, homeIn: workDir, env: { ...env, GEMINI_API_KEY: KEY } });
    scrubs.push([run.home, '/tmp/ccmesh-capture/home']);
    check(run, up);
    up.requests.forEach((r, i) => {
      const file = `${session}-${String(i + 1).padStart(2, '0')}.json`;
      writeFileSync(path.join(outDir, file), `${scrub(JSON.stringify(record(r), null, 2))}\n`);
      console.log(`wrote ${file}: +${r.at - started} ms ${r.method} ${r.path}${r.query ? `?${r.query}` : ''}`);
    });
    console.log(`${session}: exit ${run.code} after ${Date.now() - started} ms, ${up.requests.length} requests`);
    return run;
  } finally {
    await up.close();
  }
}

const mainTurns = (up) => up.requests.filter((r) => (r.body?.tools ?? []).length > 0);

let trap;
try {
  assertLoopbackOnly();
  trap = await startTrapProxy();
  mkdirSync(outDir, { recursive: true });
  for (const f of readdirSync(outDir)) if (f.endsWith('.json')) rmSync(path.join(outDir, f));
  await capture('text', 'say hello', (run, up) => {
    if (run.code !== 0 || !run.stdout.includes('Hello from the fake Gemini.')) fail('Gemini CLI did not print the answer', run, up);
  }, trap.env);
  await capture('tool', 'read the file note.txt and tell me the secret word', (run, up) => {
    const turns = mainTurns(up);
    if (!turns.some((r) => hasFunctionResponse(r.body))) fail('Gemini CLI did not send the functionResponse', run, up);
    if (run.code !== 0 || !run.stdout.includes(TOOL_ANSWER)) fail('Gemini CLI did not print the answer after the tool', run, up);
  }, trap.env);
  await capture('image', 'describe @pic.png in one line', (run, up) => {
    console.log(`image: exit ${run.code}, paths ${up.requests.map((r) => r.path).join(' ')}`);
  }, trap.env);
  await capture('quota', 'say hello', (run, up) => {
    if (run.code === 0) fail('Gemini CLI should fail when its quota is spent', run, up);
    console.log(`quota: exit ${run.code}, stderr starts ${JSON.stringify(run.stderr.slice(0, 400))}`);
  }, trap.env);
  if (trap.attempts.length > 0) throw new Error(`Gemini CLI tried to reach hosts other than 127.0.0.1: ${trap.attempts.join(', ')}`);
  console.log(`captured with @google/gemini-cli ${pkg.dependencies['@google/gemini-cli']}`);
} finally {
  await trap?.close();
  rmSync(workDir, { recursive: true, force: true });
}
