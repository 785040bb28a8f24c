import { availableParallelism } from 'node:os';
import type { DataDep, JobConfig } from '../events/build-event.js';
import type { WorkPacer } from '../system/work-pacer.js';
import { concurrencyLimit } from './concurrency-limit.js';
import { runConfigProgram, DEFAULT_CONFIG_TIMEOUT_MS } from './config-program.js';
import { tooManyInputs, tooManyPartitions, type GraphBudget } from './graph-budget.js';
import type { GraphDefinition, JobDefinition } from './graph-definition.js';
import { GraphError } from './graph-error.js';
import { JobMatcher, type JobMatch } from './job-matcher.js';
import { LruCache } from './lru-cache.js';
import { compileTemplate, fillCompiledTemplate, type CompiledTemplate } from './template.js';

/**
 * The task producing a ref: which job, with which JobConfig. Cached and shared between callers (and between the
 * refs of one multi-output config): treat it as read-only.
 */
export interface ResolvedTask {
  job_label: string;
  config: JobConfig;
  job: JobDefinition;
}

export interface GraphNode {
  job_label: string;
  config: JobConfig;
}

export interface AnalyzedGraph {
  /** The requested refs, deduplicated, in request order. */
  outputs: string[];
  /** Every task of the MATERIALIZE closure once, inputs before the tasks that need them. */
  nodes: GraphNode[];
}

export interface AnalyzeOptions {
  /** Refuse (GraphError `too_large`) as soon as the graph is known to be larger. Default: no limit. */
  budget?: GraphBudget;
  /** Lets the event loop turn between slices of the walk, and stops it when its signal is aborted. */
  pacer?: WorkPacer;
}

export interface JobResolverOptions {
  /** Most refs whose task (and, separately, whose job match) is kept. Default 100 000. */
  cacheSize?: number;
  /** Timeout of one config-program process. Default 30 s. */
  configTimeoutMs?: number;
  /** Most config programs running at once. Default `os.availableParallelism()`. */
  maxConcurrentConfigPrograms?: number;
  /** Environment of config programs. Default: this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Aborted when the platform closes: running config programs are killed, none is started. */
  signal?: AbortSignal;
}

export const DEFAULT_RESOLVER_CACHE_SIZE = 100_000;

interface DeclarativeTemplates {
  inputs: Array<{ dep_type: DataDep['dep_type']; ref: CompiledTemplate }>;
  args: CompiledTemplate[];
  env: Array<[string, CompiledTemplate]>;
}

/**
 * Resolves refs to the tasks producing them, for one graph and workspace.
 *
 * Cost model: the graph's regexes and templates are compiled once, in the constructor. A ref is matched against the
 * regexes once and its task is built once, then served from a bounded per-ref LRU cache, so a lookup during
 * scheduling is a map hit. Config programs run once per job per `resolve` call for all of that job's uncached refs;
 * concurrent calls needing a ref whose program is already running wait for that run instead of starting another.
 * Failures are not cached: the next call tries again.
 */
export class JobResolver {
  readonly graph: GraphDefinition;
  readonly workspaceRoot: string;
  readonly matcher: JobMatcher;
  private readonly matches: LruCache<string, JobMatch>;
  private readonly tasks: LruCache<string, ResolvedTask>;
  private readonly inflight = new Map<string, Promise<ResolvedTask>>();
  private readonly templates = new Map<JobDefinition, DeclarativeTemplates>();
  private readonly limit: <T>(fn: () => Promise<T>) => Promise<T>;
  private readonly configTimeoutMs: number;
  private readonly env: NodeJS.ProcessEnv | undefined;
  private readonly signal: AbortSignal | undefined;

