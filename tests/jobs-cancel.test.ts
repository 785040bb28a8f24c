/**
 * Cancel with real processes: the whole process group dies within a second (the job and a grandchild it put in
 * the background), the run and the want are recorded canceled, and a run another active want still needs lives on.
 */
import { listArray } from '../lib/state/append-list.js';
import test, { type ExecutionContext } from 'ava';
import { LATER, planAt } from './helpers/plan-at.js';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import {
  bash,
  isPidAlive,
  killAtTeardown,
  makeWorkspace,
  openPlatform,
  pidsIn,
  poll,
  runsFor,
  waitFor,
  waitForWant,
  want,
} from './helpers/jobs-fixture.js';

/** `hold/<n>`: a job that starts a background sleep (its pid in child-<n>.pid) and sleeps itself. */
function holdGraph() {
  return {
    jobs: [
      {
        label: 'hold',
        outputs: ['hold/(?<n>\\d+)'],
        exec: bash('echo $$ >> "job-$1.pid"; sleep 100 & echo $! > "child-$1.pid"; sleep 100'),
        args: ['${n}'],
      },
      {
        label: 'after',
        outputs: ['after/(?<n>\\d+)'],
        inputs: [{ partition_ref: 'hold/${n}', dep_type: 'MATERIALIZE' }],
        exec: bash('echo after >> after.txt'),
      },
    ],
  };
}

async function runningPids(t: ExecutionContext, dir: string, platform: Awaited<ReturnType<typeof openPlatform>>, n: number) {
  const state = await waitFor(
    platform,
    (s) => runsFor(s, `hold/${n}`).some((r) => r.status === 'running'),
    `hold/${n} to be running`,
  );
  const run = runsFor(state, `hold/${n}`).find((r) => r.status === 'running')!;
  const childFile = join(dir, `child-${n}.pid`);
  // Until the job wrote it, or ended without: how soon a job spawned gets to its first commands is no fixed time (a
  // loaded machine took more than the 3 s once bounded here). 20 s only guards against a hang, as `until` does.
  const written = () => existsSync(childFile) && pidsIn(dir, `child-${n}.pid`).length > 0;
  if (!(await poll(() => written() || !isPidAlive(run.pid), 20_000)) || !written()) {
    throw new Error(`the job did not write ${childFile} (its process ${run.pid} alive: ${isPidAlive(run.pid)})`);
  }
  const child = pidsIn(dir, `child-${n}.pid`)[0]!;
  killAtTeardown(t, () => [run.pid, child]);
  return { run, jobPid: run.pid, childPid: child };
}

test('canceling a want kills the job and its grandchild within a second; run and want are canceled', async (t) => {
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => [...pidsIn(dir, 'job-1.pid'), ...pidsIn(dir, 'child-1.pid')]);
  const platform = await openPlatform(t, dir, holdGraph());
  const w = await want(platform, ['hold/1']);
  const { run, jobPid, childPid } = await runningPids(t, dir, platform, 1);
  t.true(jobPid > 0);
  t.deepEqual(pidsIn(dir, 'job-1.pid'), [jobPid], "the run's pid is the job's process");
  t.true(isPidAlive(jobPid));
  t.true(isPidAlive(childPid));

  const began = Date.now();
  const reply = await platform.cancelWant(w);
  t.true(reply.ok);
  t.true(
    await poll(() => !isPidAlive(jobPid) && !isPidAlive(childPid), 1000 - (Date.now() - began)),
    `within 1 s of the cancel: job ${jobPid} alive=${isPidAlive(jobPid)}, grandchild ${childPid} alive=${isPidAlive(childPid)}`,
  );
  t.true(Date.now() - began <= 1000);

  const state = await waitFor(
    platform,
    (s) => s.job_runs.get(run.job_run_id)?.status === 'canceled',
    'the run to be recorded canceled',
    3000,
  );
  t.is(state.wants.get(w)!.status, 'canceled');
  t.is(state.job_runs.get(run.job_run_id)!.status, 'canceled');
  t.is(runsFor(state, 'hold/1').length, 1, 'nothing rebuilds it');
  // Canceling again is a no-op success.
  const again = await platform.cancelWant(w);
  t.true(again.ok);
  t.deepEqual((await planAt(platform, LATER())).events, [], 'nothing is ever due for it again');
  t.is(runsFor(platform.state(), 'hold/1').length, 1);
});

