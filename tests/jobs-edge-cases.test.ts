/**
 * Edge cases of scheduling found in review: abandoned builds settle, joiners are on record, lineage is kept
 * when an input is built for someone else, and a slow config program holds up no one else.
 */
import { emptyList, listArray, listItems, listLength } from '../lib/state/append-list.js';
import test from 'ava';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { wantsOfRun } from '../lib/state/build-state.js';
import { LATER, planAt } from './helpers/plan-at.js';
import { bash, makeWorkspace, openPlatform, want, waitFor, waitForWant } from './helpers/jobs-fixture.js';

test('canceling a want whose only run waits out its retry backoff settles the partition as canceled', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [{ label: 'flaky', outputs: ['flaky/(?<n>\\d+)'], exec: bash('exit 3'), retries: 5 }],
  });
  const id = await want(platform, ['flaky/1']);
  // The first attempt failed and a retry is scheduled seconds away: nothing runs, yet the partition is building.
  await waitFor(platform, (s) => [...s.job_runs.values()].some((r) => r.status === 'failed' && r.retry_at > 0), 'a failure with a retry pending');
  t.is(platform.state().partitions.get('flaky/1')?.status, 'building');
  const retryAt = Math.max(...[...platform.state().job_runs.values()].map((r) => r.retry_at));
  // On virtual time: at the retry's moment the planner would queue it (so the check below can fail).
  t.true((await planAt(platform, retryAt + 1)).events.some((e) => e.type === 'job_run_queued'));

  const reply = await platform.cancelWant(id);
  t.true(reply.ok);
  const s = platform.state();
  t.is(s.wants.get(id)?.status, 'canceled');
  t.is(s.partitions.get('flaky/1')?.status, 'canceled', 'no want needs it: it must not stay building');
  t.is(s.partitions_by_status.building.size, 0);
  // And no retry happens later on its behalf: at the retry's moment, or an hour on, the planner queues nothing.
  for (const at of [retryAt + 1, LATER()]) {
    const plan = await planAt(platform, at);
    t.deepEqual(plan.events, [], `nothing to do at ${at}`);
    t.deepEqual(plan.launch, []);
  }
});

test('a want that joins a running build is among the run’s want_ids', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [{ label: 'gate', outputs: ['gate/(?<n>\\d+)'], exec: bash('while [ ! -f release ]; do sleep 0.05; done') }],
  });
  const first = await want(platform, ['gate/1']);
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'the run to start');
  const second = await want(platform, ['gate/1']);
  const run = [...platform.state().job_runs.values()][0]!;
  t.deepEqual([...wantsOfRun(platform.state(), run.job_run_id)].sort(), [first, second].sort());
  t.deepEqual(listArray(platform.state().wants.get(second)?.job_run_ids ?? emptyList()), [run.job_run_id]);
  writeFileSync(join(dir, 'release'), '');
  await waitForWant(platform, second, ['successful']);
  t.is(platform.state().job_runs.size, 1, 'built once');
});

test('an input being built for another want still gets a derived want of this one, which survives that want’s cancel', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [
      { label: 'raw', outputs: ['raw/(?<n>\\d+)'], exec: bash('while [ ! -f release ]; do sleep 0.05; done') },
      {
        label: 'top',
        outputs: ['top/(?<n>\\d+)'],
        inputs: [{ partition_ref: 'raw/${n}', dep_type: 'MATERIALIZE' }],
        exec: bash('echo top > top.txt'),
      },
    ],
  });
  const other = await want(platform, ['raw/1']);
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'raw to run for the other want');
  const mine = await want(platform, ['top/1']);
  const s = await waitFor(platform, (st) => listLength(st.wants.get(mine)?.child_want_ids ?? emptyList()) > 0, 'a derived want');
  const child = s.wants.get(listArray(s.wants.get(mine)!.child_want_ids)[0]!)!;
  t.deepEqual(child.partitions, ['raw/1']);
  t.is(child.root_want_id, mine);
  t.is(s.wants.get(mine)?.status, 'upstream_building');
  t.is(s.job_runs.size, 1, 'the derived want joined the running build');

  await platform.cancelWant(other);
  t.is(platform.state().job_runs_by_status.running.size, 1, 'still needed by my derived want: not killed');
  writeFileSync(join(dir, 'release'), '');
  await waitForWant(platform, mine, ['successful']);
  t.true(existsSync(join(dir, 'top.txt')));
});

test('a config program that hangs holds up neither replies nor other wants', async (t) => {
  const dir = makeWorkspace(t, {
    'slow-config.sh': 'while [ ! -f release-config ]; do sleep 0.05; done\necho \'{"configs": [{"outputs": ["slow/1"]}]}\'\n',
  });
  const platform = await openPlatform(t, dir, {
    jobs: [
      { label: 'slow', outputs: ['slow/(?<n>\\d+)'], config: ['bash', 'slow-config.sh'], exec: bash('true') },
      { label: 'quick', outputs: ['quick/(?<n>\\d+)'], exec: bash('echo quick > quick.txt') },
    ],
  });
  const slow = await want(platform, ['slow/1']);
  // While the config program blocks, another want is accepted, built and finished.
  const quick = await want(platform, ['quick/1']);
  await waitForWant(platform, quick, ['successful']);
  t.is(platform.state().wants.get(slow)?.status, 'idle', 'still waiting for its config');
  writeFileSync(join(dir, 'release-config'), '');
  await waitForWant(platform, slow, ['successful']);
  t.pass();
});

