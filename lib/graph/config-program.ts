import { spawn } from 'node:child_process';
import { signalGroup } from '../system/process-group.js';
import type { JobConfig } from '../events/build-event.js';
import type { JobDefinition } from './graph-definition.js';
import { GraphError } from './graph-error.js';
import { parseConfigOutput, type ReadOptions } from './config-output.js';
import { execSizeProblem } from './exec-size.js';
import { errorMessage } from '../errors.js';
import { someNamed } from '../some-named.js';

export const DEFAULT_CONFIG_TIMEOUT_MS = 30_000;
/** Refs per process are capped by their total size so that argv stays far below the OS limit (E2BIG). */
const ARGV_REFS_BUDGET_BYTES = 256 * 1024;
const STDERR_TAIL_CHARS = 2048;
const DEFAULT_MAX_STDOUT_BYTES = 64 * 1024 * 1024;

export interface ConfigProgramOptions extends ReadOptions {
  /** Kill the program (its whole process group) after this long. Default 30 s. */
  timeoutMs?: number;
  /** Environment of the program. Default: this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Larger stdout is an error. Default 64 MiB. */
  maxStdoutBytes?: number;
  /**
   * Which job's output patterns match a ref: its label, or the GraphError of the lookup (`unknown_ref`: none does,
   * `ambiguous_ref`: two do). Given, every output of a config used is checked against it: a config program may only
   * name refs of its own job, or its run would make another job's partitions (or nobody's) live.
   */
  ownerOf?: (ref: string) => string | GraphError;
  /** Aborted: the program's process group is killed at once (the daemon stops), and none is started any more. */
  signal?: AbortSignal;
}

/**
 * Runs the config program of a config-program job for `refs`: `config[0] config[1..] ref1 ref2 ...` in the
 * workspace root, stdout = `JobConfigResponse` JSON. Returns each requested ref's JobConfig (several refs may share
 * one config object when the program returns a multi-output config).
 *
 * All refs go to one process; only when their total size would approach the OS argv limit are they split over
 * several processes.
 *
 * Throws GraphError `config_failed` (naming the job and showing the program's stderr) on a spawn error, non-zero exit,
 * timeout, bad JSON, a requested ref that no returned config lists in its outputs, or (with `ownerOf`) a config
 * used that lists an output twice, shares one with another config, or lists one its job does not produce.
 */
export async function runConfigProgram(
  job: JobDefinition,
  refs: readonly string[],
  workspaceRoot: string,
  options: ConfigProgramOptions = {},
): Promise<Map<string, JobConfig>> {
  if (job.config === undefined) throw new TypeError(`job "${job.label}" has no config program`);
  const result = new Map<string, JobConfig>();
  const chunks = chunkRefs([...new Set(refs)]);
  const parts = await Promise.all(chunks.map((chunk) => runOnce(job, job.config!, chunk, workspaceRoot, options)));
  for (const part of parts) for (const [ref, config] of part) result.set(ref, config);
  return result;
}

