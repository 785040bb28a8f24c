/**
 * Which processes belong to which job runs. A pid recorded before a crash may since have been reused by an
 * unrelated process, and a job's children outlive their group leader; but every process of a job run
 * inherits PLATFORM_WORKSPACE and PLATFORM_JOB_RUN_ID, so the environment tells, whatever the pids and groups
 * did. Run ids repeat across workspaces (every workspace has an r-1): only both together identify a run.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { basename } from 'node:path';
import { signalGroup } from '../system/process-group.js';

const RUN_KEY = 'PLATFORM_JOB_RUN_ID=';
const WORKSPACE_KEY = 'PLATFORM_WORKSPACE=';
/** The native launcher's program name (native/build-launcher.mjs). */
const LAUNCHER_NAME = 'platform-launcher';

/** The job run a process belongs to in `workspace`, if any. */
function jobRunIdOf(pid: number, workspace: string): string | undefined {
  let environ: string[];
  try {
    environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
  } catch {
    // Gone, or not ours to read: either way not a process we may kill.
    return undefined;
  }
  if (!environ.includes(`${WORKSPACE_KEY}${workspace}`)) return undefined;
  return environ.find((e) => e.startsWith(RUN_KEY))?.slice(RUN_KEY.length);
}

/** Whether a live process is one of the given run's (its supervisor, its job or their children). */
export function belongsToRun(pid: number, workspace: string, jobRunId: string): boolean {
  return pid > 0 && jobRunIdOf(pid, workspace) === jobRunId;
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
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state and the parent's pid follow the command name in parentheses, which may itself hold ") ".
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 2);
    if (state !== 'Z') return false;
    const parent = readFileSync(`/proc/${ppid}/cmdline`, 'utf8').split('\0', 1)[0]!;
    return basename(parent) === LAUNCHER_NAME;
  } catch {
    return false;
  }
}

/** The live processes of the given job runs: one pass over /proc (start-up only; empty where /proc is absent). */
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
    const id = jobRunIdOf(pid, workspace);
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