  constructor(graph: GraphDefinition, workspaceRoot: string, options: JobResolverOptions = {}) {
    this.graph = graph;
    this.workspaceRoot = workspaceRoot;
    this.matcher = new JobMatcher(graph);
    const size = options.cacheSize ?? DEFAULT_RESOLVER_CACHE_SIZE;
    this.matches = new LruCache(size);
    this.tasks = new LruCache(size);
    this.limit = concurrencyLimit(options.maxConcurrentConfigPrograms ?? availableParallelism());
    this.configTimeoutMs = options.configTimeoutMs ?? DEFAULT_CONFIG_TIMEOUT_MS;
    this.env = options.env;
    this.signal = options.signal;
    for (const job of graph.jobs) {
      if (job.config !== undefined) continue;
      this.templates.set(job, {
        inputs: job.inputs.map((d) => ({ dep_type: d.dep_type, ref: compileTemplate(d.partition_ref) })),
        args: job.args.map(compileTemplate),
        env: Object.entries(job.env).map(([k, v]) => [k, compileTemplate(v)]),
      });
    }
  }

  /** The job producing `ref`. Throws GraphError `unknown_ref` / `ambiguous_ref`. */
  jobFor(ref: string): JobDefinition {
    return this.tasks.get(ref)?.job ?? this.matchOf(ref).job;
  }

  /**
   * Every ref -> the task producing it (keys in request order, duplicates once). Rejects with GraphError
   * (`unknown_ref`, `ambiguous_ref`, `config_failed`); an unknown ref fails the call before any program starts.
   * With a `pacer`, matching the refs lets the loop turn every slice (and stops when the pacer's signal is aborted).
   */
  async resolve(refs: readonly string[], pacer?: WorkPacer): Promise<Map<string, ResolvedTask>> {
    const slots = new Map<string, ResolvedTask | Promise<ResolvedTask>>();
    const toConfigure = new Map<JobDefinition, string[]>();
    for (const ref of refs) {
      if (pacer?.due() === true) await pacer.pause();
      if (slots.has(ref)) continue;
      const cached = this.tasks.get(ref);
      if (cached !== undefined) {
        slots.set(ref, cached);
        continue;
      }
      const flying = this.inflight.get(ref);
      if (flying !== undefined) {
        slots.set(ref, flying);
        continue;
      }
      const { job, groups } = this.matchOf(ref);
      if (job.config === undefined) {
        const task = this.declarativeTask(job, ref, groups);
        this.tasks.set(ref, task);
        slots.set(ref, task);
      } else {
        let list = toConfigure.get(job);
        if (list === undefined) toConfigure.set(job, (list = []));
        list.push(ref);
        slots.set(ref, undefined as never); // placeholder keeps request order; filled below
      }
    }

    for (const [job, jobRefs] of toConfigure) {
      const perRef = this.configure(job, jobRefs);
      for (const ref of jobRefs) slots.set(ref, perRef.get(ref)!);
    }

    const pending = [...slots.values()].filter((slot) => slot instanceof Promise);
    if (pending.length > 0) await Promise.all(pending);
    const out = new Map<string, ResolvedTask>();
    for (const [ref, slot] of slots) out.set(ref, slot instanceof Promise ? await slot : slot);
    return out;
  }

