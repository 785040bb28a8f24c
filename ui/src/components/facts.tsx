/** One fact of a `dl.facts` card; `name` (data-fact) lets a test find it. Callers leave out facts without a value. */
import type { ComponentChildren } from 'preact';
import { Link } from './link.js';
import { groupDigits as n } from '../../../lib/group-digits.js';

export function Fact({ name, label, children }: { name: string; label: string; children: ComponentChildren }) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-fact={name}>{children}</dd>
    </>
  );
}

/** The first `max` partitions as links to their pages, and how many more there are. */
export function PartitionLinks({ refs, total = refs.length, max = 20 }: { refs: readonly string[]; total?: number; max?: number }) {
  return (
    <>
      {refs.slice(0, max).map((p) => (
        <Link href={`/partitions/${encodeURIComponent(p)}`} class="chip">
          {p}
        </Link>
      ))}
      {total > Math.min(max, refs.length) ? <span class="dim"> +{n(total - Math.min(max, refs.length))} more</span> : null}
    </>
  );
}
