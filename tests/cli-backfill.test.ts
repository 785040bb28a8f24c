/**
 * Backfills as a user meets them: the REST resource (create by pattern or list, read, list, cancel, and every bad
 * request refused with a JSON error that creates nothing), a 10,000-partition backfill accepted whole with bounded
 * reads, and the real CLI: `backfill` with its progress and exit codes, `backfills list|get|wait|cancel`, --json.
 */
import test from 'ava';
import { cliAgainst } from './helpers/cli-against.js';
import { sharedServer } from './helpers/shared-server.js';
import { until } from './helpers/until.js';
import { backfillTarget } from '../lib/cli/backfill-target.js';


const GRAPH = {
  max_concurrent_job_runs: 2,
  jobs: [
    { label: 'day', outputs: ['day/date=(?<date>[0-9-]+)'], exec: ['bash', '-c', 'exit 0', 'day'] },
    { label: 'bad', outputs: ['bad/(?<n>\\d+)'], args: ['${n}'], exec: ['bash', '-c', '[ "$1" = 2 ] && exit 5; exit 0', 'bad'] },
    // Never ends by itself: what a cancel has to stop.
    { label: 'slow', outputs: ['slow/(?<n>\\d+)'], exec: ['bash', '-c', 'sleep 60', 'slow'] },
  ],
};

const shared = sharedServer(GRAPH, 'platform-backfill-');

const cli = cliAgainst(shared.url);

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${shared.url()}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}


test.serial('bad backfill requests are 400 or 404 with a JSON error and create nothing', async (t) => {
  const before = shared.platform().state().last_event_id;
  const cases: Array<[unknown, RegExp]> = [
    [{}, /exactly one of 'pattern'/],
    [{ pattern: 'day/date={2026-01-01..2026-01-02}', partitions: ['day/date=2026-01-01'] }, /exactly one of/],
    [{ pattern: 'day/date={2026-01-05..2026-01-01}' }, /pattern.*backwards/],
    [{ pattern: 'day/date={1..100000}{1..2}' }, /100,?000/],
    [{ pattern: 'day/date=x', policy: 'some' }, /policy.*missing, failed, all/],
    [{ pattern: 'day/date=x', max_concurrent_job_runs: -1 }, /max_concurrent_job_runs/],
    [{ pattern: 'day/date=x', priority: 1.5 }, /priority/],
    [{ pattern: 'day/date=x', surprise: 1 }, /Unknown field 'surprise'/],
    [{ pattern: 'nothing/{1..9}' }, /^9 of the 9 refs have no job: "nothing\/1", "nothing\/2", "nothing\/3", "nothing\/4", "nothing\/5" and 4 more\. The first: No job produces ref "nothing\/1"[^]*Known outputs[^]*$/],
    // Counts of thousands grouped, as everywhere else.
    [{ pattern: 'nothing/{1..2000}' }, /^2,000 of the 2,000 refs have no job: "nothing\/1", [^]* and 1,995 more\. The first: /],
  ];
  for (const [body, message] of cases) {
    const r = await api('POST', '/api/backfills', body);
    t.is(r.status, 400, JSON.stringify(body));
    t.regex(r.json.error, message, JSON.stringify(body));
    t.true((r.json.error.match(/Known outputs/g) ?? []).length <= 1, `what the graph makes is said once: ${r.json.error}`);
  }
  t.is(shared.platform().state().last_event_id, before, 'nothing was recorded');
  for (const method of ['GET', 'DELETE']) {
    const r = await api(method, '/api/backfills/bf-999');
    t.is(r.status, 404);
    t.regex(r.json.error, /No backfill with id 'bf-999'/);
  }
});

test.serial('a 10,000-partition backfill is accepted whole; its reads are bounded while it builds; a cancel closes it', async (t) => {
  const created = await api('POST', '/api/backfills', { pattern: 'day/date={2000-01-01..2027-05-18}', comment: 'ten thousand days' });
  t.is(created.status, 201, JSON.stringify(created.json));
  t.like(created.json, { partitions: 10_000 });
  t.regex(created.json.backfill_id, /^bf-\d+$/);
  const id = created.json.backfill_id;
  const one = await api('GET', `/api/backfills/${id}`);
  t.like(one.json, { backfill_id: id, want_id: created.json.want_id, partitions: 10_000, policy: 'missing', pattern: 'day/date={2000-01-01..2027-05-18}' });
  const c = one.json.counts;
  t.is(c.live + c.failed + c.skipped + c.building + c.waiting + c.pending, 10_000, 'the counts add up');
  const want = await api('GET', `/api/wants/${created.json.want_id}`);
  t.is(want.json.partitions_total, 10_000);
  t.is(want.json.backfill_id, id);
  const state = shared.platform().state();
  t.true(state.window_open.size <= 256, `a window is open, not the range (${state.window_open.size})`);
  const going = await until(() => api('GET', `/api/backfills/${id}`), (r) => r.json.counts.live >= 100, 'a hundred days to be built', 60_000);
  t.true(going.json.progress > 0 && going.json.progress < 1, `progress ${going.json.progress}`);
  t.true(shared.platform().state().wants.get(created.json.want_id)!.released > 256, 'the window moved on');
  const canceled = await api('DELETE', `/api/backfills/${id}`);
  t.like(canceled.json, { status: 'canceled', cancel_reason: `backfill ${id} canceled by request` });
  t.is(shared.platform().state().window_open.size, 0, 'a canceled backfill has nothing open');
  const listed = await api('GET', '/api/backfills?limit=1&order=desc');
  t.is(listed.json.data.length, 1);
  t.true(listed.json.total >= 1);
});

