/** How many runs past the cap a step hands over (lib/orchestrator/launches.ts `beyondCap`): intake comes first. */
import test from 'ava';
import { beyondCap } from '../lib/orchestrator/launches.js';
import type { StepInput } from '../lib/orchestrator/step-input.js';

const policy = { max_concurrent_job_runs: 2 } as StepInput['policy'];
const want = { kind: 'create_want' } as StepInput['commands'][number];

test('a step with no command hands over as deep as the executor holds', (t) => {
  t.is(beyondCap({ policy, holdBeyond: 64, commands: [] }), 64);
  t.is(beyondCap({ policy, commands: [] }), 0);
});

test('a step taking commands (wants arriving) hands over no more than the cap past it', (t) => {
  t.is(beyondCap({ policy, holdBeyond: 64, commands: [want] }), 2);
  t.is(beyondCap({ policy, holdBeyond: 1, commands: [want] }), 1);
  t.is(beyondCap({ policy, holdBeyond: 0, commands: [want] }), 0);
});
