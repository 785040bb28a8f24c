/**
 * After a successful build, which of the partitions asked for are stale all the same, and what to do about it.
 * A want takes a partition that is live as it is ('missing'), and takes a build made for it as it is: one that reads
 * a stale input it only QUERYs (a want never builds those), or whose job was edited meanwhile, is stale at once.
 * Saying nothing there would let "successful" read as "up to date".
 */
import type { PlatformClient, WantView } from '../client/platform-client.js';
import { concurrencyLimit } from '../graph/concurrency-limit.js';

/** How many of the refs asked for are looked at (one read each). */
export const STILL_STALE_CHECKED = 100;
/** Stale partitions named one by one (each costs a read of its run, for its inputs' kinds). */
const SHOWN = 5;
/** Reads at a time. */
const CONCURRENCY = 8;

export interface StillStale {
  partition_ref: string;
  stale_reasons: string[];
  stale_reasons_total: number;
  /** The run that made its current build. */
  job_run_id: string | null;
  /** That run was one of this build's (else the partition was taken as it was). */
  rebuilt: boolean;
  /** Stale inputs its job only QUERYs, which no want builds (looked at for the first few only). */
  query_inputs: string[];
}

export interface StillStaleReport {
  /** Those of the checked refs that are stale, in the order asked. */
  stale: StillStale[];
  /** How many refs were looked at: the first STILL_STALE_CHECKED of the want's. */
  checked: number;
  /** How many the want asked for. */
  total: number;
}

/** `runIds`: the runs of this build (the want's and those it derived); a partition they built was rebuilt here. */
export async function stillStale(client: PlatformClient, want: WantView, runIds: ReadonlySet<string>): Promise<StillStaleReport> {
  const refs = want.partitions.slice(0, STILL_STALE_CHECKED);
  const found = await inParallel(refs, async (ref): Promise<StillStale | undefined> => {
    // A partition gone meanwhile (pruned) or unreadable is not a reason to fail a build that succeeded.
    const p = await client.getPartition(ref, { builds_limit: 1 }).catch(() => undefined);
    if (!p?.stale) return undefined;
    const runId = p.current_build?.job_run_id;
    return {
      partition_ref: p.partition_ref,
      stale_reasons: p.stale_reasons,
      stale_reasons_total: p.stale_reasons_total,
      job_run_id: runId ?? null,
      rebuilt: runId !== undefined && runIds.has(runId),
      query_inputs: [],
    };
  });
  const stale = found.filter((s): s is StillStale => s !== undefined);
  await inParallel(stale.slice(0, SHOWN), async (s) => {
    s.query_inputs = await queryInputsNamed(client, s).catch(() => []);
  });
  return { stale, checked: refs.length, total: want.partitions_total };
}

/** The inputs a partition's reasons name that its build's run declared QUERY. */
async function queryInputsNamed(client: PlatformClient, s: StillStale): Promise<string[]> {
  const named = s.stale_reasons.map(staleInput).filter((r): r is string => r !== undefined);
  if (named.length === 0 || s.job_run_id === null) return [];
  const run = await client.getJobRun(s.job_run_id);
  const query = new Set(run.config.inputs.filter((i) => i.dep_type === 'QUERY').map((i) => i.partition_ref));
  return named.filter((r) => query.has(r));
}

/** The lines a person reads: which are stale, the first reason of each, and the command that would help. */
export function stillStaleLines(report: StillStaleReport): string[] {
  const { stale } = report;
  if (stale.length === 0) return [];
  const of = report.checked < report.total ? ` (of the first ${report.checked} of ${report.total} checked)` : '';
  const lines = [`${stale.length} partition${stale.length === 1 ? ' is' : 's are'} stale after this build${of}:`];
  for (const s of stale.slice(0, SHOWN)) {
    const more = s.stale_reasons_total > 1 ? ` (and ${s.stale_reasons_total - 1} more)` : '';
    lines.push(`  ${s.partition_ref}: ${s.stale_reasons[0] ?? 'stale'}${more}; ${s.rebuilt ? 'rebuilt by this build' : 'taken as it was'}`);
  }
  if (stale.length > SHOWN) lines.push(`  ... and ${stale.length - SHOWN} more ('platform partitions get <ref>' says why)`);
  const shown = stale.slice(0, SHOWN);
  const queried = [...new Set(shown.flatMap((s) => s.query_inputs))];
  const throughQuery = shown.filter((s) => s.query_inputs.length > 0).map((s) => s.partition_ref);
  const others = shown.filter((s) => s.query_inputs.length === 0).map((s) => s.partition_ref);
  if (queried.length > 0) {
    lines.push(
      `A want never builds an input its job only QUERYs: bring ${queried.length === 1 ? 'it' : 'them'} up to date first ` +
        `('platform build --stale ${queried.join(' ')}'), then 'platform build --stale ${throughQuery.join(' ')}'; or declare the input MATERIALIZE in the job.`,
    );
  }
  if (others.length > 0) lines.push(`'platform build --stale ${others.join(' ')}' rebuilds ${others.length === 1 ? 'it' : 'them'} and what is stale in ${others.length === 1 ? 'its' : 'their'} inputs.`);
  return lines;
}

/**
 * The input a stale reason names as not up to date itself (staleness.ts words them "input <ref> ..."), if it names
 * one. "was rebuilt since" is not one: that input is newer than what was read, and a rebuild of the partition
 * reads it as it is now, QUERY or not.
 */
function staleInput(reason: string): string | undefined {
  return /^input (\S+) (?:is stale|is tainted|is being rebuilt)/.exec(reason)?.[1];
}

/** `fn` over `items`, CONCURRENCY at a time (graph/concurrency-limit.ts), results in their order. */
function inParallel<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const limit = concurrencyLimit(CONCURRENCY);
  return Promise.all(items.map((item) => limit(() => fn(item))));
}
