/** planBatches: runs of max_partitions refs, split sooner by their size (PLATFORM_OUTPUTS, args), and max_wait_ms. */
import test from 'ava';
import { MAX_ARGS_BYTES, MAX_OUTPUTS_BYTES, planBatches, type BatchTask, type ReadyRef } from '../lib/orchestrator/batch-runs.js';

function ready(ref: string, args: string[] = [], readyAt = 0): ReadyRef<null> {
  const task: BatchTask = { job_label: 'j', config: { outputs: [ref], inputs: [], args, env: {} }, exec: ['true'], timeout_seconds: 0, job_fingerprint: 'f' };
  return { ref, task, readyAt, item: null };
}

const outputsBytes = (run: Array<ReadyRef<null>>): number => Buffer.byteLength(JSON.stringify(run.map((r) => r.ref)));

test('runs of max_partitions; a short last run waits max_wait_ms from its oldest ref', (t) => {
  const refs = Array.from({ length: 10 }, (_, i) => ready(`r/${i}`, [], 100 + i));
  const plan = planBatches(refs, { max_partitions: 4, max_wait_ms: 50 }, 120);
  t.deepEqual(plan.runs.map((r) => r.length), [4, 4]);
  t.deepEqual(plan.held.map((h) => [h.at, h.refs.length]), [[158, 2]]);
  t.deepEqual(planBatches(refs, { max_partitions: 4, max_wait_ms: 50 }, 158).runs.map((r) => r.length), [4, 4, 2]);
});

test("a run's PLATFORM_OUTPUTS stays under MAX_OUTPUTS_BYTES; a run closed by its size goes without waiting", (t) => {
  const pad = 'é'.repeat(200); // two bytes each: bytes are counted, not characters
  const refs = Array.from({ length: 1000 }, (_, i) => ready(`wide/${i}-${pad}`));
  const plan = planBatches(refs, { max_partitions: 1000, max_wait_ms: 60_000 }, 0);
  t.true(plan.runs.length >= 2);
  for (const run of plan.runs) t.true(outputsBytes(run) <= MAX_OUTPUTS_BYTES, `${outputsBytes(run)} bytes`);
  const all = [...plan.runs.flat(), ...plan.held.flatMap((h) => h.refs)].map((r) => r.ref);
  t.deepEqual(all, refs.map((r) => r.ref), 'every ref once, in order');
  t.is(plan.held.length, 1, 'only the last, short run waits');
});

test("a run's args stay under MAX_ARGS_BYTES", (t) => {
  const arg = 'a'.repeat(10_000);
  const refs = Array.from({ length: 300 }, (_, i) => ready(`r/${i}`, [arg]));
  const plan = planBatches(refs, { max_partitions: 1000, max_wait_ms: 0 }, 0);
  t.true(plan.runs.length >= 3);
  for (const run of plan.runs) t.true(run.length * (arg.length + 1) <= MAX_ARGS_BYTES);
  t.is(plan.runs.flat().length, 300);
});