function chunkRefs(refs: string[]): string[][] {
  const chunks: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const ref of refs) {
    const bytes = Buffer.byteLength(ref) + 1;
    if (current.length > 0 && size + bytes > ARGV_REFS_BUDGET_BYTES) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(ref);
    size += bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

async function runOnce(
  job: JobDefinition,
  config: string[],
  refs: string[],
  cwd: string,
  options: ConfigProgramOptions,
): Promise<Map<string, JobConfig>> {
  const argv = [...config, ...refs];
  const run = await collect(argv, cwd, options);
  const fail = (what: string, extra = ''): never => {
    throw new GraphError('config_failed', failureMessage(job, config, refs, what, run.stderr, extra), {
      jobs: [job.label],
      ...(refs.length === 1 ? { ref: refs[0] } : {}),
      ...(run.timedOut ? { timedOut: true } : {}),
    });
  };

  if (run.aborted) fail('was stopped: the server is shutting down (its next start asks again)');
  if (run.spawnError) {
    fail(`could not be started (${run.spawnError.message}); check "config" in platform.json and that the program exists`);
  }
  if (run.timedOut) fail(`did not finish within ${Math.round(run.timeoutMs / 100) / 10} s and was killed`);
  if (run.stdoutOverflow) fail(`printed more than ${run.maxStdoutBytes} bytes on stdout and was killed`);
  if (run.code !== 0) {
    fail(run.signal ? `was ended by signal ${run.signal}` : `exited with code ${run.code}`);
  }

  // A large output is read off the event loop (config-output.ts); the words of a bad one are the same either way.
  let output: Awaited<ReturnType<typeof parseConfigOutput>>;
  try {
    output = await parseConfigOutput(run.stdout, run.stdoutBytes, options);
  } catch (err) {
    return fail(`printed ${run.stdoutBytes} bytes on stdout that could not be read (${errorMessage(err)})`);
  }
  if (!output.ok) return fail(output.reason, output.extra);
  const { configs } = output;

  const byRef = new Map<string, JobConfig>();
  const wanted = new Set(refs);
  for (const c of configs) {
    for (const out of c.outputs) {
      if (!wanted.has(out)) continue;
      const seen = byRef.get(out);
      if (seen !== undefined && seen !== c) fail(`returned two configs that both output "${out}"; each ref needs exactly one`);
      byRef.set(out, c);
    }
  }
  const missing = refs.filter((r) => !byRef.has(r));
  if (missing.length > 0) {
    fail(
      `returned no config whose outputs include ${listRefs(missing)}; it must return a config for every ref it is given`,
    );
  }
  // Every output of a config used becomes a partition its run makes live: each must be the job's own (by its output
  // patterns) and listed once, in one config. The requested refs are the job's already (the resolver matched them).
  const outputOf = new Map<string, JobConfig>();
  const checked = new Set<JobConfig>();
  for (const [ref, c] of byRef) {
    if (checked.has(c)) continue;
    checked.add(c);
    for (const out of c.outputs) {
      const other = outputOf.get(out);
      if (other === c) fail(`returned a config for "${ref}" that lists the output "${out}" twice; list each output once`);
      if (other !== undefined) fail(`returned two configs that both output "${out}"; each ref needs exactly one`);
      outputOf.set(out, c);
      if (options.ownerOf === undefined || wanted.has(out)) continue;
      const owner = options.ownerOf(out);
      if (owner === job.label) continue;
      const whose =
        typeof owner === 'string'
          ? `job "${owner}" produces it`
          : owner.code === 'unknown_ref'
            ? 'no job produces it (no outputs regex in platform.json matches it)'
            : `it matches the outputs of several jobs (${(owner.jobs ?? []).map((l) => `"${l}"`).join(', ')})`;
      fail(
        `returned a config for "${ref}" whose outputs include "${out}", which job "${job.label}" does not produce: ${whose}. ` +
          `A config may only list refs that match the outputs of its own job (${job.outputs.map((o) => JSON.stringify(o)).join(', ')}); nothing was built`,
      );
    }
    const problem = execSizeProblem(c);
    if (problem) {
      fail(`returned a config for "${ref}" that no job can be started with: ${problem}. Pass large data on the job's stdin (its JobConfig) or in a file instead`);
    }
  }
  return byRef;
}

interface Collected {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** As the pipe gave it. */
  stdout: Buffer[];
  stdoutBytes: number;
  stderr: string;
  timedOut: boolean;
  timeoutMs: number;
  stdoutOverflow: boolean;
  maxStdoutBytes: number;
  spawnError?: Error;
  /** Killed (or never started) because `signal` was aborted. */
  aborted?: boolean;
}

function collect(argv: string[], cwd: string, options: ConfigProgramOptions): Promise<Collected> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CONFIG_TIMEOUT_MS;
  const maxStdoutBytes = options.maxStdoutBytes ?? DEFAULT_MAX_STDOUT_BYTES;
  return new Promise((resolve) => {
    const out: Buffer[] = [];
    let outBytes = 0;
    let errTail = '';
    const result: Collected = {
      code: null,
      signal: null,
      stdout: out,
      stdoutBytes: 0,
      stderr: '',
      timedOut: false,
      timeoutMs,
      stdoutOverflow: false,
      maxStdoutBytes,
    };
    let settled = false;
    let release: (() => void) | undefined;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      release?.();
      result.stdoutBytes = out.reduce((n, b) => n + b.length, 0);
      result.stderr = errTail;
      resolve(result);
    };

    let timer: NodeJS.Timeout | undefined;
    const { signal } = options;
    if (signal?.aborted) {
      result.aborted = true;
      finish();
      return;
    }
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(argv[0]!, argv.slice(1), {
        cwd,
        env: options.env ?? process.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true, // own process group, so a timeout kills what the program started too
      });
    } catch (err) {
      // e.g. a NUL byte in a ref: rejected before any process exists
      result.spawnError = err as Error;
      finish();
      return;
    }
    const kill = (): void => {
      if (!signalGroup(child.pid ?? 0, 'SIGKILL', false)) child.kill('SIGKILL');
      child.stdout?.destroy();
      child.stderr?.destroy();
    };
    timer = setTimeout(() => {
      result.timedOut = true;
      kill();
    }, timeoutMs);
    // Detached, the program outlives the daemon unless killed here: its timer goes with the daemon's process.
    const onAbort = (): void => {
      result.aborted = true;
      kill();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    release = () => signal?.removeEventListener('abort', onAbort);

    child.stdout!.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > maxStdoutBytes) {
        if (!result.stdoutOverflow) {
          result.stdoutOverflow = true;
          kill();
        }
        return;
      }
      out.push(chunk);
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      errTail = (errTail + chunk).slice(-2 * STDERR_TAIL_CHARS);
    });
    child.on('error', (err) => {
      result.spawnError = err;
      finish();
    });
    child.on('close', (code, signal) => {
      result.code = code;
      result.signal = signal;
      finish();
    });
  });
}

function failureMessage(job: JobDefinition, config: string[], refs: string[], what: string, stderr: string, extra: string): string {
  let tail = stderr.trim();
  if (tail.length > STDERR_TAIL_CHARS) tail = `...${tail.slice(-STDERR_TAIL_CHARS)}`;
  const command = [...config.map(quote), refs.length <= 3 ? refs.map(quote).join(' ') : `<${refs.length} refs>`].join(' ');
  return (
    `Config program of job "${job.label}" ${what}.\n` +
    `  command: ${command}\n` +
    `  refs: ${listRefs(refs)}\n` +
    extra +
    (tail ? `  stderr:\n${tail.replace(/^/gm, '    ')}\n` : '  stderr: (empty)\n') +
    'Fix the config program (run the command by hand in the workspace root to see what it does), or the job in platform.json.'
  );
}

function listRefs(refs: readonly string[]): string {
  return someNamed(refs, 5, (r) => JSON.stringify(r));
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
