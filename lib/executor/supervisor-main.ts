/**
 * The supervisor of one local job run: a small process of its own (its own session, no terminal) that runs the job
 * with the ProcessExecutor (process group, logs, timeout, missing inputs), records how it ended in `status.json`
 * and exits. It needs no daemon: a daemon that stops, crashes or is upgraded leaves it running, and the next one
 * reads the status (or follows the run to its end). SIGTERM is a cancel: the reason is in `cancel.json`.
 *
 * Usage: node supervisor-main.js <log_dir>
 */
import { join } from 'node:path';
import { ProcessExecutor } from './process-executor.js';
import { STATUS_FILE, SUPERVISOR_FILE, readCancelReason, readLaunch, writeDurably } from './run-files.js';
import type { JobOutcome } from './job-launch.js';

const dir = process.argv[2];
const launch = dir ? readLaunch(dir) : undefined;
if (!dir || !launch) {
  process.stderr.write(`platform supervisor: no readable ${join(dir ?? '<log_dir>', 'launch.json')}; usage: supervisor-main.js <log_dir>\n`);
  process.exit(2);
}
// A terminal closing or a Ctrl-C meant for a daemon in the foreground is not this run's business.
process.on('SIGHUP', () => {});
process.on('SIGINT', () => {});

const executor = new ProcessExecutor();
executor.outcomes$.subscribe((outcome: JobOutcome) => {
  try {
    writeDurably(join(dir, STATUS_FILE), outcome);
  } catch (err) {
    process.stderr.write(`platform supervisor: could not write ${STATUS_FILE}: ${String(err)}\n`);
    process.exit(1);
  }
  process.exit(0);
});
process.on('SIGTERM', () => executor.cancel(launch.job_run_id, readCancelReason(dir) ?? 'canceled'));
const { pid } = executor.start(launch);
writeDurably(join(dir, SUPERVISOR_FILE), { supervisor_pid: process.pid, job_pid: pid });
