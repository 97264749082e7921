// Claude Code (the real CLI) through a relay in front of an older backend,
// which refuses context_management and the context-management beta that
// Claude Code sends on every turn (docs/BEHAVIOUR.md#refused-fields): the relay
// refuses one request in all, ccmesh learns, and later requests go out
// without them; clearing what was learned brings the refusal back once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startUpstream, answerOf } from '../lib/fake-upstream.js';
import { startCCMesh } from '../lib/ccmesh.js';
import { offlineSuite } from '../lib/offline.js';
import { runClaude as runClaudeIn } from '../lib/clients.js';

const suite = offlineSuite('ccmesh-relays-');
const FIELD = 'context_management';
const BETA = 'context-management-2025-06-27';

const runClaude = (baseURL, prompt) => runClaudeIn({ baseURL, prompt, cwd: suite.workDir, env: suite.trap.env });

function assertAnswered(run, want) {
  const detail = `exit ${run.code} signal ${run.signal}\nstdout: ${run.stdout.slice(0, 2000)}\nstderr: ${run.stderr.slice(0, 2000)}`;
  assert.equal(run.code, 0, `claude exit code; ${detail}`);
  assert.equal(run.result?.is_error, false, `claude reports an error; ${detail}`);
  assert.ok(String(run.result.result).includes(want), `claude's answer ${JSON.stringify(run.result?.result)} should contain ${JSON.stringify(want)}`);
}

const turnsOf = (up) => up.requests.filter((r) => r.path.split('?')[0] === '/v1/messages');
const carries = (r) => FIELD in (r.body ?? {}) || (r.headers['anthropic-beta'] ?? '').split(',').map((v) => v.trim()).includes(BETA);

test('a relay that refuses what Claude Code sends refuses it once; ccmesh learns and leaves it out', async () => {
  const relay = await startUpstream('relay', { refuse: { fields: [FIELD], betas: [BETA] } });
  const mesh = await startCCMesh();
  try {
    const ep = await mesh.addEndpoint({ name: 'relay', base_url: relay.url, protocol: 'anthropic', api_key: 'sk-relay-key' });

    // Two runs: the first request is refused once; it and everything after go without.
    for (const run of [1, 2]) {
      assertAnswered(await runClaude(mesh.url, `say hello (run ${run})`), answerOf('relay'));
    }
    const turns = turnsOf(relay);
    assert.ok(turns.length >= 3, `want the refused try and at least one request per run, got ${turns.length}`);
    assert.ok(carries(turns[0]), `Claude Code's first request should carry ${FIELD} and ${BETA}: ${JSON.stringify(turns[0].headers['anthropic-beta'])}`);
    assert.equal(relay.refusals, 1, 'the relay should refuse exactly one request over two runs');
    for (const r of turns.slice(1)) {
      assert.ok(!carries(r), `a request after the refusal still carries ${FIELD} or ${BETA}`);
    }
    const learned = await mesh.admin('GET', `/api/endpoints/${ep.id}`);
    assert.deepEqual(learned.drops.map((d) => `${d.drop}:${d.source}`).sort(), [`${FIELD}:learned`, `beta:${BETA}:learned`].sort());
    assert.ok(learned.drops.every((d) => d.error.includes('400: ')), JSON.stringify(learned.drops));
    const rows = await mesh.logs(2);
    assert.ok(rows.every((row) => row.status === 200), `Claude Code must see no 400: ${JSON.stringify(rows.map((r) => r.status))}`);
    const taught = rows.find((row) => row.history?.[0]?.refused);
    assert.ok(taught, 'no log row shows the refused first try');
    assert.deepEqual([...taught.history[0].dropped].sort(), [FIELD, `beta:${BETA}`].sort());

    // Cleared, the next run pays the refusal once more and learns again.
    await mesh.admin('PUT', `/api/endpoints/${ep.id}`, { drops: [] });
    assertAnswered(await runClaude(mesh.url, 'say hello (run 3)'), answerOf('relay'));
    assert.equal(relay.refusals, 2, 'clearing what was learned should bring the refusal back once');
  } finally {
    await mesh.stop();
    await relay.close();
  }
  assert.deepEqual(suite.trap.attempts, [], 'Claude Code tried to reach hosts other than 127.0.0.1');
});
