/** A job run's view is bounded however many inputs and outputs its config names: its lists cut, its totals whole. */
import test from 'ava';
import type { BuildEvent, EventPayload } from '../lib/events/build-event.js';
import { reduce } from '../lib/state/reduce.js';
import { initialState } from '../lib/state/build-state.js';
import { listJobRuns } from '../lib/server/queries.js';
import { RUN_ITEM_SHOWN, RUN_LISTS_SHOWN, jobRunView } from '../lib/server/views.js';

function fanIn(inputs: number, outputs: number) {
  const payloads: EventPayload[] = [
    {
      type: 'job_run_queued',
      job_run_queued: {
        job_run_id: 'r-1', job_label: 'fan', want_ids: [], attempt: 1, exec: ['true'], timeout_seconds: 0, input_builds: [], job_fingerprint: '', output_inputs: [],
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
