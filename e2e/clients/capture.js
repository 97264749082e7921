// Captures the request bodies the pinned real clients send, for the
// translation codecs' and the token estimate's tests (docs/BEHAVIOUR.md#translation,
// docs/BEHAVIOUR.md#what-clients-send): Claude Code and Codex CLI each
// run one tool round trip straight against a fake upstream, offline.
//
//   cd e2e/clients && unshare --net sh -c 'ip link set lo up && exec node capture.js'
//
// Writes proxy/translate/testdata/captured/*.json. Only absolute temp
// paths and random ids (UUIDs) are replaced, by stable placeholders; the
// structure and every field name are as sent.
import { mkdtempSync, writeFileSync, rmSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startUpstream, TOOL_MARKER } from './lib/fake-upstream.js';
import { assertLoopbackOnly, startTrapProxy } from './lib/offline.js';
import { runClaude, runCodex } from './lib/clients.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.resolve(here, '..', '..', 'proxy', 'translate', 'testdata', 'captured');
const pkg = JSON.parse(readFileSync(path.join(here, 'package.json'), 'utf8'));

assertLoopbackOnly();
const trap = await startTrapProxy();
const workDir = mkdtempSync(path.join(os.tmpdir(), 'ccmesh-capture-'));
// [path, placeholder]; Claude Code also names its project by the working
// directory with every other character turned into '-'.
const scrubs = [[workDir, '/tmp/ccmesh-capture'], [workDir.replace(/[^A-Za-z0-9]/g, '-'), '-tmp-ccmesh-capture']];
const ids = new Map();

/** scrub replaces temp paths and UUIDs, the same UUID by the same placeholder in every file. */
function scrub(text) {
  // The longest first: HOME lies inside the working directory.
  for (const [from, to] of [...scrubs].sort((a, b) => b[0].length - a[0].length)) text = text.split(from).join(to);
  return text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, (u) => {
    const key = u.toLowerCase();
    if (!ids.has(key)) ids.set(key, `00000000-0000-4000-8000-${String(ids.size + 1).padStart(12, '0')}`);
    return ids.get(key);
  });
}

function save(file, body) {
  writeFileSync(path.join(outDir, file), `${scrub(JSON.stringify(body, null, 2))}\n`);
  console.log(`wrote ${path.relative(process.cwd(), path.join(outDir, file))}`);
}

function fail(what, run, up) {
  const seen = up.requests.map((r) => `${r.method} ${r.path}`).join(', ');
  throw new Error(`${what}\nexit ${run.code} signal ${run.signal}\nrequests: ${seen}\nstdout: ${run.stdout.slice(0, 3000)}\nstderr: ${run.stderr.slice(0, 3000)}`);
}

async function captureClaudeCode() {
  const note = path.join(workDir, 'note.txt');
  writeFileSync(note, 'the secret word is marmalade\n');
  const up = await startUpstream('capture', { toolFile: note });
  try {
    const run = await runClaude({
      baseURL: up.url,
      prompt: `${TOOL_MARKER}: read the note ${note} and tell me the secret word`,
      cwd: workDir,
      args: ['--allowedTools', 'Read'],
      env: trap.env,
    });
    scrubs.push([run.home, '/tmp/ccmesh-capture/home']);
    const turns = up.requests.filter((r) => r.path.split('?')[0] === '/v1/messages');
    const turn1 = turns.find((r) => (r.body?.tools ?? []).length > 0);
    const turn2 = turns.find((r) => JSON.stringify(r.body?.messages ?? []).includes('"tool_result"'));
    if (!turn1 || !turn2) fail('Claude Code did not make the tool round trip', run, up);
    if (!String(run.result?.result).includes('marmalade')) fail('Claude Code did not answer with the file', run, up);
    save('claude-code-turn1.json', turn1.body);
    save('claude-code-turn2.json', turn2.body);
  } finally {
    await up.close();
  }
}

// `claude -p /context` sends a burst of count_tokens requests (one per part
// of the context); the first that carries tools is kept.
async function captureClaudeCodeCountTokens() {
  const up = await startUpstream('capture');
  try {
    const run = await runClaude({ baseURL: up.url, prompt: '/context', cwd: workDir, env: trap.env });
    scrubs.push([run.home, '/tmp/ccmesh-capture/home']);
    const counts = up.requests.filter((r) => r.path.split('?')[0] === '/v1/messages/count_tokens');
    const withTools = counts.find((r) => (r.body?.tools ?? []).length > 0);
    if (!withTools) fail('claude -p /context sent no count_tokens request with tools', run, up);
    save('claude-code-count-tokens.json', withTools.body);
  } finally {
    await up.close();
  }
}

async function captureCodex() {
  const up = await startUpstream('capture', { toolCall: { name: 'exec_command', input: { cmd: 'echo ccmesh-e2e' } } });
  try {
    const run = await runCodex({
      baseURL: `${up.url}/v1`,
      prompt: `${TOOL_MARKER}: run \`echo ccmesh-e2e\` and tell me what it printed`,
      cwd: workDir,
      env: trap.env,
    });
    scrubs.push([run.home, '/tmp/ccmesh-capture/home'], [run.codexHome, '/tmp/ccmesh-capture/codex-home']);
    const turns = up.requests.filter((r) => r.path.split('?')[0] === '/v1/responses');
    const turn1 = turns.find((r) => (r.body?.tools ?? []).length > 0);
    const turn2 = turns.find((r) => (r.body?.input ?? []).some?.((i) => i.type === 'function_call_output'));
    if (!turn1 || !turn2) fail('Codex did not make the tool round trip', run, up);
    if (!JSON.stringify(turn2.body.input).includes('ccmesh-e2e')) fail('the function_call_output does not carry the command output', run, up);
    if (!run.events.some((e) => e.type === 'turn.completed')) fail('Codex did not complete the turn', run, up);
    save('codex-turn1.json', turn1.body);
    save('codex-turn2.json', turn2.body);
  } finally {
    await up.close();
  }
}

try {
  mkdirSync(outDir, { recursive: true });
  await captureClaudeCode();
  await captureClaudeCodeCountTokens();
  await captureCodex();
  if (trap.attempts.length > 0) throw new Error(`a client tried to reach hosts other than 127.0.0.1: ${trap.attempts.join(', ')}`);
  console.log(`captured with @anthropic-ai/claude-code ${pkg.dependencies['@anthropic-ai/claude-code']} and @openai/codex ${pkg.dependencies['@openai/codex']}`);
} finally {
  await trap.close();
  rmSync(workDir, { recursive: true, force: true });
}
