/**
 * After a successful build, which of the partitions asked for are stale all the same, and what to do about it.
 * A want takes a partition that is live as it is ('missing'), and a rebuild ('stale', 'all') takes a build made for
 * it as it is: one that reads a stale input it only QUERYs, or whose job was edited meanwhile, is stale at once.
 * Saying nothing there would let "successful" read as "up to date".
 */
import type { PlatformClient, WantView } from '../client/platform-client.js';

/** How many of the refs asked for are looked at (one read each). */
export const STILL_STALE_CHECKED = 100;
/** Reads at a time. */
const CONCURRENCY = 8;

export interface StillStale {
  partition_ref: string;
  stale_reasons: string[];
  stale_reasons_total: number;
}

export interface StillStaleReport {
  /** Those of the checked refs that are stale, in the order asked. */
  stale: StillStale[];
  /** How many refs were looked at: the first STILL_STALE_CHECKED of the want's. */
  checked: number;
  /** How many the want asked for. */
  total: number;
}

export async function stillStale(client: PlatformClient, want: WantView): Promise<StillStaleReport> {
  const refs = want.partitions.slice(0, STILL_STALE_CHECKED);
  const found: Array<StillStale | undefined> = new Array(refs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < refs.length) {
      const i = next++;
      // A partition gone meanwhile (pruned) or unreadable is not a reason to fail a build that succeeded.
      const p = await client.getPartition(refs[i]!, { builds_limit: 1 }).catch(() => undefined);
      if (p?.stale) found[i] = { partition_ref: p.partition_ref, stale_reasons: p.stale_reasons, stale_reasons_total: p.stale_reasons_total };
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, refs.length) }, worker));
  return { stale: found.filter((s): s is StillStale => s !== undefined), checked: refs.length, total: want.partitions_total };
}

/** The lines a person reads: which are stale, the first reason of each, and the command that would help. */
export function stillStaleLines(want: WantView, report: StillStaleReport, shown = 5): string[] {
  const { stale } = report;
  if (stale.length === 0) return [];
  const of = report.checked < report.total ? ` (of the first ${report.checked} of ${report.total} checked)` : '';
  const rebuilt = want.rebuild === 'stale' || want.rebuild === 'all';
  const lines = [
    rebuilt
      ? `${stale.length} partition${stale.length === 1 ? ' is' : 's are'} stale even after this rebuild${of}:`
      : `${stale.length} partition${stale.length === 1 ? ' was' : 's were'} live but ${stale.length === 1 ? 'is' : 'are'} stale${of}:`,
  ];
  for (const s of stale.slice(0, shown)) {
    const more = s.stale_reasons_total > 1 ? ` (and ${s.stale_reasons_total - 1} more)` : '';
    lines.push(`  ${s.partition_ref}: ${s.stale_reasons[0] ?? 'stale'}${more}`);
  }
  if (stale.length > shown) lines.push(`  ... and ${stale.length - shown} more ('platform partitions get <ref>' says why)`);
  const inputs = [...new Set(stale.flatMap((s) => s.stale_reasons.map(staleInput)).filter((r): r is string => r !== undefined))];
  if (!rebuilt) {
    lines.push(`'platform build --stale ${stale.map((s) => s.partition_ref).slice(0, shown).join(' ')}' rebuilds them and what is stale in their inputs.`);
  } else if (inputs.length > 0) {
    // A rebuild brings MATERIALIZE inputs up to date first; what is still stale through an input is one it QUERYs.
    lines.push(
      `A want does not build inputs a job only QUERYs. Bring ${inputs.length === 1 ? 'that input' : 'those inputs'} up to date first ` +
        `('platform build --stale ${inputs.slice(0, shown).join(' ')}'), then rebuild these; or declare the input MATERIALIZE in the job's config.`,
    );
  } else {
    lines.push(`Their job changed while they were built: 'platform build --stale ${stale.map((s) => s.partition_ref).slice(0, shown).join(' ')}' builds them again.`);
  }
  return lines;
}

/** The input a stale reason names (staleness.ts words them "input <ref> ..."), if it names one. */
function staleInput(reason: string): string | undefined {
  return /^input (\S+) (?:is stale|is tainted|was rebuilt since|is being rebuilt)/.exec(reason)?.[1];
}
