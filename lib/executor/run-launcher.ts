/**
 * Starts supervised runs off the daemon's event loop (a node `spawn` forks the whole daemon: about 2.4 ms of its
 * event loop a run). Two launchers answer the same news on their stdout, `s <id> <pid>` once a run's process (the
 * leader of its session) runs and `x <id> <status>` once it exited (the native one adds when, in epoch ms):
 *
 * - the native one (native/launcher.c, compiled by `npm run build`): one fork and one exec a run, the job itself;
 *   the launcher is the supervisor of the runs it forked (it writes their status files, and lives on after the
 *   daemon until the last ended). It is given the run's whole launch on its stdin and also makes the run's
 *   directory, off this event loop, and gives the job its config on a memfd (no stdin.json: an inode less a run);
 * - where it was not built, one long-lived `/bin/sh`, given a run's id and directory: each run's supervisor is
 *   started with `setsid` (a session and process group of its own, so it outlives the daemon and a cancel reaches
 *   its whole group) and `env --default-signal` (an asynchronous list of a shell ignores SIGINT and SIGQUIT, and the
 *   job must not inherit that); ~3 ms of a slot.
 *
 * A run whose environment or arguments a native record cannot carry (more fields than launcher.c parses) is still the
 * native launcher's: they go to a file in its directory (run-files.ts `writeExecFields`), and the record's program is
 * the launcher's `--supervise` mode, which reads them and runs the job. So every run of the native launcher counts in
 * its slots, its order, its hold and its timeout alike. Without it, where the shell launcher cannot be used (no
 * setsid, or names the shell cannot set), the supervisor is spawned by node: no cap is kept by these launchers.
 *
 * Every supervisor keeps its run's timeout itself (the native launcher from its poll's timeout, the shell one with a
 * watchdog per run that has one), so it holds while no daemon runs.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import { writeExecFields, writeRunFiles } from './run-files.js';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Observable, Subject } from 'rxjs';

export type LauncherNews =
  /** `at`: when it started (epoch ms), from the native launcher's clock; absent from the others (heard at once). */
  | { kind: 'started'; id: string; pid: number; at?: number }
  /** `status` is the run's exit status (128+n when its job, or its supervisor, was killed by signal n); `at` as above. */
  | { kind: 'exited'; id: string; status: number; at?: number }
  /** Not started: `runFiles` when its directory or stdin.json could not be written (`error.code` says why). */
  | { kind: 'failed'; id: string; error: NodeJS.ErrnoException; runFiles?: boolean }
  /** A held run canceled before it started (`cancelHeld`): it never ran. */
  | { kind: 'dropped'; id: string }
  /** The launcher ended, or ended its news, before it was closed: the runs it started will send no more news. */
  | { kind: 'launcher-gone' };

// The run's identity goes in the supervisor's own environment (what /proc shows of it), as a direct spawn sets it.
const LAUNCHER_SCRIPT = [
  // env's path, on this PATH: a run's supervisor runs its job with it, after run.sh set the job's PATH.
  'sup=$1; ws=$2; penv=$(command -v env)',
  'while IFS= read -r id && IFS= read -r d; do',
  '  ( setsid env --default-signal=INT,QUIT PLATFORM_JOB_RUN_ID="$id" PLATFORM_WORKSPACE="$ws" /bin/sh -c "$sup" "$d" "$penv" </dev/null >/dev/null 2>&1 & echo "s $id $!"; wait $!; echo "x $id $?" ) &',
  'done',
  'wait',
].join('\n');

export type SyncAnswer = 'ok' | 'timeout' | 'gone';

/** What a native launcher needs of a run (the shell launcher reads the same from the run's run.sh). */
export interface RunSpec {
  id: string;
  dir: string;
  /** The job's own variables; a run's environment is the daemon's with these over it. */
  jobEnv: Record<string, string>;
  cwd: string;
  /** argv[0] is the program's absolute path. */
  argv: string[];
  /**
   * The job's config: given, the launcher makes the run's directory and gives the job its config as its stdin (the
   * native one off this event loop, from a memfd; the shell one from stdin.json); absent, the directory and a
   * stdin.json are written already.
   */
  stdin?: string;
  /**
   * The run's timeout (0 or absent: none), kept by its supervisor whether or not a daemon runs: SIGTERM to the job's
   * group, SIGKILL `killGraceMs` later, and `"timed_out": true` in its status. The shell supervisor reads both from
   * run.sh instead.
   */
  timeoutMs?: number;
  killGraceMs?: number;
}

/** dist/native/platform-launcher, beside this module's dist/lib/executor/. */
const NATIVE_LAUNCHER = fileURLToPath(new URL('../../native/platform-launcher', import.meta.url));
/** Records the native launcher parses at most (launcher.c's field table). */
const NATIVE_MAX_FIELDS = 8_000;