test('canceling a want does not cancel a run that another active want still needs', async (t) => {
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => [...pidsIn(dir, 'job-2.pid'), ...pidsIn(dir, 'child-2.pid')]);
  const platform = await openPlatform(t, dir, holdGraph());
  const a = await want(platform, ['hold/2']);
  const { run, jobPid, childPid } = await runningPids(t, dir, platform, 2);
  const b = await want(platform, ['hold/2']);
  t.deepEqual(listArray(platform.state().wants.get(b)!.job_run_ids), [run.job_run_id]);

  // The planner's decision for the cancel: no kill (a kill is recorded as the run's cancel in the same step).
  t.deepEqual((await planAt(platform, Date.now(), [{ kind: 'cancel_want', want_id: a, reason: 'test' }])).kill, []);
  t.true((await platform.cancelWant(a)).ok);
  let state = platform.state();
  t.is(state.wants.get(a)!.status, 'canceled');
  t.is(state.wants.get(b)!.status, 'building');
  t.is(state.job_runs.get(run.job_run_id)!.status, 'running');
  t.true(isPidAlive(jobPid), 'the job still runs for the other want');
  t.true(isPidAlive(childPid));

  // The last want's cancel does kill it.
  t.true((await platform.cancelWant(b)).ok);
  t.true(await poll(() => !isPidAlive(jobPid) && !isPidAlive(childPid), 1000), 'killed with the last want');
  state = await waitFor(platform, (s) => s.job_runs.get(run.job_run_id)?.status === 'canceled', 'the run canceled', 3000);
  t.is(state.wants.get(b)!.status, 'canceled');
});

test('canceling a want cancels its derived wants, but not an input run a direct want needs', async (t) => {
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => [...pidsIn(dir, 'job-3.pid'), ...pidsIn(dir, 'child-3.pid')]);
  const platform = await openPlatform(t, dir, holdGraph());
  const top = await want(platform, ['after/3']);
  const { run, jobPid } = await runningPids(t, dir, platform, 3);
  const direct = await want(platform, ['hold/3']);
  const derivedId = listArray(platform.state().wants.get(top)!.child_want_ids)[0]!;
  t.truthy(derivedId);

  t.deepEqual((await planAt(platform, Date.now(), [{ kind: 'cancel_want', want_id: top, reason: 'test' }])).kill, []);
  t.true((await platform.cancelWant(top)).ok);
  const state = platform.state();
  t.is(state.wants.get(top)!.status, 'canceled');
  t.is(state.wants.get(derivedId)!.status, 'canceled', 'the derived want goes with its parent');
  t.is(state.wants.get(direct)!.status, 'building');
  t.is(state.job_runs.get(run.job_run_id)!.status, 'running');
  t.true(isPidAlive(jobPid));

  t.true((await platform.cancelWant(direct)).ok);
  t.true(await poll(() => !isPidAlive(jobPid), 1000));
  await waitForWant(platform, direct, ['canceled'], 3000);
});

test("canceling a derived want while the want it serves still needs it is a 409 naming that want's cancel, and kills nothing", async (t) => {
  const dir = makeWorkspace(t);
  killAtTeardown(t, () => [...pidsIn(dir, 'job-4.pid'), ...pidsIn(dir, 'child-4.pid')]);
  const platform = await openPlatform(t, dir, holdGraph());
  const top = await want(platform, ['after/4']);
  const { run, jobPid } = await runningPids(t, dir, platform, 4);
  const derivedId = listArray(platform.state().wants.get(top)!.child_want_ids)[0]!;
  const refused = await platform.cancelWant(derivedId);
  if (refused.ok) return t.fail('the cancel of a derived want was taken');
  t.is(refused.status, 409);
  t.is(refused.want_id, derivedId);
  t.regex(refused.error, new RegExp(`Want '${derivedId}' was derived for the inputs of '${top}', which still needs them: .* platform want cancel ${top} \\(DELETE /api/wants/${top}\\)\\.$`));
  const state = platform.state();
  t.is(state.wants.get(derivedId)!.status, 'building');
  t.is(state.job_runs.get(run.job_run_id)!.status, 'running');
  t.true(isPidAlive(jobPid));
  // The root's cancel stops it all.
  t.true((await platform.cancelWant(top)).ok);
  t.is(platform.state().wants.get(derivedId)!.status, 'canceled');
  t.true(await poll(() => !isPidAlive(jobPid), 3000));
});
