/**
 * A want that fails leaves no derived want building for nobody (found by QA, session 32): its active derived wants are
 * canceled, what they had not started never starts, and a run already running ends as it would (make lets running
 * jobs finish after an error), its partition live for whoever asks next.
 */
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bash, makeWorkspace, openPlatform, want, waitFor, waitForWant } from './helpers/jobs-fixture.js';

test('a want failing cancels its derived wants: their running run finishes, nothing after it starts', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [
      { label: 'bad', outputs: ['bad/(?<k>.+)'], exec: bash('while [ ! -f slow-started ]; do sleep 0.05; done; exit 1') },
      { label: 'slow', outputs: ['slow/(?<k>.+)'], exec: bash('touch slow-started; while [ ! -f release ]; do sleep 0.05; done') },
      { label: 'mid', outputs: ['mid/(?<k>.+)'], inputs: [{ partition_ref: 'slow/${k}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
      { label: 'top', outputs: ['top/(?<k>.+)'], inputs: [{ partition_ref: 'mid/${k}', dep_type: 'MATERIALIZE' }], exec: ['true'] },
    ],
  });
  // bad/1 fails once slow/1 runs; top/1 waits on mid/1, which waits on slow/1, running until released.
  const id = await want(platform, ['top/1', 'bad/1']);
  await waitFor(platform, (s) => [...s.job_runs.values()].some((r) => r.job_label === 'slow' && r.status === 'running'), 'slow/1 to run');
  const s = await waitForWant(platform, id, ['failed'], 10_000);
  const derived = [...s.wants.values()].filter((w) => w.root_want_id === id && w.want_id !== id);
  t.true(derived.length >= 2, `derived wants: ${derived.map((w) => w.partitions.join(',')).join(' ')}`);
  await waitFor(platform, (st) => derived.every((w) => st.wants.get(w.want_id)?.status === 'canceled'), 'the derived wants to be canceled');
  const after = platform.state();
  for (const w of derived) t.regex(after.wants.get(w.want_id)!.cancel_reason, new RegExp(`which it was derived for, (failed|failed upstream): nothing needs it any more`));
  // The running run was left to end: released, it builds slow/1, and nothing starts for mid/1 or top/1.
  writeFileSync(join(dir, 'release'), '');
  await waitFor(platform, (st) => st.partitions.get('slow/1')?.status === 'live', 'slow/1 to be built');
  await new Promise((r) => setTimeout(r, 300));
  const end = platform.state();
  t.deepEqual([...end.job_runs.values()].map((r) => r.job_label).sort(), ['bad', 'slow']);
  t.is(end.partitions.get('mid/1'), undefined);
});