export class RunLauncher {
  private readonly subject = new Subject<LauncherNews>();
  readonly news$: Observable<LauncherNews> = this.subject.asObservable();
  private shell: ChildProcess | undefined;
  private readonly mode: 'native' | 'shell' | 'direct';
  private buffered = '';
  private corked = false;
  /** Callers of `sync` waiting for the launcher's answer, oldest first. */
  private syncs: Array<{ done: (ok: SyncAnswer) => void }> = [];
  /** The daemon's environment as launcher.c's fields, encoded once (it is most of every record). */
  private baseEnv: { keys: Set<string>; fields: string[]; entries: Array<[string, string]> } | undefined;

  /** `script` is the supervisor (`sh -c script <run dir>`), which sets the run's own environment and directory. */
  constructor(private readonly script: string, private readonly workspaceRoot: string) {
    this.mode = launcherMode();
  }

  /** Which launcher starts runs (the executor writes run.sh only for the shell launcher, or for a deadline). */
  get kind(): 'native' | 'shell' | 'direct' {
    return this.mode;
  }

  /**
   * Starts the run, or (native) hands it over to be started as a slot allows. `shellSafe`: the run's environment can
   * be set by its run.sh (the shell launcher's way); otherwise, without the native launcher, node spawns the run.
   */
  launch(run: RunSpec, shellSafe = true): void {
    if (this.mode !== 'native') return this.launchOtherwise(run, shellSafe);
    const record = this.nativeRecord(run);
    if (typeof record === 'string') return this.send(record);
    setImmediate(() => this.subject.next({ kind: 'failed', id: run.id, ...record }));
  }

  /**
   * How many of the runs given to the native launcher may run at once (undefined: no limit). Past it, the launcher
   * holds a run and starts it the moment one of its runs ends, oldest first.
   */
  setSlots(slots: number | undefined): void {
    if (this.mode !== 'native') return;
    this.send(`\0slots\0${slots === undefined ? '' : String(Math.max(0, Math.floor(slots)))}\0`);
  }

  /** A run the native launcher holds is dropped (`dropped` news); one it started already is not (its pid is known). */
  cancelHeld(id: string): void {
    if (this.mode !== 'native' || !this.shell) return;
    this.send(`\0cancel\0${encodeURIComponent(id)}\0`);
  }

  /**
   * Resolves 'ok' once the native launcher has done everything written before (the news of whatever it started
   * meanwhile came first); 'timeout' after `ms` without its answer; 'gone' when there is no launcher (or it went). At
   * once ('ok') for the other launchers, which hold nothing.
   */
  sync(ms: number): Promise<SyncAnswer> {
    if (this.mode !== 'native') return Promise.resolve('ok');
    if (!this.shell) return Promise.resolve('gone');
    return new Promise<SyncAnswer>((resolve) => {
      const waiter = { done: (ok: SyncAnswer): void => {
        clearTimeout(timer);
        waiter.done = () => {};
        resolve(ok);
      } };
      // Answers come in the order asked: each `y` is the oldest waiter's (one timed out still takes its own).
      this.syncs.push(waiter);
      const timer = setTimeout(() => waiter.done('timeout'), ms);
      this.send('\0sync\0\0');
    });
  }

  private launchOtherwise(run: RunSpec, shellSafe: boolean): void {
    const { id, dir } = run;
    if (run.stdin !== undefined) {
      try {
        writeRunFiles(dir, run.stdin);
      } catch (err) {
        setImmediate(() => this.subject.next({ kind: 'failed', id, error: err as NodeJS.ErrnoException, runFiles: true }));
        return;
      }
    }
    if (!shellSafe || this.mode !== 'shell' || /[\n\r]/.test(id + dir)) return this.spawnDirect(id, '/bin/sh', ['-c', this.script, dir, ...(this.mode === 'shell' && shellEnvPath ? [shellEnvPath] : [])], { ...process.env, ...run.jobEnv }, run.cwd);
    this.send(`${id}\n${dir}\n`);
  }

  /**
   * What a turn of the loop sends goes as one write: a step hands over several runs at once, and each write wakes the
   * launcher, which on two cores may take the CPU from this thread before the next.
   */
  private send(text: string): void {
    const stdin = this.ensureShell().stdin!;
    if (!this.corked) {
      this.corked = true;
      stdin.cork();
      process.nextTick(() => {
        this.corked = false;
        stdin.uncork();
      });
    }
    stdin.write(text);
  }

  close(): void {
    for (const w of this.syncs.splice(0)) w.done('gone');
    this.shell?.stdin?.end();
    this.shell?.unref();
    this.shell = undefined;
  }

