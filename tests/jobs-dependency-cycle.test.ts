/**
 * Dependency cycles (found by QA, session 32): a want derived a want for each missing input, and through a cycle that
 * made wants without end (1,300-2,300 a second). A partition that would wait in a cycle fails now, naming it; its
 * wants fail with it, and nothing is derived again for an input a want above already asks for.
 */
import test from 'ava';
import type { BuildState } from '../lib/state/build-state.js';
import { bash, makeWorkspace, openPlatform, want, waitForWant } from './helpers/jobs-fixture.js';

const failureReasons = (s: BuildState): string[] => [...s.job_runs.values()].filter((r) => r.status === 'failed').map((r) => r.reason);

test('a declared cycle (a/1 needs b/1 needs a/1) fails the want, naming the cycle, after a few wants, not thousands', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [
      { label: 'a', outputs: ['a/(?<k>.+)'], inputs: [{ partition_ref: 'b/${k}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
      { label: 'b', outputs: ['b/(?<k>.+)'], inputs: [{ partition_ref: 'a/${k}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
    ],
  });
  const id = await want(platform, ['a/1']);
  const s = await waitForWant(platform, id, ['upstream_failed', 'failed'], 10_000);
  t.true(s.wants.size <= 3, `${s.wants.size} wants were made`);
  t.true(failureReasons(s).some((r) => r.includes('dependency cycle: b/1 -> a/1 -> b/1')), failureReasons(s).join('\n'));
  t.is(s.job_runs_by_status.succeeded.size, 0);
});

test('a cycle of runs that report each other missing fails, naming it', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [
      { label: 'ping', outputs: ['ping/(?<k>.+)'], exec: bash('echo \'PLATFORM_MISSING_DEPS {"missing": ["pong/1"]}\'; exit 1') },
      { label: 'pong', outputs: ['pong/(?<k>.+)'], exec: bash('echo \'PLATFORM_MISSING_DEPS {"missing": ["ping/1"]}\'; exit 1') },
    ],
  });
  const id = await want(platform, ['ping/1']);
  const s = await waitForWant(platform, id, ['upstream_failed', 'failed'], 10_000);
  t.true(s.wants.size <= 3, `${s.wants.size} wants were made`);
  t.true(failureReasons(s).some((r) => /dependency cycle: (pong\/1 -> ping\/1 -> pong\/1|ping\/1 -> pong\/1 -> ping\/1)/.test(r)), failureReasons(s).join('\n'));
});

test('a run that reports its own output missing fails it, rather than wait for ever', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [{ label: 'self', outputs: ['self/(?<k>.+)'], exec: bash('echo \'PLATFORM_MISSING_DEPS {"missing": ["self/1"]}\'; exit 1') }],
  });
  const id = await want(platform, ['self/1']);
  const s = await waitForWant(platform, id, ['failed'], 10_000);
  t.is(s.wants.size, 1);
  t.true(failureReasons(s).some((r) => r.includes('dependency cycle: self/1 -> self/1')), failureReasons(s).join('\n'));
});

test('an input a want above asks for itself is waited on, not derived again; no cycle, so it builds', async (t) => {
  const dir = makeWorkspace(t);
  // top/1 needs mid/1, mid/1 needs base/1, and the want asks for top/1 and base/1 itself.
  const platform = await openPlatform(t, dir, {
    jobs: [
      { label: 'top', outputs: ['top/(?<k>.+)'], inputs: [{ partition_ref: 'mid/${k}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
      { label: 'mid', outputs: ['mid/(?<k>.+)'], inputs: [{ partition_ref: 'base/${k}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
      { label: 'base', outputs: ['base/(?<k>.+)'], exec: bash('sleep 0.3') },
    ],
  });
  const id = await want(platform, ['top/1', 'base/1']);
  const s = await waitForWant(platform, id, ['successful'], 10_000);
  const derived = [...s.wants.values()].filter((w) => w.parent_want_id !== '');
  t.deepEqual(derived.map((w) => w.partitions), [['mid/1']], 'base/1 is the root want\'s own');
  t.is(s.job_runs_by_status.succeeded.size, 3);
});
