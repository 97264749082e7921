// Offline guarantees for the real clients: the tests run in a network
// namespace that has only loopback (package.json's `test` script uses
// `unshare -n`), and every client is given a trap proxy that records any
// attempt to reach a host other than 127.0.0.1.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, after } from 'node:test';
import { ccmeshBinary } from './ccmesh.js';

/**
 * assertLoopbackOnly throws unless the only network interface is loopback,
 * so that no client under test can reach any host but 127.0.0.1.
 */
export function assertLoopbackOnly() {
  const names = Object.keys(os.networkInterfaces());
  const outside = names.filter((n) => n !== 'lo');
  if (outside.length > 0) {
    throw new Error(`the client tests must run without a network (found interfaces ${outside.join(', ')}); ` +
      'run them with `npm test`, which enters a loopback-only network namespace (unshare -n, needs root or user namespaces)');
  }
}

/**
 * startTrapProxy is an HTTP(S) proxy that refuses everything and records
 * which hosts a client tried to reach through it.
 */
export async function startTrapProxy() {
  const attempts = [];
  const server = http.createServer((req, res) => {
    attempts.push(`${req.method} ${req.url}`);
    res.writeHead(403).end('ccmesh e2e: network access is not allowed');
  });
  server.on('connect', (req, socket) => {
    attempts.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    attempts,
    /** env points a client's proxy settings at the trap, loopback excepted. */
    env: { HTTPS_PROXY: url, HTTP_PROXY: url, https_proxy: url, http_proxy: url, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/**
 * offlineSuite registers what every real-client test file needs around its
 * tests: the loopback-only check, the built binary, a trap proxy and a
 * working directory named after prefix. The holder it returns has `trap`
 * and `workDir` set once the suite has started.
 */
export function offlineSuite(prefix) {
  const suite = { trap: null, workDir: '' };
  before(async () => {
    assertLoopbackOnly();
    ccmeshBinary();
    suite.trap = await startTrapProxy();
    suite.workDir = mkdtempSync(path.join(os.tmpdir(), prefix));
  });
  after(async () => {
    await suite.trap?.close();
    if (suite.workDir) rmSync(suite.workDir, { recursive: true, force: true });
  });
  return suite;
}
