/**
 * Configs for the refs a step may build. Resolving can mean running config programs, which may take seconds:
 * a lookup waits briefly for them and otherwise answers without; their results are kept for a later step, which
 * `arrivals$` asks for. So a slow config program never holds up replies, outcomes or cancels.
 */
import { type Observable, type SchedulerLike, Subject, firstValueFrom, from, race, timer } from 'rxjs';
import { errorMessage } from '../errors.js';
import { LruCache } from '../graph/lru-cache.js';
import type { TaskResolution } from './step-input.js';
import type { TaskSource } from './task-source.js';

/** How long a lookup waits for config programs before answering without their results. */
const RESOLVE_WAIT_MS = 25;

/** Most refs whose config is kept between steps. */
const CAPACITY = 100_000;

export class ResolutionCache {
  private results = new LruCache<string, TaskResolution>(CAPACITY);
  private readonly resolving = new Set<string>();
  /** Bumped when the graph changes: answers of an older graph, given or still coming, are dropped. */
  private generation = 0;

  private readonly arrived = new Subject<readonly string[]>();
  /** Refs whose configs (or failures) arrived after a lookup stopped waiting for them. */
  readonly arrivals$: Observable<readonly string[]> = this.arrived.asObservable();

  constructor(
    private readonly source: TaskSource,
    private readonly scheduler: SchedulerLike,
  ) {}

  /**
   * What is known for `refs`; starts resolving the rest. A config is kept (a ref waiting for its inputs is looked
   * up step after step); a failure is handed out once, so a later want for the ref tries again.
   */
  async lookup(refs: readonly string[]): Promise<Map<string, TaskResolution>> {
    const todo = refs.filter((ref) => !this.results.has(ref) && !this.resolving.has(ref));
    if (todo.length > 0) {
      let waiting = true;
      await firstValueFrom(race(from(this.resolve(todo, () => waiting)), timer(RESOLVE_WAIT_MS, this.scheduler)));
      waiting = false;
    }
    const out = new Map<string, TaskResolution>();
    for (const ref of refs) {
      const r = this.results.get(ref);
      if (!r) continue;
      out.set(ref, r);
      if (!r.ok) this.results.delete(ref);
    }
    return out;
  }

  /** The config kept for `ref`, if one is (nothing is resolved, and a failure is not handed out). */
  known(ref: string): TaskResolution | undefined {
    const r = this.results.get(ref);
    return r?.ok ? r : undefined;
  }

  /** The graph changed: nothing known so far holds. */
  invalidate(): void {
    this.generation++;
    this.results = new LruCache(CAPACITY);
    this.resolving.clear();
  }

  /** Resolves `todo`; its arrival is announced only if the lookup that asked no longer `waits` for it. */
  private resolve(todo: string[], waits: () => boolean): Promise<void> {
    for (const ref of todo) this.resolving.add(ref);
    const generation = this.generation;
    const current = () => generation === this.generation;
    return this.source.resolve(todo).then(
      (results) => {
        if (!current()) return;
        for (const [ref, r] of results) this.results.set(ref, r);
        for (const ref of todo) this.resolving.delete(ref);
        if (!waits()) this.arrived.next(todo);
      },
      (err: unknown) => {
        if (!current()) return;
        for (const ref of todo) {
          this.results.set(ref, { ok: false, job_label: '', error: errorMessage(err) });
          this.resolving.delete(ref);
        }
        if (!waits()) this.arrived.next(todo);
      },
    );
  }
}
