/**
 * A job definition's fingerprint: what, changed, makes the partitions the job built before stale. Covers how the
 * job runs (exec), what it is given (args, env and input templates, or its config program) and the optional
 * `version` a user bumps for a change the definition cannot show (the code behind exec). Not the limits (retries,
 * timeout, concurrency) nor the output patterns: they do not change what a run produces.
 */
import { createHash } from 'node:crypto';
import type { JobDefinition } from './graph-definition.js';

/** Canonical: `env` is hashed by sorted key, so keys reordered in platform.json leave it as it was. */
export function jobFingerprint(job: JobDefinition): string {
  return fingerprintOf(job, sortedEnv(job.env));
}

/**
 * The fingerprint this job had before session 31, when `env` was hashed in the file's order: the builds a log holds
 * from then carry it. Undefined where it is the canonical one (keys already sorted, or no env), so only jobs whose
 * keys are not sorted carry two.
 */
export function legacyJobFingerprint(job: JobDefinition): string | undefined {
  const legacy = fingerprintOf(job, job.env);
  return legacy === jobFingerprint(job) ? undefined : legacy;
}

function fingerprintOf(job: JobDefinition, env: Record<string, string>): string {
  // A batch changes the args a run is given (several refs' worth), so it is part of what a run produces from.
  const basis = JSON.stringify([job.exec, job.args, env, job.inputs, job.config ?? null, job.version ?? '', ...(job.batch ? [job.batch.max_partitions] : [])]);
  return createHash('sha256').update(basis).digest('hex').slice(0, 16);
}

function sortedEnv(env: Record<string, string>): Record<string, string> {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(env).sort()) sorted[key] = env[key]!;
  return sorted;
}
