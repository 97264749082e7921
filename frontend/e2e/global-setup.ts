import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const frontend = resolve(here, '..');
const repo = resolve(frontend, '..');

/**
 * Makes the ccmesh binary the specs start. `make test-e2e` hands one in via
 * CCMESH_BIN (built with the UI embedded); otherwise build the UI into dist/
 * and the headless binary into a temp dir, so the run tests this tree.
 */
export default function globalSetup(): void {
  if (process.env.CCMESH_BIN) {
    if (!existsSync(process.env.CCMESH_BIN)) throw new Error(`CCMESH_BIN=${process.env.CCMESH_BIN} does not exist`);
    return;
  }
  execFileSync('npx', ['vite', 'build', '--logLevel', 'warn'], { cwd: frontend, stdio: 'inherit' });
  const bin = join(mkdtempSync(join(tmpdir(), 'ccmesh-e2e-bin-')), 'ccmesh');
  execFileSync('go', ['build', '-o', bin, '.'], { cwd: repo, stdio: 'inherit', env: { ...process.env, CGO_ENABLED: '0' } });
  process.env.CCMESH_BIN = bin;
}
