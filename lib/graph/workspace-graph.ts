/**
 * The workspace's job graph as the daemon sees it: `platform.json`, picked up again when the file changes, so
 * an edited graph takes effect without restarting the daemon (and a client never builds with a stale one).
 * An edit that does not parse keeps the last good graph in use and is reported until it is fixed.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { type Observable, Subject } from 'rxjs';
import type { GraphDefinition } from './graph-definition.js';
import { GraphError } from './graph-error.js';
import { givenGraph } from './given-graph.js';
import { JobResolver } from './job-resolver.js';
import { GRAPH_FILE, loadGraph } from './load-graph.js';

export class WorkspaceGraph {
  private resolver: JobResolver;
  private stamp: string;
  private problem: GraphError | undefined;
  private queue: Promise<void> = Promise.resolve();
  /** A reload queued behind `queue` and not begun: callers until it begins join it. */
  private waiting: Promise<GraphError | undefined> | undefined;
  /** Lets the waiting reload begin now when it waits for the turn's end. */
  private openGate: (() => void) | undefined;
  private readonly replaced = new Subject<JobResolver>();
  /** The new graph, each time an edited platform.json is taken into use (by whichever caller reloaded it). */
  readonly changes$: Observable<JobResolver> = this.replaced.asObservable();
  private readonly refused = new Subject<GraphError>();
  /** Why an edit of platform.json was not taken into use, once an edit (the last valid graph goes on). */
  readonly refusals$: Observable<GraphError> = this.refused.asObservable();

  /** Kills the config programs of every resolver made here (an old graph's may still run) when the platform closes. */
  private readonly stopPrograms = new AbortController();

  /**
   * Completes changes$ and refusals$: the platform closed, nothing will reload the graph any more. Config programs
   * still running are killed (process groups): spawned detached, they would outlive the daemon.
   */
  close(): void {
    this.stopPrograms.abort();
    this.replaced.complete();
    this.refused.complete();
  }

  private constructor(
    private readonly root: string,
    graph: GraphDefinition,
    stamp: string,
    /** Fixed graphs (given by an embedder or a test) are never reloaded. */
    private readonly fixed: boolean,
  ) {
    this.resolver = new JobResolver(graph, root, { signal: this.stopPrograms.signal });
    this.stamp = stamp;
  }

  /** Loads `platform.json` (a bad one throws its GraphError), or uses `graph` as given, for good. */
  static async open(root: string, graph?: GraphDefinition): Promise<WorkspaceGraph> {
    if (graph) return new WorkspaceGraph(root, givenGraph(graph), '', true);
    const stamp = await fileStamp(root);
    return new WorkspaceGraph(root, await loadGraph(root), stamp, false);
  }

  current(): JobResolver {
    return this.resolver;
  }

  /**
   * Reloads the graph if the file changed since it was read (one stat when it did not), beginning now. Returns the
   * problem of the file on disk, if it has one: the graph in use is then the last good one.
   */
  refresh(): Promise<GraphError | undefined> {
    return this.queueReload(false);
  }

  /**
   * The same for a request: its stat waits for the end of the loop's turn, so every request read in the turn shares
   * one (each still sees a stat taken after it arrived). A burst of 16 writes costs a stat or two, not 16.
   */
  refreshAfterTurn(): Promise<GraphError | undefined> {
    return this.queueReload(true);
  }

  private queueReload(afterTurn: boolean): Promise<GraphError | undefined> {
    if (this.fixed) return Promise.resolve(undefined);
    // One reload at a time, and each caller's starts after its call: joining one that stat'ed the file before
    // the caller's edit would hand back the old graph.
    // A reload queued but not begun starts after this call too, so this caller joins it; one that cannot wait (the
    // orchestrator's step) lets it begin without waiting for the turn's end.
    if (this.waiting) {
      if (!afterTurn) this.openGate?.();
      return this.waiting;
    }
    let gate = this.queue;
    if (afterTurn) {
      const turnEnd = new Promise<void>((resolve) => {
        const handle = setImmediate(resolve);
        this.openGate = () => {
          clearImmediate(handle);
          resolve();
        };
      });
      gate = this.queue.then(() => turnEnd);
    }
    const next = gate.then(() => {
      if (this.waiting === next) {
        this.waiting = undefined;
        this.openGate = undefined;
      }
      return this.reload();
    });
    this.waiting = next;
    this.queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  /** platform.json was not there when the graph in use was read (a fresh workspace: no jobs). */
  get fileMissing(): boolean {
    return !this.fixed && this.stamp === ABSENT;
  }

  private async reload(): Promise<GraphError | undefined> {
    const stamp = await fileStamp(this.root);
    if (stamp === this.stamp) return this.problem;
    // Gone after it was read (a checkout, a deploy that replaces it, an editor's delete and write): taken as a graph of
    // no jobs, it failed every active want for good. It is refused as a broken edit is, until it is back.
    if (stamp === ABSENT) {
      const file = join(this.root, GRAPH_FILE);
      this.problem = new GraphError('invalid_graph', `${file} is missing. Put it back; a graph with no jobs is {"jobs": []}.`);
      this.refused.next(this.problem);
      // Noted as read: said once, not at every step, and the file put back as it was (same stamp) is read again.
      this.stamp = stamp;
      return this.problem;
    }
    try {
      this.resolver = new JobResolver(await loadGraph(this.root), this.root, { signal: this.stopPrograms.signal });
      this.problem = undefined;
      this.replaced.next(this.resolver);
    } catch (err) {
      if (!(err instanceof GraphError)) throw err;
      this.problem = err;
      this.refused.next(err);
    }
    this.stamp = stamp;
    return this.problem;
  }
}

/**
 * What changes when the file does: size and modification time (absent file included). Synchronous: every step asks,
 * and a stat of one local file costs microseconds where a trip through the thread pool cost a step about 1 ms.
 */
async function fileStamp(root: string): Promise<string> {
  const s = statSync(join(root, GRAPH_FILE), { throwIfNoEntry: false });
  return s ? `${s.size}:${s.mtimeMs}:${s.ino}` : ABSENT;
}

const ABSENT = 'absent';
