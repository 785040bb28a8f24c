/**
 * `executor: 'in-process'`: new runs are this process's children (ProcessExecutor), and a run an earlier daemon left
 * under a supervisor (a `platform serve`, or an embedding app with `'supervised'`) is followed to its end by a
 * SupervisedExecutor, as the next daemon would. Opening a workspace in-process used to take such a run for lost and
 * kill it, a job that was still doing its work.
 */
import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { Subject, merge, type Observable } from 'rxjs';
import { ranHere, type Executor, type Reattached } from './executor-port.js';
import type { JobLaunch, JobOutcome } from './job-launch.js';
import { ProcessExecutor } from './process-executor.js';
import { launchedByLauncher, unreaped } from './job-process-identity.js';
import { STATUS_FILE, STATUS_LINK, STDIN_FILE } from './run-files.js';
import { SupervisedExecutor } from './supervised-executor.js';

export class InProcessExecutor implements Executor {
  /** Each run's log directory is made as it starts (Executor.keepsRunLogs). */
  readonly keepsRunLogs = true;
  private readonly children = new ProcessExecutor();
  /** For runs left under a supervisor: made at the first, so a workspace with none starts no poll. */
  private supervised: SupervisedExecutor | undefined;
  private readonly followed = new Set<string>();
  private readonly followedOutcomes = new Subject<JobOutcome>();
  readonly outcomes$: Observable<JobOutcome> = merge(this.children.outcomes$, this.followedOutcomes);

  constructor(private readonly workspaceRoot: string) {}

  start(launch: JobLaunch): { pid: number; worker: string } | undefined {
    return this.children.start(launch);
  }

  cancel(job_run_id: string, reason: string): void {
    if (this.followed.has(job_run_id)) this.supervised?.cancel(job_run_id, reason);
    else this.children.cancel(job_run_id, reason);
  }

  /** Runs of this machine only (it follows local supervised ones): a Redis worker's are that worker's. */
  canFollow(worker: string): boolean {
    return ranHere(worker);
  }

  reattach(launch: JobLaunch, pid: number, startedAt = 0): Reattached {
    // A child of an earlier process went with that process: lost, as before.
    if (!underSupervisor(launch.log_dir, pid)) return 'lost';
    if (!this.supervised) {
      this.supervised = new SupervisedExecutor({ workspaceRoot: this.workspaceRoot });
      this.supervised.outcomes$.subscribe(this.followedOutcomes);
    }
    const found = this.supervised.reattach(launch, pid, startedAt);
    if (found !== 'lost') this.followed.add(launch.job_run_id);
    return found;
  }

  runningCount(): number {
    return this.children.runningCount() + (this.supervised?.runningCount() ?? 0);
  }

  async shutdown(reason: string, options: { cancelRuns?: boolean } = {}): Promise<void> {
    await Promise.all([this.children.shutdown(reason), this.supervised?.shutdown(reason, options)]);
  }
}

/**
 * Whether a run was started under a supervisor (which writes its status), not as a child of an earlier process: its
 * directory holds the stdin.json a shell or `--supervise` supervisor reads, or the status one wrote; or its process
 * is the native launcher's, which gives the job its config on a memfd and writes the status only at its end.
 */
function underSupervisor(dir: string, pid: number): boolean {
  // lstat for the link: its target is the status's text, not a path (existsSync would follow it and find nothing).
  const linked = lstatSync(join(dir, STATUS_LINK), { throwIfNoEntry: false }) !== undefined;
  return existsSync(join(dir, STDIN_FILE)) || existsSync(join(dir, STATUS_FILE)) || linked || launchedByLauncher(pid) || unreaped(pid);
}
