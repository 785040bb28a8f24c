/**
 * The files a supervised run keeps in its log directory beside its logs, so that what happened to it outlives any
 * daemon: `stdin.json` (the job's config, its stdin), `cancel.json` (why it is being canceled, written before its
 * group is signalled), `exec.fields` (the job's environment and argv, for a run too wide for a launch record: 0600,
 * removed by its supervisor once read), `timed-out` (the pid of a run the native launcher timed out, for a
 * `--supervise` that outlives it) and `status.json` (`{"exit_code": n, "pid": p}`, written by its supervisor once the
 * job ended, with `"timed_out": true` when the supervisor killed it at its timeout; `status.link` in its place on a
 * disk that had no block for it). A daemon reads them to re-attach.
 *
 * A run id keeps its directory across attempts (a run a crashed daemon had queued, and not started, is started again
 * under the same id; one it started without recording it is adopted: Executor.adoptStarted), and
 * an earlier attempt's supervisor may outlive the kill that ended it and write its status late. So a start clears
 * the earlier attempt's status and cancel files, and a status names the pid it is about (the one the log records:
 * the job under the native launcher, the supervisor otherwise): a reader that knows the run's pid ignores another's.
 */
import { closeSync, existsSync, fstatSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { STDOUT_LOG, runLogDir, type JobOutcome } from './job-launch.js';

export const CANCEL_FILE = 'cancel.json';
export const STDIN_FILE = 'stdin.json';
export const STATUS_FILE = 'status.json';
/**
 * The status as a symlink's target, written by the native launcher when status.json could not be (a disk with inodes
 * and no blocks: a short symlink lives in its inode). Read when there is no status.json.
 */
export const STATUS_LINK = 'status.link';
export const EXEC_FILE = 'exec.fields';
export const TIMED_OUT_FILE = 'timed-out';

/**
 * What a supervisor recorded; `outcome` is the format of the node supervisors of 0.1.0, still read after an upgrade.
 * `ended_at` is the file's modification time: the supervisor writes it as the job ends, so a daemon that reads it
 * later (the run ended while none ran) still knows when. `timed_out`: the supervisor killed the job at its timeout.
 */
export type ExitStatus = ({ exit_code: number; timed_out: boolean } | { outcome: JobOutcome }) & { ended_at: number };

/** Written whole or not at all (a crash mid-write leaves the old file, or none), and on disk before it returns. */
export function writeDurably(path: string, value: unknown): void {
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, JSON.stringify(value));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** The file's JSON and its modification time (from the same descriptor), or undefined: absent, or not whole JSON. */
function readJson<T>(path: string): { value: T; mtimeMs: number } | undefined {
  try {
    const fd = openSync(path, 'r');
    try {
      const mtimeMs = fstatSync(fd).mtimeMs;
      return { value: JSON.parse(readFileSync(fd, 'utf8')) as T, mtimeMs };
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

/** The status.link's target as JSON and the link's own time (launcher.c write_status), or undefined. */
function readStatusLink<T>(dir: string): { value: T; mtimeMs: number } | undefined {
  try {
    const path = join(dir, STATUS_LINK);
    const text = readlinkSync(path);
    return { value: JSON.parse(text) as T, mtimeMs: lstatSync(path).mtimeMs };
  } catch {
    return undefined;
  }
}

/** status.json, or the status.link written in its place when the disk had no room for it. */
function readStatus<T>(dir: string): { value: T; mtimeMs: number } | undefined {
  return readJson<T>(join(dir, STATUS_FILE)) ?? readStatusLink<T>(dir);
}

/**
 * Undefined while the job runs (or when its supervisor died before writing: a half-written file reads as none), and
 * when the status is another attempt's: `pid` is the run's (0 when not known yet, which takes any).
 */
export function readExitStatus(dir: string, pid: number): ExitStatus | undefined {
  const read = readStatus<{ exit_code?: unknown; status?: unknown; pid?: unknown; timed_out?: unknown } | null>(dir);
  if (!read) return undefined;
  const raw = read.value;
  const ended_at = Math.floor(read.mtimeMs);
  if (pid > 0 && typeof raw?.pid === 'number' && raw.pid !== pid) return undefined;
  if (typeof raw?.exit_code === 'number' && raw.status === undefined) return { exit_code: raw.exit_code, timed_out: raw.timed_out === true, ended_at };
  if (typeof raw?.status === 'string') return { outcome: raw as JobOutcome, ended_at };
  return undefined;
}
/**
 * How far two file times that are in order may read out of it (the kernel stamps files from a clock of a few ms'
 * grain, and some stamps finer); an earlier attempt's stdout.log is older than that by a daemon's restart at least.
 */
const FILE_TIME_SLACK_MS = 10;

/**
 * When a run's job started (epoch ms), from its files, for a run no process of which is left to ask; 0 when they do
 * not tell. Its supervisor creates stdout.log as it starts the job (the daemon writes only to stderr.log), so the
 * file's birth is the start, when the file is this attempt's: born after this attempt was handed over and not after
 * its status. The hand-over is when its stdin.json was written (each hand-over that writes one rewrites it; the native
 * launcher, which gives a first attempt its config on a memfd, writes one for a run started again in its directory,
 * launcher.c make_run_dir); with none, it is the directory's birth, which is the first attempt's hand-over. A file
 * system that keeps no birth time (its birth reads 0) tells nothing.
 */
export function startFromFiles(dir: string): number {
  try {
    const born = statSync(join(dir, STDOUT_LOG)).birthtimeMs;
    const handedOver = statSync(join(dir, STDIN_FILE), { throwIfNoEntry: false })?.mtimeMs ?? statSync(dir).birthtimeMs;
    const ended = readExitStatus(dir, 0)?.ended_at ?? Date.now();
    return born > 0 && born >= handedOver - FILE_TIME_SLACK_MS && born <= ended + FILE_TIME_SLACK_MS ? Math.floor(born) : 0;
  } catch {
    return 0;
  }
}

/** The pid a whole status names (the run's, as the log would record it), or undefined. */
export function statusPid(dir: string): number | undefined {
  const pid = readStatus<{ pid?: unknown } | null>(dir)?.value?.pid;
  return typeof pid === 'number' && pid > 0 ? pid : undefined;
}
/** Below this many runs, each is looked for by name; above, the logs directory is listed once. */
const LOOKUPS_BEFORE_A_LISTING = 4096;

/**
 * Of `ids`, the runs that have a directory under the workspace's logs: the cheaper of a look per run and one listing
 * of the directory (which holds every run the retention kept).
 */
export function runDirsAmong(workspaceRoot: string, ids: ReadonlySet<string>): string[] {
  if (ids.size <= LOOKUPS_BEFORE_A_LISTING) return [...ids].filter((id) => existsSync(runLogDir(workspaceRoot, id)));
  try {
    return readdirSync(dirname(runLogDir(workspaceRoot, 'x'))).filter((name) => ids.has(name));
  } catch {
    return [];
  }
}

/**
 * Marks a run whose unrecorded start is killed so that it starts again: the status its launcher then writes of that
 * kill is of no start the log will hold, and must not be taken later for how an unrecorded start ended (adoptStarted
 * passes over a status beside a cancel). The run's next start clears the mark with the status.
 */
export function markSuperseded(dir: string): void {
  try {
    writeDurably(join(dir, CANCEL_FILE), { reason: 'killed to be started again: a daemon killed before it recorded the start had started it' });
  } catch {
    // No directory, no status to come: nothing to mark.
  }
}
export const readCancelReason = (dir: string): string | undefined => readJson<{ reason: string } | null>(join(dir, CANCEL_FILE))?.value?.reason;

/**
 * The run's directory and its `stdin.json`, without an earlier attempt's status: only a directory that was there
 * already can hold one (launcher.c does the same).
 */
export function writeRunFiles(dir: string, stdin: string): void {
  if (!makeRunDir(dir)) {
    rmSync(join(dir, STATUS_FILE), { force: true });
    rmSync(join(dir, STATUS_LINK), { force: true });
    rmSync(join(dir, CANCEL_FILE), { force: true });
    rmSync(join(dir, TIMED_OUT_FILE), { force: true });
  }
  writeFileSync(join(dir, STDIN_FILE), stdin);
}

/**
 * The job's environment (`K=V`) and argv for the native launcher's `--supervise` mode, which runs a job whose record
 * would be too wide (launcher.c): `n NUL env_1 NUL .. env_n NUL m NUL arg_1 NUL .. arg_m NUL`, as a record's tail.
 * Neither may hold a NUL.
 */
export function writeExecFields(dir: string, env: readonly string[], argv: readonly string[]): void {
  const path = join(dir, EXEC_FILE);
  // The daemon's environment is in it (credentials too): made anew, for this user alone (a mode applies only to a file
  // created); the supervisor removes it once read.
  rmSync(path, { force: true });
  writeFileSync(path, [String(env.length), ...env, String(argv.length), ...argv].join('\0') + '\0', { mode: 0o600 });
}

/** A wide run the launcher dropped unstarted: the daemon's environment in its fields leaves the disk with it. */
export function removeExecFields(dir: string): void {
  rmSync(join(dir, EXEC_FILE), { force: true });
}

/** Makes the run's directory (true) or finds it there (false); its parent exists after the first run. */
function makeRunDir(dir: string): boolean {
  try {
    mkdirSync(dir);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'ENOENT') throw err;
    mkdirSync(dir, { recursive: true });
    return true;
  }
}
