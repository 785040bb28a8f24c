/**
 * A follow (`platform want wait`, `platform build`) reads a want's runs a page at a time, and a run of its own only
 * when the page cut its outputs: a run whose environment alone was cut (`truncated`) is not read again, one request
 * a run. Real daemon on port 0, the real CLI through a counting proxy.
 */
import test from 'ava';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWant, startServer, waitForWant } from './helpers/server-fixture.js';
import { cliAgainst } from './helpers/cli-against.js';

test('platform want wait reads no run one by one when only its env is cut', async (t) => {
  const program =
    `const refs = process.argv.slice(1); const env = {}; for (let i = 0; i < 25; i++) env['V' + i] = 'x';` +
    `process.stdout.write(JSON.stringify({ configs: refs.map((r) => ({ outputs: [r], inputs: [], args: [], env })) }));`;
  const f = await startServer(t, { graph: { jobs: [{ label: 'e', outputs: ['e/.+'], config: ['node', '-e', program], exec: ['true'] }] } });
  const refs = Array.from({ length: 30 }, (_, i) => `e/${i}`);
  const id = await createWant(f, refs);
  await waitForWant(f, id, ['successful']);

  // A plain forwarding proxy that counts the detail reads of runs.
  const target = new URL(f.url);
  let detailReads = 0;
  const proxy = createServer((req, res) => {
    if (/^\/api\/job_runs\/r-/.test(req.url ?? '')) detailReads++;
    const up = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    req.pipe(up);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  t.teardown(() => proxy.close());
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const r = await cliAgainst(() => url)('want', 'wait', id);
  t.is(r.code, 0, r.stderr);
  t.is(detailReads, 0, `${detailReads} runs read one by one for their env alone`);
});
