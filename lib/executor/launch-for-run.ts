/** A queued run as the executor starts it: the recorded exec and config, in the workspace, logging under .platform. */
import type { JobRunRecord } from '../state/build-state.js';
import { runLogDir, type JobLaunch } from './job-launch.js';

export function launchForRun(run: JobRunRecord, workspaceRoot: string): JobLaunch {
  return {
    job_run_id: run.job_run_id,
    argv: [...run.exec, ...run.config.args],
    env: { ...run.config.env, PLATFORM_WORKSPACE: workspaceRoot },
    outputs: run.config.outputs,
    cwd: workspaceRoot,
    stdin: JSON.stringify(run.config),
    log_dir: runLogDir(workspaceRoot, run.job_run_id),
    timeout_seconds: run.timeout_seconds,
    queued_at: run.queued_at,
  };
}
