/**
 * Which processes belong to which job runs. A pid recorded before a crash may since have been reused by an
 * unrelated process, and a job's children outlive their group leader; but every process of a job run
 * inherits PLATFORM_WORKSPACE and PLATFORM_JOB_RUN_ID, so the environment tells, whatever the pids and groups
 * did. Run ids repeat across workspaces (every workspace has an r-1): only both together identify a run.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { signalGroup } from '../system/process-group.js';
import { dirIdentity } from '../system/dir-identity.js';

const RUN_KEY = 'PLATFORM_JOB_RUN_ID=';
const WORKSPACE_KEY = 'PLATFORM_WORKSPACE=';
/** The native launcher's program name (native/build-launcher.mjs). */
const LAUNCHER_NAME = 'platform-launcher';

/** A process's environment; undefined when it is gone or not ours to read. */
function environOf(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  } catch {
    return undefined;
  }
}

/** The job run an environment names in `workspace`, if any. */
function runIn(environ: readonly string[], workspace: string): string | undefined {
  if (!environ.includes(`${WORKSPACE_KEY}${workspace}`)) return undefined;
  return environ.find((e) => e.startsWith(RUN_KEY))?.slice(RUN_KEY.length);
}

/**
 * Whether a live process is one of the given run's (its supervisor, its job or their children). `startedAt` (epoch
 * ms, 0 for unknown) is when the log recorded `pid` as the run's: a job that emptied its environment (`exec env -i`)
 * or hid it (non-dumpable) is still known by that. Its pid leads its own session, and it started before that moment:
 * a pid is reused only once its process ended, so a process that had it then is the run's. So is one whose environment
 * names the run under another path of its workspace, moved since the run started (`movedHere`).
 */
export function belongsToRun(pid: number, workspace: string, jobRunId: string, startedAt = 0): boolean {
  if (pid <= 0) return false;
  const environ = environOf(pid);
  if (environ?.some((e) => e.startsWith(WORKSPACE_KEY) || e.startsWith(RUN_KEY))) {
    if (runIn(environ, workspace) === jobRunId) return true;
    const named = environ.find((e) => e.startsWith(WORKSPACE_KEY))?.slice(WORKSPACE_KEY.length);
    const run = environ.find((e) => e.startsWith(RUN_KEY))?.slice(RUN_KEY.length);
    return run === jobRunId && named !== undefined && startedAt > 0 && movedHere(named, workspace) && ledSessionBefore(pid, startedAt);
  }
  return startedAt > 0 && ledSessionBefore(pid, startedAt);
}

/**
 * Whether `named`, the workspace path a run's environment was given when it started, may be `workspace` moved since
 * (renamed, or its directory moved: a daemon stopped, `mv ws ws2`, the next daemon at ws2 follows the run): no
 * workspace is at `named` any more, or the one there has the same `.platform` directory. A workspace there with a
 * `.platform` of its own (a copy's original, or a new one made at the old path) is another, whose runs are not this
 * one's to follow or kill. The run's pid, its session and its start before the log recorded it say the rest.
 */
function movedHere(named: string, workspace: string): boolean {
  const there = dirIdentity(join(named, '.platform'));
  return there === undefined || there === dirIdentity(join(workspace, '.platform'));
}

/**
 * Whether `pid` is what a launcher started for a run and a start records: a live process leading its own session
 * whose parent is a run launcher (the native one, or the shell one's subshell; both name `platform-launcher` in
 * their command line). The job's own processes in sessions of their own (`setsid`, a daemonized child) are not it.
 */
export function launchedByLauncher(pid: number): boolean {
  try {
    const fields = statFields(pid);
    if (fields[0] === 'Z' || Number(fields[3]) !== pid) return false;
    return readFileSync(`/proc/${Number(fields[1])}/cmdline`, 'utf8').includes('platform-launcher');
  } catch {
    return false;
  }
}

/** The clock ticks of /proc's times (USER_HZ: 100 on every Linux architecture, fixed by its ABI). */
const TICKS_PER_SECOND = 100;
/** How far /proc's boot-relative times and the wall clock may disagree, in ms (their resolutions). */
const CLOCK_SLACK_MS = 50;

/** Whether `pid` runs (not a zombie: its environment reads empty too), leads its session and started before `atMs`. */
function ledSessionBefore(pid: number, atMs: number): boolean {
  try {
    // state, ppid, pgrp, session, ...
    const fields = statFields(pid);
    if (fields[0] === 'Z' || Number(fields[3]) !== pid) return false;
    const startMs = startOf(fields);
    return startMs !== undefined && startMs <= atMs + CLOCK_SLACK_MS;
  } catch {
    return false;
  }
}

/**
 * When `pid` started (epoch ms, to /proc's 10 ms), or undefined when it is gone. The kernel keeps it with the process:
 * a run's real start, read by a daemon that was not there when it began.
 */
export function processStartMs(pid: number): number | undefined {
  try {
    return startOf(statFields(pid));
  } catch {
    return undefined;
  }
}

/** The start time of stat's fields (field 22 of the whole line: clock ticks since boot) as epoch ms. */
function startOf(fields: readonly string[]): number | undefined {
  const uptimeMs = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000;
  const startMs = Date.now() - uptimeMs + (Number(fields[19]) * 1000) / TICKS_PER_SECOND;
  return Number.isFinite(startMs) ? Math.floor(startMs) : undefined;
}

/**
 * Whether `pid` ended and its launcher has not reaped it yet (a zombie whose parent is a platform-launcher). Its
 * environment reads empty by then, so it no longer looks like its run's; the native launcher writes a run's status
 * before it reaps the job, so a job in this state has its status coming. A zombie of any other parent (the launcher
 * died and a PID 1 that never reaps adopted it) has none coming.
 */
export function unreaped(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    const [state, ppid] = statFields(pid);
    if (state !== 'Z') return false;
    const parent = readFileSync(`/proc/${ppid}/cmdline`, 'utf8').split('\0', 1)[0]!;
    return basename(parent) === LAUNCHER_NAME;
  } catch {
    return false;
  }
}

/** The fields of /proc/<pid>/stat after the command name (in parentheses, and it may itself hold ") "); throws when gone. */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * The live processes of the given job runs: one pass over /proc, reading every process's environment (start-up only;
 * empty where /proc is absent). Its cost is the machine's processes, not the runs asked about.
 */
export function findJobRunProcesses(workspace: string, ids: ReadonlySet<string>): Map<string, number[]> {
  const found = new Map<string, number[]>();
  if (ids.size === 0) return found;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found;
  }
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    const environ = environOf(pid);
    const id = environ && runIn(environ, workspace);
    if (id !== undefined && ids.has(id)) found.set(id, [...(found.get(id) ?? []), pid]);
  }
  return found;
}

/** SIGKILL to each process, with the group it leads if it leads one. */
export function killProcesses(pids: readonly number[]): void {
  for (const pid of pids) {
    signalGroup(pid, 'SIGKILL'); // its group if it leads one, else the process itself
  }
}
