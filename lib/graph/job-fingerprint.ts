/**
 * A job definition's fingerprint: what, changed, makes the partitions the job built before stale. Covers how the
 * job runs (exec), what it is given (args, env and input templates, or its config program) and the optional
 * `version` a user bumps for a change the definition cannot show (the code behind exec). Not the limits (retries,
 * timeout, concurrency) nor the output patterns: they do not change what a run produces.
 */
import { createHash } from 'node:crypto';
import type { JobDefinition } from './graph-definition.js';

export function jobFingerprint(job: JobDefinition): string {
  const basis = JSON.stringify([job.exec, job.args, job.env, job.inputs, job.config ?? null, job.version ?? '']);
  return createHash('sha256').update(basis).digest('hex').slice(0, 16);
}
