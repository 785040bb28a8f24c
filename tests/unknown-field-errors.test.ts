/**
 * A body with a field its endpoint does not take is refused saying what the body does take: a resume, which takes
 * none, says so (it said "a resume takes ." with nothing after it), and the PlatformService RPCs name their request's
 * fields (README does not, and "unknown field: refs" alone left a caller guessing). The real server on port 0.
 */
import test from 'ava';
import { TEST_GRAPH, startServer } from './helpers/server-fixture.js';

const GRAPH = { ...TEST_GRAPH, schedules: [{ name: 'yearly', cron: '0 0 1 1 *', partitions: ['ok/y${year}'] }] };
const JSON_POST = { method: 'POST', headers: { 'content-type': 'application/json' } };

test('a resume with a field says it takes none and what to send', async (t) => {
  const f = await startServer(t, { graph: GRAPH });
  const r = await f.api('/api/schedules/yearly/resume', { ...JSON_POST, body: '{"reason": "back up"}' });
  t.is(r.status, 400);
  const { error } = (await r.json()) as { error: string };
  t.is(error, "Unknown field 'reason'; a resume takes no fields: send {} (or no body).");
  t.is((await f.api('/api/schedules/yearly/resume', { ...JSON_POST, body: '{}' })).status, 200);
});

test('an RPC body with a misspelled field names the fields of its request', async (t) => {
  const f = await startServer(t);
  for (const method of ['GetJobConfigs', 'AnalyzeGraph']) {
    const r = await f.api(`/platform.v1.PlatformService/${method}`, { ...JSON_POST, body: '{"refs": ["ok/a"]}' });
    t.is(r.status, 400, method);
    const { code, message } = (await r.json()) as { code: string; message: string };
    t.is(code, 'invalid_argument');
    t.regex(message, /unknown field: "refs"\. A (JobConfigRequest|GraphAnalyzeRequest) has outputRefs \(or output_refs\)\.$/, method);
    const ok = await f.api(`/platform.v1.PlatformService/${method}`, { ...JSON_POST, body: '{"output_refs": ["ok/a"]}' });
    t.is(ok.status, 200, `${method}: the field as named works`);
  }
});

test('POST /api/ui_link with a field is refused as every other body is; none, or {}, is the link', async (t) => {
  const f = await startServer(t);
  const r = await f.api('/api/ui_link', { ...JSON_POST, body: '{"next": "/wants"}' });
  t.is(r.status, 400);
  t.is(((await r.json()) as { error: string }).error, "Unknown field 'next'; POST /api/ui_link takes no fields: send {} (or no body).");
  for (const init of [{ method: 'POST' }, { ...JSON_POST, body: '{}' }]) {
    const ok = await f.api('/api/ui_link', init);
    t.is(ok.status, 200);
    t.regex(((await ok.json()) as { url: string }).url, /^http:\/\/127\.0\.0\.1:\d+\//);
  }
});
