/** Views are bounded however many inputs and outputs a run names: their lists cut, their totals whole. */
import test from 'ava';
import type { BuildEvent, EventPayload } from '../lib/events/build-event.js';
import { reduce } from '../lib/state/reduce.js';
import { initialState } from '../lib/state/build-state.js';
import { listJobRuns } from '../lib/server/queries.js';
import { RUN_ITEM_SHOWN, RUN_LISTS_SHOWN, jobRunView } from '../lib/server/views.js';
import { BUILD_INPUTS_SHOWN, partitionDetail } from '../lib/server/lineage-queries.js';

function fanIn(inputs: number, outputs: number) {
  const payloads: EventPayload[] = [
    {
      type: 'job_run_queued',
      job_run_queued: {
        job_run_id: 'r-1', job_label: 'fan', want_ids: [], attempt: 1, exec: ['true'], timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [], retry_of: '',
        config: {
          outputs: Array.from({ length: outputs }, (_, i) => `out/${i}`),
          inputs: Array.from({ length: inputs }, (_, i) => ({ dep_type: 'MATERIALIZE' as const, partition_ref: `in/${i}` })),
          args: ['x'],
          env: {},
        },
      },
    },
  ];
  return payloads.reduce((s, p, i) => reduce(s, { event_id: i + 1, timestamp: 1, ...p } as BuildEvent), initialState());
}

test('a run of a large fan-in shows its first inputs and outputs, with totals and truncated; a small one is whole', (t) => {
  const big = fanIn(RUN_LISTS_SHOWN + 500, 3);
  const detail = jobRunView(big, big.job_runs.get('r-1')!);
  t.is(detail.config.inputs.length, RUN_LISTS_SHOWN);
  t.is(detail.inputs_total, RUN_LISTS_SHOWN + 500);
  t.deepEqual(detail.outputs, ['out/0', 'out/1', 'out/2']);
  t.true(detail.truncated);
  const item = listJobRuns(big, { offset: 0, limit: 10, reverse: false }).data[0]!;
  t.is(item.config.inputs.length, RUN_ITEM_SHOWN, 'an item of a list is smaller still');
  t.is(item.inputs_total, RUN_LISTS_SHOWN + 500);

  const small = fanIn(4, 2);
  const whole = jobRunView(small, small.job_runs.get('r-1')!);
  t.false(whole.truncated);
  t.is(whole.config, small.job_runs.get('r-1')!.config, 'a config that fits is the record itself');
  t.like(whole, { inputs_total: 4, outputs_total: 2 });
});

test("a partition built from a large fan-in names its first inputs and stale reasons, with their totals", (t) => {
  const n = BUILD_INPUTS_SHOWN + 30;
  const inputs = Array.from({ length: n }, (_, i) => `in/${i}`);
  const events: EventPayload[] = [];
  let id = 0;
  const run = (outputs: string[], input_builds: Array<{ partition_ref: string; build_id: string }>) => {
    const job_run_id = `r-${++id}`;
    events.push({
      type: 'job_run_queued',
      job_run_queued: {
        job_run_id, job_label: outputs[0]!.split('/')[0]!, want_ids: [], attempt: 1, exec: ['true'], timeout_seconds: 0, input_builds, job_fingerprint: '', output_inputs: [], retry_of: '',
        config: { outputs, inputs: input_builds.map((b) => ({ dep_type: 'MATERIALIZE' as const, partition_ref: b.partition_ref })), args: [], env: {} },
      },
    });
    return job_run_id;
  };
  const built = inputs.map((ref, i) => ({ partition_ref: ref, build_id: `b-${i + 1}` }));
  const inRun = run(inputs, []);
  events.push({ type: 'job_run_succeeded', job_run_succeeded: { job_run_id: inRun, builds: built, ended_at: 0 } });
  const outRun = run(['out/1'], built);
  events.push({ type: 'job_run_succeeded', job_run_succeeded: { job_run_id: outRun, builds: [{ partition_ref: 'out/1', build_id: `b-${n + 1}` }], ended_at: 0 } });
  // Every input tainted: a reason each.
  events.push({ type: 'taint_created', taint_created: { taint_id: 't-1', partitions: inputs, reason: '', downstream: false } });
  const state = events.reduce((s, p, i) => reduce(s, { event_id: i + 1, timestamp: 1, ...p } as BuildEvent), initialState());
  const detail = partitionDetail(state, 'out/1', { builds_offset: 0, builds_limit: 20, downstream_limit: 100 })!;
  t.is(detail.current_build!.inputs.length, BUILD_INPUTS_SHOWN);
  t.is(detail.current_build!.inputs_total, n);
  t.is(detail.builds[0]!.inputs_total, n);
  t.is(detail.stale_reasons.length, BUILD_INPUTS_SHOWN);
  t.is(detail.stale_reasons_total, n);
});
