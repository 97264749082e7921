// Starts the real ccmesh binary headless on loopback and drives its admin
// API. The binary comes from CCMESH_BIN, or is built from this checkout.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const ADMIN_TOKEN = 'e2e-clients-admin-token';

/** ccmeshBinary returns CCMESH_BIN or builds ccmesh once into a temp dir. */
export function ccmeshBinary() {
  if (process.env.CCMESH_BIN) return process.env.CCMESH_BIN;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ccmesh-bin-'));
  const out = path.join(dir, 'ccmesh');
  // GOFLAGS=-mod=mod would reach the network; the module cache must already
  // hold the dependencies (make test-go runs first).
  execFileSync('go', ['build', '-o', out, '.'], { cwd: repoRoot, stdio: 'inherit', env: { ...process.env, CGO_ENABLED: '0', GOPROXY: 'off' } });
  process.env.CCMESH_BIN = out;
  return out;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** startCCMesh runs ccmesh on a fresh data dir; call stop() when done. */
export async function startCCMesh() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'ccmesh-data-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(ccmeshBinary(), ['--headless', '--listen', `127.0.0.1:${port}`, '--data', dataDir, '--admin-token', ADMIN_TOKEN, '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  let exited = false;
  child.on('exit', () => { exited = true; });

  const admin = async (method, p, body) => {
    const res = await fetch(url + p, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status}: ${text}`);
    return text ? JSON.parse(text) : null;
  };

  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await admin('GET', '/api/info');
      break;
    } catch (err) {
      if (exited || Date.now() > deadline) throw new Error(`ccmesh did not start: ${err.message}\n${output}`);
      await delay(25);
    }
  }

  const mesh = {
    url,
    admin,
    output: () => output,
    addEndpoint: (spec) => admin('POST', '/api/endpoints', spec),
    setSettings: (s) => admin('PUT', '/api/settings', s),
    health: () => admin('GET', '/api/health'),
    /**
     * logs waits until at least n request-log rows exist (the log writer is
     * asynchronous) and returns them newest first, each with its history.
     */
    async logs(n = 1, { timeoutMs = 5000 } = {}) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const page = await admin('GET', '/api/logs?limit=500');
        if (page.items.length >= n) {
          return Promise.all(page.items.map((row) => admin('GET', `/api/logs/${row.id}`)));
        }
        if (Date.now() > end) throw new Error(`want ${n} log rows, have ${page.items.length} after ${timeoutMs} ms`);
        await delay(25);
      }
    },
    async stop() {
      if (!exited) {
        const done = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await done;
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return mesh;
}