test('a want not satisfied within its ttl is canceled with its derived wants, and its run is killed', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [
      { label: 'stuck', outputs: ['stuck/(?<n>\\d+)'], exec: bash('echo $$ > stuck.pid; sleep 100') },
      {
        label: 'top',
        outputs: ['top/(?<n>\\d+)'],
        inputs: [{ partition_ref: 'stuck/${n}', dep_type: 'MATERIALIZE' }],
        exec: bash('true'),
      },
    ],
  });
  const r = await platform.createWant({ partitions: ['top/1'], comment: '', data_timestamp: 0, ttl_seconds: 1, sla_seconds: 0 });
  if (!r.ok) return t.fail(r.error);
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'the input to run');
  await waitForWant(platform, r.want_id, ['canceled'], 5000);
  // The root's cancel and its children's are one batch, folded event by event: wait for the whole of it.
  const s = await waitFor(platform, (st) => st.wants_by_status.canceled.size === 2, 'the derived want to be canceled too');
  const root = s.wants.get(r.want_id)!;
  t.regex(root.cancel_reason, /ttl of 1 s expired/);
  t.true(root.updated_at - root.created_at >= 1000, 'not before its time');
  for (const child of listItems(root.child_want_ids)) t.is(s.wants.get(child)?.status, 'canceled');
  const run = await waitFor(platform, (st) => st.job_runs_by_status.canceled.size === 1, 'the run to be canceled');
  t.is(run.job_runs_by_status.running.size, 0);
  // The run says it was the ttl, not someone's cancel.
  const [, canceledId] = [...run.job_runs_by_status.canceled][0]!;
  t.is(run.job_runs.get(canceledId)!.reason, `want ${r.want_id} canceled: its ttl of 1 s expired before its partitions were built`);
});

test('one ref its config program rejects fails alone; the batch is bisected, not re-run ref by ref', async (t) => {
  const dir = makeWorkspace(t, {
    // Fails the whole run when any ref it is given is bad/…; counts its runs.
    'config.sh':
      'echo run >> config-runs.txt\n' +
      'for r in "$@"; do case "$r" in bad/*) echo "cannot configure $r" >&2; exit 2;; esac; done\n' +
      'printf \'{"configs": [\'; sep=""; for r in "$@"; do printf \'%s{"outputs": ["%s"]}\' "$sep" "$r"; sep=","; done; echo "]}"\n',
  });
  const platform = await openPlatform(t, dir, {
    jobs: [{ label: 'cfg', outputs: ['(?:good|bad)/(?<n>\\d+)'], config: ['bash', 'config.sh'], exec: bash('true') }],
  });
  const good = Array.from({ length: 15 }, (_, i) => `good/${i}`);
  // One want: its 16 refs reach the config program as one batch.
  const id = await want(platform, [...good, 'bad/1']);
  await waitForWant(platform, id, ['failed']);
  const s = await waitFor(platform, (st) => good.every((ref) => st.partitions.get(ref)?.status === 'live'), 'every good ref to be built');
  const badRun = [...s.job_runs.values()].find((r) => r.config.outputs.includes('bad/1'))!;
  t.regex(badRun.reason, /cannot configure bad\/1/);
  const runs = readFileSync(join(dir, 'config-runs.txt'), 'utf8').trim().split('\n').length;
  t.true(runs <= 1 + 2 * Math.ceil(Math.log2(16)), `config program ran ${runs} times for 16 refs`);
});

test('a dep_missed job gets its own want for the missing input, so another want’s cancel cannot strand it', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [
      { label: 'y', outputs: ['y/(?<n>\\d+)'], exec: bash('while [ ! -f release-y ]; do sleep 0.05; done; touch y.done') },
      {
        label: 'x',
        outputs: ['x/(?<n>\\d+)'],
        inputs: [{ partition_ref: 'y/${n}', dep_type: 'MATERIALIZE' }],
        exec: bash('touch x.done'),
      },
      { label: 'a', outputs: ['a/(?<n>\\d+)'], exec: bash('[ -f x.done ] || { echo \'PLATFORM_MISSING_DEPS {"missing": ["x/1"]}\'; exit 1; }') },
    ],
  });
  const other = await want(platform, ['x/1']); // asks for x/1 first; x/1 waits for y/1
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'y/1 to run');
  const mine = await want(platform, ['a/1']);
  await waitFor(platform, (s) => s.job_runs_by_status.dep_missed.size === 1, 'a/1 to miss x/1');
  await platform.cancelWant(other); // x/1 has no run of its own yet: no run event will announce anything
  writeFileSync(join(dir, 'release-y'), '');
  const s = await waitForWant(platform, mine, ['successful']);
  t.true([...s.wants.values()].some((w) => w.parent_want_id === mine && w.source === 'dep_missed'));
});

test('a retry pending when the server restarts happens after the restart, on time', async (t) => {
  const dir = makeWorkspace(t);
  const graph = { jobs: [{ label: 'f', outputs: ['f/(?<n>\\d+)'], exec: bash('[ -f failed-once ] && exit 0; touch failed-once; exit 1'), retries: 2 }] };
  const first = await openPlatform(t, dir, graph);
  const id = await want(first, ['f/1']);
  await waitFor(first, (s) => [...s.job_runs.values()].some((r) => r.status === 'failed' && r.retry_at > 0), 'a retry to be pending');
  await first.close();
  const second = await openPlatform(t, dir, graph); // its tick is 60 s: only the recorded deadline can wake it
  const s = await waitForWant(second, id, ['successful'], 8000);
  t.is(s.job_runs.size, 2);
});
