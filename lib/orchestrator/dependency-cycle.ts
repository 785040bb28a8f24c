/**
 * Dependency cycles met while scheduling. A want derives a want for each input it misses, and each derived want does
 * the same for its own: through a cycle (a/1 needs b/1 needs a/1, declared or reported by a run as missing) that made
 * wants without end, a thousand and more a second (found by QA, session 32). So an input that the want or one of its
 * active ancestors already asks for is never derived again (they build it), and a wait that closes a cycle fails the
 * partition that would wait for ever, naming the cycle. Pure: the state and the step's resolved configs in.
 */
import { TERMINAL_WANT_STATUSES, type BuildState, type WantRecord } from '../state/build-state.js';
import type { TaskResolution } from './step-input.js';

/** The config of a ref, where one is known (this step's, or kept from an earlier one). */
export type TaskLookup = (ref: string) => TaskResolution | undefined;

/** Most partitions a look for a cycle visits: a cycle longer than that waits unnoticed rather than cost a step more. */
const CYCLE_SEARCH_BUDGET = 1000;
/** Most ancestors looked at: a chain of derived wants is as deep as the graph, never this deep without a cycle. */
const ANCESTORS_LOOKED_AT = 1000;

/**
 * Whether `want` or one of its active ancestors asks for `ref` itself: O(depth) set lookups. Not through the ref's set
 * of active wants: 100,000 wait on one input in goal 4, and after an image that set is decoded whole at each read
 * (28 ms), which held every step of a settled daemon 1.4 s (the bench of session 32 found it).
 */
export function askedAbove(state: BuildState, want: WantRecord, ref: string): boolean {
  let a: WantRecord | undefined = want;
  for (let n = 0; a !== undefined && n < ANCESTORS_LOOKED_AT; n++) {
    if (!TERMINAL_WANT_STATUSES.has(a.status) && asks(a.partitions, ref)) return true;
    a = a.parent_want_id ? state.wants.get(a.parent_want_id) : undefined;
  }
  return false;
}

/** A want's partitions as a set, made once for a list that is long (a backfill's), kept while the list lives. */
const partitionSets = new WeakMap<readonly string[], ReadonlySet<string>>();
const SCANNED_UP_TO = 32;

function asks(partitions: readonly string[], ref: string): boolean {
  if (partitions.length <= SCANNED_UP_TO) return partitions.includes(ref);
  let set = partitionSets.get(partitions);
  if (set === undefined) partitionSets.set(partitions, (set = new Set(partitions)));
  return set.has(ref);
}

/**
 * The cycle `ref` would wait in through its input `input`, as refs from `ref` back to it (`[a/1, b/1, a/1]`), or
 * undefined. A partition waits on what its last run reported missing (a `dep_missed` run), else on the inputs its
 * config declares (when its config is known); a live one waits on nothing.
 */
export function cycleThrough(state: BuildState, tasks: TaskLookup, ref: string, input: string): string[] | undefined {
  const from = new Map<string, string>([[input, ref]]);
  const todo = [input];
  while (todo.length > 0 && from.size <= CYCLE_SEARCH_BUDGET) {
    const x = todo.shift()!;
    if (x === ref) {
      const path = [ref];
      for (let at = from.get(ref)!; at !== ref; at = from.get(at)!) path.push(at);
      path.push(ref);
      return path.reverse();
    }
    for (const next of waitsOn(state, tasks, x)) {
      if (from.has(next)) continue;
      from.set(next, x);
      todo.push(next);
    }
  }
  return undefined;
}

function waitsOn(state: BuildState, tasks: TaskLookup, ref: string): string[] {
  const p = state.partitions.get(ref);
  if (p?.status === 'live') return [];
  const notLive = (refs: readonly string[]) => refs.filter((m) => state.partitions.get(m)?.status !== 'live');
  if (p?.status === 'building') {
    const run = state.job_runs.get(p.job_run_id);
    return run?.status === 'dep_missed' ? notLive(run.missing) : [];
  }
  const task = tasks(ref);
  return task?.ok ? notLive(task.config.inputs.filter((i) => i.dep_type === 'MATERIALIZE').map((i) => i.partition_ref)) : [];
}

/** Why a partition in `cycle` can never be built, and what to do. */
export function cycleError(cycle: readonly string[]): string {
  return (
    `it is in a dependency cycle: ${cycle.join(' -> ')}, so it can never be built. ` +
    `Change the inputs of the jobs that make these partitions in platform.json (or what their runs report missing)`
  );
}