  /**
   * The transitive closure of `refs` over MATERIALIZE inputs (QUERY inputs stay in the configs but are not
   * followed), each task once (same job_label and outputs), inputs before the tasks that need them. Resolves one
   * level of the graph per `resolve` call, so config programs run once per job per level.
   *
   * Rejects with GraphError `cycle` naming the cycle, e.g. "a/x -> b/y -> a/x", or any error of `resolve`; with a
   * `budget`, with GraphError `too_large` as soon as the partitions reached or the inputs listed pass it, before
   * the next level is resolved; with a `pacer`, with its signal's reason once that is aborted.
   */
  async analyze(refs: readonly string[], options: AnalyzeOptions = {}): Promise<AnalyzedGraph> {
    const { budget, pacer } = options;
    const roots = [...new Set(refs)];
    const taskOfRef = new Map<string, ResolvedTask>();
    const neededBy = new Map<string, string>(); // input ref -> a ref whose task needs it (for error messages)
    const seenTasks = new Set<string>();
    const maxPartitions = budget?.maxPartitions ?? Infinity;
    const maxInputs = budget?.maxInputs ?? Infinity;
    let partitions = roots.length; // every ref ever put in a frontier: each is one partition of the graph
    let inputs = 0;
    let largest = { ref: '', job: '', inputs: -1 };
    if (partitions > maxPartitions) throw tooManyPartitions('AnalyzeGraph', budget!, roots.length);

    let frontier = roots;
    while (frontier.length > 0) {
      for (const ref of frontier) {
        if (pacer?.due() === true) await pacer.pause();
        this.jobForNeeded(ref, neededBy.get(ref));
      }
      const resolved = await this.resolve(frontier, pacer);
      const next: string[] = [];
      for (const [ref, task] of resolved) {
        taskOfRef.set(ref, task);
        const key = taskKey(task);
        if (seenTasks.has(key)) continue;
        seenTasks.add(key);
        const listed = task.config.inputs.length;
        if (pacer?.due(1 + listed) === true) await pacer.pause();
        inputs += listed;
        if (listed > largest.inputs) largest = { ref, job: task.job_label, inputs: listed };
        if (inputs > maxInputs) throw tooManyInputs('AnalyzeGraph', budget!, roots.length, largest);
        for (const input of task.config.inputs) {
          if (input.dep_type !== 'MATERIALIZE') continue;
          const dep = input.partition_ref;
          if (taskOfRef.has(dep) || neededBy.has(dep) || resolved.has(dep)) continue;
          neededBy.set(dep, ref);
          next.push(dep);
        }
        if (partitions + next.length > maxPartitions) throw tooManyPartitions('AnalyzeGraph', budget!, roots.length);
      }
      partitions += next.length;
      frontier = next;
    }

    return { outputs: roots, nodes: await dependencyOrder(roots, taskOfRef, pacer) };
  }

  private matchOf(ref: string): JobMatch {
    let m = this.matches.get(ref);
    if (m === undefined) {
      m = this.matcher.match(ref);
      this.matches.set(ref, m);
    }
    return m;
  }

  /** The label of the job whose outputs match `ref`, or why none is the one (for checking a config's outputs). */
  private ownerOf(ref: string): string | GraphError {
    try {
      return this.matchOf(ref).job.label;
    } catch (err) {
      if (err instanceof GraphError) return err;
      throw err;
    }
  }

  /** jobFor, with the ref that needs `ref` added to an unknown/ambiguous ref message. */
  private jobForNeeded(ref: string, neededBy: string | undefined): void {
    try {
      this.jobFor(ref);
    } catch (err) {
      if (!(err instanceof GraphError) || neededBy === undefined) throw err;
      const user = this.tasks.get(neededBy)?.job_label ?? this.jobFor(neededBy).label;
      throw new GraphError(
        err.code,
        `${err.message} (It is a MATERIALIZE input of "${neededBy}", job "${user}".)`,
        { ref, jobs: [...(err.jobs ?? []), user] },
        { cause: err },
      );
    }
  }

  private declarativeTask(job: JobDefinition, ref: string, groups: Record<string, string>): ResolvedTask {
    const t = this.templates.get(job)!;
    const env: Record<string, string> = {};
    for (const [k, v] of t.env) env[k] = fillCompiledTemplate(v, groups);
    return {
      job_label: job.label,
      job,
      config: {
        outputs: [ref],
        inputs: t.inputs.map((d) => ({ dep_type: d.dep_type, partition_ref: fillCompiledTemplate(d.ref, groups) })),
        args: t.args.map((a) => fillCompiledTemplate(a, groups)),
        env,
      },
    };
  }

