/**
 * What `gc`, `collectJobLogs` and `compactEvents` refuse of their options before they remove anything. A pass reads
 * `dryRun === true` only, so whatever else it was handed ran a real pass: `{dry_run: true}` (POST /api/gc's spelling),
 * `{dryRun: 'yes'}` removed what the caller meant only to count, and `gc(null)` failed with a TypeError naming nothing.
 */
import { shown } from './api/body-check.js';
import { typeName } from './orchestrator/request-checks.js';

export interface RetentionOptions {
  /** Count what a pass would remove, and remove nothing. */
  dryRun?: boolean;
  /** The pass's clock (epoch ms; default Date.now()): a run's logs go `job_logs_days` after it ended, by this clock. */
  now?: number;
}

export type RetentionMethod = 'gc' | 'collectJobLogs' | 'compactEvents';

/** The options each takes: compactEvents keeps events by count, not by age, so it has no clock. */
const TAKES: Record<RetentionMethod, ReadonlyArray<keyof RetentionOptions>> = {
  gc: ['dryRun', 'now'],
  collectJobLogs: ['dryRun', 'now'],
  compactEvents: ['dryRun'],
};

const NOTHING_DONE = 'nothing was removed';

export function retentionOptionsProblem(options: unknown, method: RetentionMethod): string | undefined {
  const takes = TAKES[method];
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    return `${method} takes an options object (${shape(takes)}) or none, got ${typeName(options)}; ${NOTHING_DONE}.`;
  }
  for (const key of Object.keys(options)) {
    if ((takes as readonly string[]).includes(key)) continue;
    const meant = takes.find((k) => k === camelCase(key));
    const hint = meant ? ` (POST /api/gc's spelling; here it is ${meant})` : '';
    return `${method} does not take the option '${key}'${hint}: it takes ${takes.join(', ')}; ${NOTHING_DONE}.`;
  }
  const { dryRun, now } = options as Record<string, unknown>;
  if (dryRun !== undefined && typeof dryRun !== 'boolean') {
    return `${method}'s dryRun must be true or false (or left out: a real pass), got ${shown(dryRun)}; ${NOTHING_DONE}.`;
  }
  if (now !== undefined && !(typeof now === 'number' && Number.isFinite(now) && now >= 0)) {
    return `${method}'s now must be a time in epoch milliseconds (a number of at least 0; left out: Date.now()), got ${shown(now)}; ${NOTHING_DONE}.`;
  }
  return undefined;
}

function shape(takes: ReadonlyArray<keyof RetentionOptions>): string {
  const types: Record<keyof RetentionOptions, string> = { dryRun: 'dryRun?: boolean', now: 'now?: epoch ms' };
  return `{${takes.map((k) => types[k]).join(', ')}}`;
}

/** `dry_run` -> `dryRun`. */
function camelCase(key: string): string {
  return key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}
