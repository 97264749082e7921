// Starts and stops a real headless ccmesh for one test: its own port, data
// dir (real SQLite) and admin token.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Endpoint {
  id: number;
  name: string;
  fast: boolean;
  fast_sort_order: number;
  sort_order: number;
  enabled: boolean;
  models: string[];
  keys: { id: number; label: string; key_masked: string }[];
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', res));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((res) => srv.close(() => res()));
  return port;
}

export class Ccmesh {
  readonly token = `e2e-admin-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
  readonly dataDir = mkdtempSync(join(tmpdir(), 'ccmesh-e2e-data-'));
  port = 0;
  private proc: ChildProcess | null = null;

  constructor(private readonly logPath: string) {}

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The start-up link that sets the admin cookie. */
  get uiURL(): string {
    return `${this.base}/ui/?token=${this.token}`;
  }

  async start(port?: number): Promise<void> {
    this.port = port ?? (await freePort());
    const bin = process.env.CCMESH_BIN;
    if (!bin) throw new Error('CCMESH_BIN is not set (global-setup builds it)');
    const log = createWriteStream(this.logPath, { flags: 'a' });
    this.proc = spawn(bin, ['--headless', '--listen', `127.0.0.1:${this.port}`, '--data', this.dataDir, '--admin-token', this.token], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, HOME: this.dataDir },
    });
    this.proc.stdout?.pipe(log);
    this.proc.stderr?.pipe(log);
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (this.proc.exitCode !== null) throw new Error(`ccmesh exited with ${this.proc.exitCode}; see ${this.logPath}`);
      try {
        const r = await fetch(`${this.base}/api/endpoints`, { headers: this.headers() });
        if (r.ok) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`ccmesh did not answer /api/endpoints in 20 s; see ${this.logPath}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async stop(): Promise<void> {
    const p = this.proc;
    this.proc = null;
    if (!p || p.exitCode !== null) return;
    const exited = new Promise<void>((res) => p.once('exit', () => res()));
    p.kill('SIGTERM');
    const timer = setTimeout(() => p.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  headers(): Record<string, string> {
    return { Authorization: `Bearer ${this.token}`, 'Content-Type': 'application/json' };
  }

  async api<T>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await fetch(`${this.base}${path}`, { method, headers: this.headers(), body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  addEndpoint(body: Record<string, unknown>): Promise<Endpoint> {
    return this.api('POST', '/api/endpoints', { protocol: 'anthropic', ...body });
  }

  endpoints(): Promise<Endpoint[]> {
    return this.api('GET', '/api/endpoints');
  }

  /** Names in the fast queue, in queue order, as the server has them. */
  async fastQueue(): Promise<string[]> {
    const eps = await this.endpoints();
    return eps.filter((e) => e.fast).sort((a, b) => a.fast_sort_order - b.fast_sort_order).map((e) => e.name);
  }

  /** One Claude-style request through the proxy; `opts` sets the client's own key and the prompt. */
  async message(model = 'claude-sonnet-4-5', stream = false, opts: { apiKey?: string; prompt?: string } = {}): Promise<Response> {
    const r = await fetch(`${this.base}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': opts.apiKey ?? 'client-key' },
      body: JSON.stringify({ model, max_tokens: 16, stream, messages: [{ role: 'user', content: opts.prompt ?? 'ping' }] }),
    });
    await r.text();
    return r;
  }
}
