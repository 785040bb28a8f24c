/**
 * A job definition's fingerprint: what, changed, makes the partitions the job built before stale. Covers how the
 * job runs (exec), what it is given (args, env and input templates, or its config program) and the optional
 * `version` a user bumps for a change the definition cannot show (the code behind exec). Not the limits (retries,
 * timeout, concurrency) nor the output patterns: they do not change what a run produces.
 */
import { createHash } from 'node:crypto';
import type { JobDefinition } from './graph-definition.js';

export function jobFingerprint(job: JobDefinition): string {
  // A batch changes the args a run is given (several refs' worth), so it is part of what a run produces from.
  const basis = JSON.stringify([job.exec, job.args, job.env, job.inputs, job.config ?? null, job.version ?? '', ...(job.batch ? [job.batch.max_partitions] : [])]);
  return createHash('sha256').update(basis).digest('hex').slice(0, 16);
}
