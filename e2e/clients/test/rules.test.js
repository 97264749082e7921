// Claude Code (the real CLI) through ccmesh's routing rules
// (docs/BEHAVIOUR.md#routing-rules): a subagent's requests go where a
// "subagent" rule sends them, with that rule's model, while the main
// conversation stays on the normal endpoints; a long-context rule moves a
// large request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startUpstream, answerOf, TOOL_MARKER } from '../lib/fake-upstream.js';
import { startCCMesh } from '../lib/ccmesh.js';
import { offlineSuite } from '../lib/offline.js';
import { runClaude as runClaudeIn } from '../lib/clients.js';

const suite = offlineSuite('ccmesh-rules-');
const runClaude = (baseURL, prompt) => runClaudeIn({ baseURL, prompt, cwd: suite.workDir, env: suite.trap.env });

function assertAnswered(run, want) {
  const detail = `exit ${run.code} signal ${run.signal}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;
  assert.equal(run.code, 0, `claude exit code; ${detail}`);
  assert.equal(run.result?.is_error, false, `claude reports an error; ${detail}`);
  assert.ok(String(run.result.result).includes(want), `claude's answer ${JSON.stringify(run.result?.result)} should contain ${JSON.stringify(want)}`);
}

const turnsOf = (up) => up.requests.filter((r) => r.path.split('?')[0] === '/v1/messages');
// billingLine is the system prompt's first text: Claude Code's billing line.
const billingLine = (r) => (Array.isArray(r.body?.system) ? r.body.system[0]?.text : r.body?.system) ?? '';
const isSubagent = (r) => 'x-claude-code-agent-id' in r.headers || billingLine(r).includes('cc_is_subagent=true;');

test('a subagent rule sends the Agent tool\'s requests to its endpoint with its model; the main conversation stays', async () => {
  // A answers the main conversation's first turn with a call to Agent (the
  // prompt holds TOOL_MARKER), then text. The subagent's prompt holds the
  // marker too: B answers its first turn with a call to Agent of its own,
  // whose prompt does not, so the nesting stops there.
  const agentCall = (prompt) => ({ name: 'Agent', input: { description: 'Say hello', prompt, subagent_type: 'general-purpose', run_in_background: false } });
  const a = await startUpstream('main-A', { toolCall: agentCall(`${TOOL_MARKER}: ask an agent of your own to say hello`) });
  const b = await startUpstream('cheap-B', { toolCall: agentCall('Reply with one word: hello') });
  const mesh = await startCCMesh();
  try {
    await mesh.addEndpoint({ name: 'A', base_url: a.url, protocol: 'anthropic', api_key: 'sk-a-key' });
    await mesh.addEndpoint({ name: 'B', base_url: b.url, protocol: 'anthropic', api_key: 'sk-b-key', tags: ['cheap'] });
    const saved = await mesh.setSettings({ rules: [{ name: 'subagents', when: { agent: 'subagent' }, then: { endpoints: ['tag:cheap'], model_map: { 'claude-*': 'glm-4.6' } } }] });
    assert.deepEqual(saved.warnings, []);

    assertAnswered(await runClaude(mesh.url, `${TOOL_MARKER}: ask an agent to say hello`), answerOf('main-A'));

    const mains = turnsOf(a);
    const subs = turnsOf(b);
    assert.ok(mains.length >= 2, `want the Agent call and the answer after it from A, got ${mains.length} requests`);
    for (const r of mains) {
      assert.ok(!isSubagent(r), `a main-conversation request reached A marked as a subagent's: ${JSON.stringify(r.headers)} ${billingLine(r)}`);
      assert.ok(!('x-claude-code-parent-agent-id' in r.headers));
      assert.notEqual(r.body.model, 'glm-4.6');
    }
    for (const r of subs) {
      assert.match(r.headers['x-claude-code-agent-id'] ?? '', /^[0-9a-f]{17}$/, `a subagent's request without its agent id: ${JSON.stringify(r.headers)}`);
      assert.ok(billingLine(r).startsWith('x-anthropic-billing-header:') && billingLine(r).includes('cc_is_subagent=true;'), `billing line ${JSON.stringify(billingLine(r))}`);
      assert.equal(r.body.model, 'glm-4.6', 'B gets the rule\'s model');
    }
    // The first subagent names no parent; its own subagent names it.
    const firstLevel = subs.filter((r) => !('x-claude-code-parent-agent-id' in r.headers));
    const nested = subs.filter((r) => 'x-claude-code-parent-agent-id' in r.headers);
    assert.ok(firstLevel.length >= 2 && nested.length >= 1, `want both subagents at B: ${subs.map((r) => JSON.stringify([r.headers['x-claude-code-agent-id'], r.headers['x-claude-code-parent-agent-id']]))}`);
    const parents = new Set(firstLevel.map((r) => r.headers['x-claude-code-agent-id']));
    assert.ok(nested.every((r) => parents.has(r.headers['x-claude-code-parent-agent-id']) && !parents.has(r.headers['x-claude-code-agent-id'])));

    const rows = await mesh.logs(mains.length + subs.length);
    const turns = (name) => rows.filter((row) => row.endpoint === name && row.path === '/v1/messages');
    const seen = JSON.stringify(rows.map((r) => [r.endpoint, r.rule, r.model_forwarded]));
    assert.equal(turns('B').length, subs.length, seen);
    assert.ok(turns('B').every((row) => row.rule === 'subagents' && row.model_forwarded === 'glm-4.6'), seen);
    assert.ok(turns('A').every((row) => row.rule === ''), seen);
  } finally {
    await mesh.stop();
    await a.close();
    await b.close();
  }
  assert.deepEqual(suite.trap.attempts, [], 'Claude Code tried to reach hosts other than 127.0.0.1');
});

test('a long-context rule moves a large request to its endpoint', async () => {
  const small = await startUpstream('small');
  const large = await startUpstream('large-window');
  const mesh = await startCCMesh();
  try {
    await mesh.addEndpoint({ name: 'small', base_url: small.url, protocol: 'anthropic', api_key: 'sk-small-key' });
    await mesh.addEndpoint({ name: 'large', base_url: large.url, protocol: 'anthropic', api_key: 'sk-large-key' });
    // Claude Code's own system prompt and tools are some 11 000 tokens by
    // ccmesh's estimate (2.1.332); the long prompt (under the kernel's
    // 128 KiB limit on one argument) adds about 23 000.
    await mesh.setSettings({ rules: [{ name: 'long', when: { input_tokens_over: 20000 }, then: { endpoints: ['large'] } }] });
    assertAnswered(await runClaude(mesh.url, 'say hello'), answerOf('small'));
    const words = 'the quick brown fox jumps over the lazy dog '.repeat(2600);
    assertAnswered(await runClaude(mesh.url, `count these words: ${words}`), answerOf('large-window'));
    assert.ok(turnsOf(small).length >= 1 && turnsOf(large).length >= 1);
    const rows = await mesh.logs(2);
    const seen = JSON.stringify(rows.map((r) => [r.endpoint, r.rule]));
    assert.ok(rows.some((row) => row.endpoint === 'large' && row.rule === 'long'), seen);
    assert.ok(rows.every((row) => (row.endpoint === 'large') === (row.rule === 'long')), seen);
  } finally {
    await mesh.stop();
    await small.close();
    await large.close();
  }
  assert.deepEqual(suite.trap.attempts, [], 'Claude Code tried to reach hosts other than 127.0.0.1');
});
