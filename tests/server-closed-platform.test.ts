/**
 * An embedder that closes its platform and leaves the server running gets the 503 of a server shutting down from every
 * route, not a 500 from gc or "could not write the workspace's directory" from a read (QA, session 33). The real server.
 */
import test from 'ava';
import { startHttpServer } from '../lib/server/http-server.js';
import { makeWorkspace, openPlatform } from './helpers/jobs-fixture.js';

test('a server whose platform was closed answers 503 saying it shuts down, for writes and reads alike, not a 500', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, { jobs: [{ label: 'a', outputs: ['a/(?<k>.+)'], exec: ['true'] }] });
  const server = await startHttpServer(platform, { port: 0, log: () => {}, logError: (l) => t.log(l) });
  t.teardown(() => server.close());
  t.is((await fetch(`${server.url}/api/events?limit=1`)).status, 200);
  await platform.close();
  const requests: Array<[string, string, string | undefined]> = [
    ['POST', '/api/gc', '{"dry_run": true}'],
    ['GET', '/api/events?limit=1', undefined],
    ['GET', '/api/events/1', undefined],
    ['POST', '/api/taints', '{"partitions": ["a/1"]}'],
    ['GET', '/api/status', undefined],
  ];
  for (const [method, path, body] of requests) {
    const res = await fetch(`${server.url}${path}`, { method, ...(body ? { headers: { 'content-type': 'application/json' }, body } : {}) });
    t.is(res.status, 503, `${method} ${path}`);
    t.is(res.headers.get('retry-after'), '5');
    t.is(((await res.json()) as { error: string }).error, 'The server is shutting down and takes no new requests; retry once it runs again.', `${method} ${path}`);
  }
});