  /**
   * launcher.c's record: id, dir, cwd, config, timeout and kill grace (ms), the environment counted, the argv
   * counted; each NUL-terminated. The id is percent-encoded: a news line is split on spaces and ends at a newline.
   * Why not, when the run cannot be started: a field holds a NUL (no program can be given one; node's spawn refuses it
   * too), or the files of a run too wide for a record could not be written (`runFiles`).
   */
  private nativeRecord(run: RunSpec): string | { error: Error; runFiles?: true } {
    // A NUL would split a field in two and the records after it. JSON never holds a raw NUL (it is escaped), so the
    // config is one field.
    const field = [run.dir, run.cwd, ...run.argv].find((f) => f.includes('\0'));
    if (field !== undefined) return { error: new Error(`a NUL byte in '${field.replace(/\0/g, '\\0')}': no program can be given one`) };
    // Without the variables every run sets for itself (a daemon started from a job has them too).
    this.baseEnv ??= encodeEnv(process.env, RUN_VARIABLES);
    const baseEnv = this.baseEnv;
    const identity = { PLATFORM_WORKSPACE: this.workspaceRoot, PLATFORM_JOB_RUN_ID: run.id };
    const own = encodeEnv({ ...run.jobEnv, ...identity });
    const base = [...own.keys].some((k) => baseEnv.keys.has(k)) ? baseEnv.entries.filter(([k]) => !own.keys.has(k)).map(([, f]) => f) : baseEnv.fields;
    const env = [...base, ...own.fields];
    const head = [encodeURIComponent(run.id), run.dir, run.cwd];
    if (env.length + run.argv.length + 8 <= NATIVE_MAX_FIELDS) return joinFields([...head, run.stdin ?? '', ...timeoutFields(run)], env, run.argv);
    // Too wide for a record: its supervisor reads the job's environment and argv from the run's directory. Its own
    // environment names the run, as a job's does (the identity a next daemon checks).
    try {
      if (run.stdin !== undefined) writeRunFiles(run.dir, run.stdin);
      writeExecFields(run.dir, env, run.argv);
    } catch (err) {
      return { error: err as NodeJS.ErrnoException, runFiles: true };
    }
    // The timeout and grace again, for the supervisor: it keeps them itself should its launcher die (launcher.c).
    const timing = timeoutFields(run);
    return joinFields([...head, '', ...timing], encodeEnv(identity).fields, [NATIVE_LAUNCHER, '--supervise', run.dir, ...timing]);
  }