  /** Starts one config-program run for `refs` (none cached or in flight); per-ref promises, registered in flight. */
  private configure(job: JobDefinition, refs: string[]): Map<string, Promise<ResolvedTask>> {
    const run = this.limit(() =>
      runConfigProgram(job, refs, this.workspaceRoot, {
        timeoutMs: this.configTimeoutMs,
        ...(this.env ? { env: this.env } : {}),
        ...(this.signal ? { signal: this.signal } : {}),
        ownerOf: (out) => this.ownerOf(out),
      }),
    );
    const all = run.then(
      (configs) => {
        const byConfig = new Map<JobConfig, ResolvedTask>();
        const tasks = new Map<string, ResolvedTask>();
        for (const ref of refs) {
          const config = configs.get(ref)!;
          let task = byConfig.get(config);
          if (task === undefined) byConfig.set(config, (task = { job_label: job.label, config, job }));
          tasks.set(ref, task);
          this.tasks.set(ref, task);
          this.inflight.delete(ref);
        }
        return tasks;
      },
      (err: unknown) => {
        for (const ref of refs) this.inflight.delete(ref);
        throw err;
      },
    );
    const perRef = new Map<string, Promise<ResolvedTask>>();
    for (const ref of refs) {
      const p = all.then((tasks) => tasks.get(ref)!);
      p.catch(() => {}); // the caller(s) awaiting it see the error; no unhandled rejection if none does
      this.inflight.set(ref, p);
      perRef.set(ref, p);
    }
    return perRef;
  }
}

function taskKey(task: ResolvedTask): string {
  return `${task.job_label}\u0000${[...task.config.outputs].sort().join('\u0000')}`;
}

interface Node {
  key: string;
  task: ResolvedTask;
  deps: Array<{ ref: string; node: Node }> | undefined;
}

/** Iterative depth-first post-order from the roots: inputs first. Throws GraphError `cycle`. */
async function dependencyOrder(roots: string[], taskOfRef: Map<string, ResolvedTask>, pacer?: WorkPacer): Promise<GraphNode[]> {
  const nodes = new Map<string, Node>();
  const nodeOf = (task: ResolvedTask): Node => {
    const key = taskKey(task);
    let n = nodes.get(key);
    if (n === undefined) nodes.set(key, (n = { key, task, deps: undefined }));
    return n;
  };
  const depsOf = (n: Node): Array<{ ref: string; node: Node }> => {
    if (n.deps === undefined) {
      n.deps = [];
      for (const input of n.task.config.inputs) {
        if (input.dep_type !== 'MATERIALIZE') continue;
        n.deps.push({ ref: input.partition_ref, node: nodeOf(taskOfRef.get(input.partition_ref)!) });
      }
    }
    return n.deps;
  };

  const VISITING = 1;
  const DONE = 2;
  const state = new Map<Node, number>();
  const order: GraphNode[] = [];
  for (const root of roots) {
    const start = nodeOf(taskOfRef.get(root)!);
    if (state.has(start)) continue;
    const stack: Array<{ node: Node; via: string; next: number }> = [{ node: start, via: root, next: 0 }];
    state.set(start, VISITING);
    while (stack.length > 0) {
      if (pacer?.due() === true) await pacer.pause();
      const top = stack[stack.length - 1]!;
      const deps = depsOf(top.node);
      if (top.next < deps.length) {
        const { ref, node } = deps[top.next++]!;
        const s = state.get(node);
        if (s === DONE) continue;
        if (s === VISITING) throw cycleError(stack, node, ref);
        state.set(node, VISITING);
        stack.push({ node, via: ref, next: 0 });
      } else {
        state.set(top.node, DONE);
        order.push({ job_label: top.node.task.job_label, config: top.node.task.config });
        stack.pop();
      }
    }
  }
  return order;
}

function cycleError(stack: Array<{ node: Node; via: string }>, back: Node, ref: string): GraphError {
  const j = stack.findIndex((f) => f.node === back);
  const frames = stack.slice(j + 1);
  const refs = [ref, ...frames.map((f) => f.via), ref];
  const labels = [back.task.job_label, ...frames.map((f) => f.node.task.job_label), back.task.job_label];
  return new GraphError(
    'cycle',
    `Dependency cycle: ${refs.join(' -> ')} (jobs ${labels.join(' -> ')}). A ref cannot need itself through ` +
      'MATERIALIZE inputs; break the cycle in platform.json (or the config program), e.g. make one of these inputs QUERY.',
    { ref, cycle: refs, jobs: labels },
  );
}
