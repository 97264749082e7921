// A fake upstream speaking only the Gemini API (generateContent,
// streamGenerateContent with and without alt=sse, countTokens, the model
// list), which checks thought signatures as Gemini 3 does: every
// functionCall it answers carries a thoughtSignature, and a request whose
// history returns one of its calls without that signature (or with
// another) is refused with Gemini's 400 INVALID_ARGUMENT. Any other
// path is 404, as a real Gemini-only upstream answers.
//
// Like lib/fake-upstream.js it takes a tool round trip: a request whose
// contents hold TOOL_MARKER and that declares the tool the fake wants
// (`toolCall`) is answered with a call to it; a request that carries a
// functionResponse is answered with text quoting it.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { answerOf, TOOL_MARKER } from './fake-upstream.js';

/** The Gemini API paths the fake serves (docs/BEHAVIOUR.md#inbound-api). */
export const GEMINI_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

/**
 * startGemini listens on 127.0.0.1 on a free port.
 * @param {string} name - used in answers
 * @param {{key?: string, toolCall?: {name: string, input: object}}} [opts]
 *   key: the only API key accepted (x-goog-api-key or ?key=);
 *   toolCall: the tool (and its arguments) the fake calls
 */
export async function startGemini(name, opts = {}) {
  const up = {
    name,
    requests: [], // {method, path, query, headers, body}
    refusals: [], // the 400s for a call returned without its signature
    signatures: new Map(), // call name + args -> the signature the fake sent
    url: '',
    server: null,
    close: () => new Promise((resolve) => { up.server.closeAllConnections(); up.server.close(resolve); }),
  };
  up.server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url, 'http://127.0.0.1');
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try { body = raw ? JSON.parse(raw) : null; } catch { body = null; }
      up.requests.push({ method: req.method, path: url.pathname, query: url.search.slice(1), headers: req.headers, body });
      route(up, opts, req, res, url, body);
    });
  });
  await new Promise((resolve) => up.server.listen(0, '127.0.0.1', resolve));
  up.url = `http://127.0.0.1:${up.server.address().port}`;
  return up;
}

function json(res, status, doc) {
  const b = JSON.stringify(doc);
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(b) });
  res.end(b);
}

function refuse(res, code, status, message) {
  json(res, code, { error: { code, message, status } });
}

function route(up, opts, req, res, url, body) {
  const key = req.headers['x-goog-api-key'] ?? url.searchParams.get('key');
  if (opts.key && key !== opts.key) {
    return refuse(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.');
  }
  if (req.method === 'GET' && url.pathname === '/v1beta/models') {
    return json(res, 200, { models: [{ name: 'models/gemini-e2e', supportedGenerationMethods: ['generateContent', 'countTokens'] }] });
  }
  const m = GEMINI_PATH.exec(url.pathname);
  if (req.method !== 'POST' || !m) {
    return refuse(res, 404, 'NOT_FOUND', `fake ${up.name} speaks only the Gemini API: no ${req.method} ${url.pathname}`);
  }
  if (!body) return refuse(res, 400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
  const [, model, method] = m;
  if (method === 'countTokens') return json(res, 200, { totalTokens: 42 });
  const missing = unsignedCall(up, body.contents ?? []);
  if (missing) {
    up.refusals.push(missing);
    return refuse(res, 400, 'INVALID_ARGUMENT', `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${missing.name}\` , position ${missing.position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`);
  }
  const parts = turnParts(up, opts, body);
  const answer = {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 5, totalTokenCount: 16 },
    modelVersion: model,
    responseId: `resp-${up.name}-${up.requests.length}`,
  };
  if (method === 'generateContent') return json(res, 200, answer);
  // Streamed: the text in two chunks, so that a client that got only one
  // got half an answer; usage and the finish reason on the last.
  const chunks = streamChunks(answer);
  if (url.searchParams.get('alt') === 'sse') {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\r\n\r\n`);
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
  res.end(`[${chunks.map((c) => JSON.stringify(c)).join(',\r\n')}]`);
}

function streamChunks(answer) {
  const [cand] = answer.candidates;
  const [first] = cand.content.parts;
  if (cand.content.parts.length !== 1 || typeof first.text !== 'string') return [answer];
  const half = Math.ceil(first.text.length / 2);
  return [
    { candidates: [{ content: { role: 'model', parts: [{ text: first.text.slice(0, half) }] }, index: 0 }], modelVersion: answer.modelVersion, responseId: answer.responseId },
    { ...answer, candidates: [{ ...cand, content: { role: 'model', parts: [{ text: first.text.slice(half) }] } }] },
  ];
}

const callKey = (fc) => `${fc.name}\u0000${JSON.stringify(fc.args ?? {})}`;

/**
 * unsignedCall finds the first functionCall of the history that the fake
 * made and that comes back without the signature it was sent with, as
 * Gemini 3 refuses it: only the first call of a model turn must carry one.
 */
function unsignedCall(up, contents) {
  let position = 0;
  for (const c of contents) {
    let first = true;
    for (const p of c.parts ?? []) {
      position += 1;
      if (c.role !== 'model' || !p.functionCall) continue;
      const sent = up.signatures.get(callKey(p.functionCall));
      if (first && sent !== undefined && p.thoughtSignature !== sent) return { name: p.functionCall.name, position };
      first = false;
    }
  }
  return null;
}

/** turnParts decides the answer: a tool result quoted, the wanted call, or text. */
function turnParts(up, opts, body) {
  const contents = body.contents ?? [];
  const result = contents.flatMap((c) => c.parts ?? []).find((p) => p.functionResponse);
  if (result) {
    return [{ text: `${answerOf(up.name)}; the tool said: ${JSON.stringify(result.functionResponse.response ?? {})}` }];
  }
  const declared = (body.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((f) => f.name);
  const want = opts.toolCall;
  if (want && JSON.stringify(contents).includes(TOOL_MARKER) && declared.includes(want.name)) {
    const fc = { name: want.name, args: want.input };
    const sig = randomBytes(24).toString('base64');
    up.signatures.set(callKey(fc), sig);
    return [{ functionCall: fc, thoughtSignature: sig }];
  }
  return [{ text: answerOf(up.name) }];
}