  private ensureShell(): ChildProcess {
    if (this.shell) return this.shell;
    const [command, args] =
      this.mode === 'native'
        ? [NATIVE_LAUNCHER, [this.workspaceRoot]]
        : ['/bin/sh', ['-c', LAUNCHER_SCRIPT, 'platform-launcher', this.script, this.workspaceRoot]];
    const shell = spawn(command, args, {
      // Not the daemon's stderr: the launcher outlives the daemon while runs go on, and would hold its caller's pipe open.
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    shell.stdin!.on('error', () => {});
    shell.stdout!.setEncoding('utf8').on('data', (chunk: string) => this.read(chunk));
    const gone = (): void => {
      if (this.shell !== shell) return;
      this.shell = undefined;
      shell.stdin?.end();
      for (const w of this.syncs.splice(0)) w.done('gone');
      this.subject.next({ kind: 'launcher-gone' });
    };
    shell.once('exit', gone);
    // The native launcher ends its news, and lives on to reap its runs, when it could read no more records.
    shell.stdout!.once('end', gone);
    shell.unref();
    (shell.stdout as unknown as { unref?: () => void }).unref?.();
    this.shell = shell;
    return shell;
  }

  private read(chunk: string): void {
    this.buffered += chunk;
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      const [kind, wireId, value, when] = this.buffered.slice(0, nl).split(' ');
      this.buffered = this.buffered.slice(nl + 1);
      const id = this.mode === 'native' ? decodeId(wireId) : wireId;
      if (!id || value === undefined) continue;
      // When it happened, by the native launcher (the shell's news has no time: it is heard as it happens).
      const at = when !== undefined && /^\d+$/.test(when) ? { at: Number(when) } : {};
      if (kind === 's') this.subject.next({ kind: 'started', id, pid: Number(value), ...at });
      else if (kind === 'x') this.subject.next({ kind: 'exited', id, status: Number(value), ...at });
      else if (kind === 'f') this.subject.next({ kind: 'failed', id, error: errnoError(Number(value), 'could not fork its process (the machine is out of processes or memory)') });
      else if (kind === 'd') this.subject.next({ kind: 'dropped', id });
      else if (kind === 'y') this.syncs.shift()?.done('ok');
      else if (kind === 'w') this.subject.next({ kind: 'failed', id, error: errnoError(Number(value), "could not write the run's files"), runFiles: true });
    }
  }

  private spawnDirect(id: string, command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): void {
    let child: ChildProcess;
    try {
      child = spawn(command, args, { cwd, env, detached: true, stdio: 'ignore' });
    } catch (err) {
      setImmediate(() => this.subject.next({ kind: 'failed', id, error: err as Error }));
      return;
    }
    child.unref();
    child.once('error', (error) => this.subject.next({ kind: 'failed', id, error }));
    if (child.pid === undefined) return;
    const pid = child.pid;
    setImmediate(() => this.subject.next({ kind: 'started', id, pid }));
    child.once('exit', (code, signal) => {
      const n = signal ? (signalNumber(signal) ?? 0) : 0;
      setImmediate(() => this.subject.next({ kind: 'exited', id, status: code ?? 128 + n }));
    });
  }
}

let nativeOk: boolean | undefined;
let shellOk: boolean | undefined;
/** The native launcher's path (it may be missing where no C compiler was at hand). */
export const nativeLauncherPath = (): string => NATIVE_LAUNCHER;

/** `PLATFORM_LAUNCHER=shell` (or `direct`) forces a slower path: the way back if the native launcher misbehaves. */
export function launcherMode(): 'native' | 'shell' | 'direct' {
  const asked = process.env.PLATFORM_LAUNCHER;
  if (asked !== 'shell' && asked !== 'direct' && (nativeOk ??= canRun(NATIVE_LAUNCHER))) return 'native';
  if (asked !== 'direct' && (shellOk ??= canLaunchFromShell())) return 'shell';
  return 'direct';
}

function canRun(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** env's absolute path, once the shell launcher was found usable (a directly spawned supervisor is given it too). */
let shellEnvPath: string | undefined;

function canLaunchFromShell(): boolean {
  const r = spawnSync('/bin/sh', ['-c', 'command -v setsid >/dev/null && env --default-signal=INT true && command -v env'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const path = r.stdout?.trim() ?? '';
  if (r.status !== 0 || !path.startsWith('/')) return false;
  shellEnvPath = path;
  return true;
}

/** What the executor sets for every run, over whatever the daemon's own environment says. */
const RUN_VARIABLES: ReadonlySet<string> = new Set(['PLATFORM_WORKSPACE', 'PLATFORM_JOB_RUN_ID', 'PLATFORM_OUTPUTS']);

/** `K=V` fields (what execve takes), but for `leaveOut`; names a C environment cannot hold are left out too. */
function encodeEnv(env: NodeJS.ProcessEnv, leaveOut: ReadonlySet<string> = new Set()): { keys: Set<string>; fields: string[]; entries: Array<[string, string]> } {
  const keys = new Set<string>();
  const entries: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || leaveOut.has(k) || k === '' || k.includes('=') || k.includes('\0') || v.includes('\0')) continue;
    keys.add(k);
    entries.push([k, `${k}=${v}`]);
  }
  return { keys, fields: entries.map(([, f]) => f), entries };
}

/** A record or its tail: the leading fields, then the environment and the argv, each counted; every field NUL-ended. */
function joinFields(head: string[], env: string[], argv: string[]): string {
  return [...head, String(env.length), ...env, String(argv.length), ...argv].join('\0') + '\0';
}

/** A run id as the native launcher's news gives it back (undefined: not one this daemon sent). */
function decodeId(wire: string | undefined): string | undefined {
  try {
    return wire === undefined ? undefined : decodeURIComponent(wire);
  } catch {
    return undefined;
  }
}

/** launcher.c's longest span (ms): what it caps a timeout at, ~30,000 years. */
const NATIVE_MAX_MS = 1e15;

/** The run's timeout and kill grace as launcher.c reads them: whole milliseconds in decimal ("0": no timeout). */
function timeoutFields(run: RunSpec): [string, string] {
  const ms = (v: number | undefined): string => String(v !== undefined && Number.isFinite(v) && v > 0 ? Math.min(Math.round(v), NATIVE_MAX_MS) : 0);
  return [ms(run.timeoutMs), ms(run.killGraceMs)];
}

/** An error as node would make it for errno `n` (its `code`, e.g. ENOSPC). */
function errnoError(n: number, what: string): NodeJS.ErrnoException {
  const code = Object.entries(constants.errno).find(([, v]) => v === n)?.[0] ?? `errno ${n}`;
  return Object.assign(new Error(`${what}: ${code}`), { code, errno: n });
}

function signalNumber(name: string): number | undefined {
  return (constants.signals as Record<string, number>)[name];
}
