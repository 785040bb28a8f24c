/**
 * `${name}` in a job's `exec`, where name is a named group of its outputs: exec is not a template (args, env and inputs
 * are), so the text reaches the program as it is, and a shell reads it as a variable of its own, empty: every
 * partition then writes the same file. Not refused (a shell variable of that name may be meant); told by the doctor.
 */
import type { JobDefinition } from './graph-definition.js';

const GROUP = /\(\?<([A-Za-z_][A-Za-z0-9_]*)>/g;
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** One sentence per job whose exec names one of its outputs' groups; empty when none does. */
export function execTemplateSlips(jobs: readonly Pick<JobDefinition, 'label' | 'outputs' | 'exec'>[]): string[] {
  const slips: string[] = [];
  for (const job of jobs) {
    const groups = new Set(job.outputs.flatMap((o) => [...o.matchAll(GROUP)].map((m) => m[1]!)));
    const named = [...new Set(job.exec.flatMap((part) => [...part.matchAll(PLACEHOLDER)].map((m) => m[1]!)))].filter((n) => groups.has(n));
    if (named.length === 0) continue;
    const list = named.map((n) => `\${${n}}`).join(', ');
    slips.push(`job ${job.label}: its exec holds ${list}, which is not filled in there (exec is not a template; a shell reads it as its own variable, empty); pass it in args (["${'$'}{${named[0]}}"], then "$1" in a shell) or env`);
  }
  return slips;
}