test.serial('CLI: backfill follows to the end with exit 1 when partitions failed; list, get and --json show it', async (t) => {
  const r = await cli('backfill', 'bad/{1..4}', '--max-concurrent', '1', '--priority', '3');
  t.is(r.code, 1, r.stderr);
  t.regex(r.stdout, /^backfill (bf-\d+) \(want w-\d+\) of 4 partitions: bad\/\{1\.\.4\}/m);
  t.regex(r.stdout, /bf-\d+ failed \[#+-*\] 100% 4\/4 partitions/);
  t.regex(r.stdout, /3 live, 1 failed, 0 skipped of 4/);
  t.regex(r.stderr, /1 of its 4 partitions failed/);
  // Its range's failures, not the workspace's.
  t.regex(r.stderr, /List them: platform partitions list --status failed --prefix bad\/;/);
  const id = /^backfill (bf-\d+)/m.exec(r.stdout)![1]!;
  const got = JSON.parse((await cli('--json', 'backfills', 'get', id)).stdout);
  t.like(got, { backfill_id: id, status: 'failed', priority: 3, max_concurrent_job_runs: 1, counts: { live: 3, failed: 1 } });
  // Waited for after it ended (a second later): the time it took, as `backfills get` shows it, not the time since it began.
  await new Promise((r) => setTimeout(r, 1100));
  const took = (text: string) => / · ([0-9.hms]+)/.exec(text)?.[1];
  const shown = await cli('backfills', 'get', id);
  const waited = await cli('backfills', 'wait', id);
  t.truthy(took(shown.stdout), shown.stdout);
  t.regex(shown.stdout, /│ cap\s+│ 1 job run at once\s+│/, 'one run: singular');
  t.is(took(waited.stdout), took(shown.stdout), waited.stdout);
  const table = await cli('backfills', 'list');
  t.regex(table.stdout, new RegExp(`${id}\\s+│ failed\\s+│ bad/\\{1\\.\\.4\\}`));
  const again = await cli('backfill', 'bad/{1..3}', '--policy', 'failed');
  t.is(again.code, 1, 'bad/2 fails again under the failed policy');
  const skip = await cli('--json', 'backfill', 'bad/{1..3}');
  t.is(skip.code, 0, skip.stderr);
  t.like(JSON.parse(skip.stdout), { status: 'successful', counts: { live: 2, skipped: 1 } });
  // One that ended is not canceled; the refusal names the backfill asked about, not the want behind it.
  const ended = await api('DELETE', `/api/backfills/${id}`);
  t.is(ended.status, 409);
  t.like(ended.json, { error: `Backfill '${id}' already ended (failed); only a backfill that is still building can be canceled.` });
  const endedCli = await cli('backfills', 'cancel', id);
  t.is(endedCli.code, 1);
  t.regex(endedCli.stderr, new RegExp(`Backfill '${id}' already ended`));
  const bad = await cli('backfill', 'bad/{1..3}', '--policy', 'some');
  t.is(bad.code, 2);
  t.regex(bad.stderr, /--policy must be one of missing, failed, all/);
});

test.serial('CLI: a backfill of one partition says "1 partition" in list, get, wait and its own line, not "1 partitions"', async (t) => {
  const created = await api('POST', '/api/backfills', { partitions: ['day/date=2031-01-01'] });
  t.is(created.status, 201, JSON.stringify(created.json));
  const id: string = created.json.backfill_id;
  await until(() => api('GET', `/api/backfills/${id}`), (b) => b.json.status === 'successful', 'the one-partition backfill to end');
  const listed = await cli('backfills', 'list');
  t.is(listed.code, 0, listed.stderr);
  t.regex(listed.stdout, new RegExp(`${id}\\s+│ successful\\s+│ 1 partition\\s+│`));
  const got = await cli('backfills', 'get', id);
  t.regex(got.stdout, /│ range\s+│ 1 listed partition\s+│/);
  t.regex(got.stdout, /100% 1\/1 partition · /);
  const waited = await cli('backfills', 'wait', id);
  t.regex(waited.stdout, /100% 1\/1 partition · /);
  const one = await cli('backfill', 'day/date=2031-01-02');
  t.is(one.code, 0, one.stderr);
  t.regex(one.stdout, /^backfill bf-\d+ \(want w-\d+\) of 1 partition: day\/date=2031-01-02$/m);
  for (const out of [listed.stdout, got.stdout, waited.stdout, one.stdout]) t.notRegex(out, /\b1 (listed )?partitions\b|\/1 partitions/);
});

test.serial('CLI: backfill --detach prints the id; backfills cancel stops its running job; wait reports the cancel', async (t) => {
  const r = await cli('backfill', 'slow/{1..5}', '--detach', '--max-concurrent', '1');
  t.is(r.code, 0, r.stderr);
  const id = r.stdout.trim();
  t.regex(id, /^bf-\d+$/);
  await until(() => api('GET', `/api/backfills/${id}`), (b) => b.json.running_job_runs === 1, 'its first run to start');
  const canceled = await cli('backfills', 'cancel', id);
  t.is(canceled.code, 0, canceled.stderr);
  t.regex(canceled.stdout, new RegExp(`backfill ${id} is canceled`));
  const waited = await cli('backfills', 'wait', id);
  t.is(waited.code, 1);
  t.regex(waited.stderr, new RegExp(`backfill ${id} was canceled`));
  await until(() => api('GET', '/api/job_runs?status=running'), (x) => x.json.data.length === 0, 'no run left running');
  const again = await api('DELETE', `/api/backfills/${id}`);
  t.is(again.status, 200, 'a second cancel is a no-op');
});

test.serial('CLI: --max-concurrent 0 is no cap of its own, as the API takes it; below 0 or above the API\'s cap a usage error', async (t) => {
  const r = await cli('--json', 'backfill', 'day/date={2032-01-01..2032-01-02}', '--detach', '--max-concurrent', '0');
  t.is(r.code, 0, r.stderr);
  const { backfill_id: id } = JSON.parse(r.stdout) as { backfill_id: string };
  t.like((await api('GET', `/api/backfills/${id}`)).json, { backfill_id: id, max_concurrent_job_runs: 0 });
  const shown = await cli('backfills', 'get', id);
  t.regex(shown.stdout, /│ cap +│ none of its own +│/);
  for (const bad of ['-1', '10001']) {
    const refused = await cli('backfill', 'day/date=2032-01-03', '--max-concurrent', bad);
    t.is(refused.code, 2, refused.stderr);
    t.regex(refused.stderr, /--max-concurrent/);
  }
});

test.serial('CLI: build of hundreds of partitions shows progress by tenths, not a line per run, and a summary of counts', async (t) => {
  const r = await cli('build', 'day/date={1990-01-01..1991-02-09}');
  t.is(r.code, 0, r.stderr);
  const perRun = r.stdout.split('\n').filter((l) => / r-\d+ day (succeeded|running|queued)/.test(l));
  t.is(perRun.length, 0, 'no line per run past a few hundred');
  t.regex(r.stdout, /\d+\/405 job runs ended \(\d+ succeeded, 0 failed\)/);
  t.regex(r.stdout, /405 job runs: 405 succeeded, 0 failed, 0 other\./);
});

test.serial('a pattern longer than the 1,024 characters a backfill records is sent as its refs; one whose refs do not fit a request is a usage error saying what to do', async (t) => {
  // 300 dates listed: 3,300 characters in braces, as `build` and `taint` take them.
  const days = Array.from({ length: 300 }, (_, i) => new Date(Date.UTC(2031, 0, 1 + i)).toISOString().slice(0, 10));
  const pattern = `day/date={${days.join(',')}}`;
  t.true(pattern.length > 1024);
  const r = await cli('--json', 'backfill', pattern, '--detach');
  t.is(r.code, 0, r.stderr);
  const reply = JSON.parse(r.stdout);
  t.is(reply.partitions, 300);
  const b = await api('GET', `/api/backfills/${reply.backfill_id}`);
  t.like(b.json, { pattern: '', partitions: 300 });
  await until(() => api('GET', `/api/backfills/${reply.backfill_id}`), (x) => x.json.status === 'successful', 'the listed backfill to end', 60_000);

  const refs = backfillTarget(pattern);
  t.deepEqual('partitions' in refs ? refs.partitions.slice(0, 2) : refs, ['day/date=2031-01-01', 'day/date=2031-01-02']);
  t.deepEqual(backfillTarget('day/date={2031-01-01..2031-12-31}'), { pattern: 'day/date={2031-01-01..2031-12-31}' }, 'a short pattern is sent as it is');
  t.throws(() => backfillTarget(pattern, 1_000), { message: /^the pattern is 3,310 characters, more than the 1,024 a backfill records, and its 300 refs are too many to send one by one \(over 0 KiB\): write its lists as ranges/ });
  const huge = `day/date=${'x'.repeat(600)}{${days.slice(0, 2).join(',')}}{1..${'9'.repeat(4)}}`;
  const refused = await cli('backfill', `${huge}{a,b}`.replace('{a,b}', `{${'y'.repeat(500)},z}`), '--detach');
  t.is(refused.code, 2, refused.stderr);
  t.regex(refused.stderr, /more than the 1,024 a backfill records, and its 39,996 refs are too many to send one by one \(over 960 KiB\): write its lists as ranges .* or split it into several backfills\./);
});
