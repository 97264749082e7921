// Runs the real command-line clients — Claude Code, Codex CLI and Gemini
// CLI, pinned in package.json — with a fresh HOME and only the environment
// docs/BEHAVIOUR.md#what-clients-send names. No helper throws for the
// CLI's own failures: the caller asserts on what it returns.
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, accessSync, constants } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const clientsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const claudeBin = path.join(clientsDir, 'node_modules', '.bin', 'claude');
export const codexBin = path.join(clientsDir, 'node_modules', '.bin', 'codex');
const RUN_TIMEOUT_MS = 90_000;

async function run(bin, args, { cwd, env }) {
  accessSync(bin, constants.X_OK); // a missing CLI must fail the test, never skip it
  // Its own process group, so that a timeout also ends what the CLI started
  // (Gemini CLI relaunches itself in a child node process that would
  // otherwise go on retrying after its parent was killed).
  const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  const killer = setTimeout(() => {
    try { process.kill(-child.pid, 'SIGKILL'); } catch { child.kill('SIGKILL'); }
  }, RUN_TIMEOUT_MS);
  const [code, signal, spawnError] = await new Promise((resolve) => {
    child.once('error', (err) => resolve([null, null, err]));
    child.once('exit', (c, s) => resolve([c, s, null]));
  });
  clearTimeout(killer);
  if (spawnError) throw new Error(`could not run ${bin}: ${spawnError.message}`);
  return { code, signal, stdout, stderr };
}

/**
 * runClaude runs `claude -p prompt --output-format json` against baseURL,
 * in cwd with a fresh HOME under it; `result` is the parsed JSON answer.
 * @param {{baseURL: string, prompt: string, cwd: string, args?: string[], env?: object}} o
 */
export async function runClaude({ baseURL, prompt, cwd, args = [], env = {} }) {
  const home = mkdtempSync(path.join(cwd, 'home-'));
  const out = await run(claudeBin, ['-p', prompt, '--output-format', 'json', ...args], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_BASE_URL: baseURL,
      ANTHROPIC_API_KEY: 'sk-ant-client-key-ccmesh-must-replace',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      ...env,
    },
  });
  let result = null;
  try { result = JSON.parse(out.stdout); } catch { /* the caller asserts with the raw output */ }
  return { ...out, home, result };
}

/**
 * runCodex runs `codex exec --json prompt` with a provider whose base URL is
 * baseURL (an OpenAI-style `/v1` URL) over the Responses wire API, model
 * `gpt-5.5`, in cwd with a fresh HOME under it. CODEX_HOME lives under
 * e2e/clients (under the temp dir Codex refuses to create its helper
 * binaries) and is removed
 * afterwards. `events` are the JSON lines Codex printed; `codexHome` is
 * returned for reference only (it no longer exists).
 * @param {{baseURL: string, prompt: string, cwd: string, env?: object}} o
 */
export async function runCodex({ baseURL, prompt, cwd, env = {} }) {
  const home = mkdtempSync(path.join(cwd, 'home-'));
  const codexHome = mkdtempSync(path.join(clientsDir, '.codex-home-'));
  try {
    writeFileSync(path.join(codexHome, 'config.toml'), [
      'model_provider = "fake"',
      'model = "gpt-5.5"',
      'check_for_update_on_startup = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[model_providers.fake]',
      'name = "fake"',
      `base_url = ${JSON.stringify(baseURL)}`,
      'env_key = "FAKE_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
    ].join('\n'));
    const out = await run(codexBin, ['exec', '--skip-git-repo-check', '--json', '--disable', 'plugins', '-s', 'danger-full-access', prompt], {
      cwd,
      env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: codexHome, FAKE_KEY: 'sk-codex-client-key', ...env },
    });
    const events = [];
    for (const line of out.stdout.split('\n')) {
      if (!line.trim()) continue;
      try { events.push(JSON.parse(line)); } catch { /* not an event; kept in stdout */ }
    }
    return { ...out, home, codexHome, events };
  } finally {
    rmSync(codexHome, { recursive: true, force: true });
  }
}

export const geminiBin = path.join(clientsDir, 'node_modules', '.bin', 'gemini');

/**
 * runGemini runs `gemini --skip-trust -p prompt` against baseURL (a Gemini
 * API root: the CLI appends `/v1beta/models/...`) in cwd, with a fresh HOME
 * under home's parent. Its settings pick API-key auth (with
 * GOOGLE_GEMINI_BASE_URL set and no selected auth type the CLI picks
 * "gateway" and refuses to run headless), and turn off usage statistics,
 * telemetry and the update check. `--skip-trust` because a headless run in
 * an untrusted folder exits 55. Extra args (`-o json`, `-m model`) go after.
 * @param {{baseURL: string, prompt: string, cwd: string, homeIn?: string, args?: string[], env?: object}} o
 */
export async function runGemini({ baseURL, prompt, cwd, homeIn = path.dirname(cwd), args = [], env = {} }) {
  const home = mkdtempSync(path.join(homeIn, 'gemini-home-'));
  mkdirSync(path.join(home, '.gemini'));
  mkdirSync(path.join(home, 'tmp')); // its error reports go to TMPDIR
  writeFileSync(path.join(home, '.gemini', 'settings.json'), `${JSON.stringify({
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  }, null, 2)}\n`);
  const out = await run(geminiBin, ['--skip-trust', '-p', prompt, ...args], {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      TMPDIR: path.join(home, 'tmp'),
      GOOGLE_GEMINI_BASE_URL: baseURL,
      GEMINI_API_KEY: 'gemini-client-key-ccmesh-must-replace',
      ...env,
    },
  });
  return { ...out, home };
}
