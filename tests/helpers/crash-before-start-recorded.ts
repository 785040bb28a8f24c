/**
 * A daemon killed (SIGKILL) after the launcher started its runs but before it recorded their starts: the window
 * between a run's spawn and the step that writes `job_run_started`, which a busy daemon killed at a random moment
 * falls into. Run as `node crash-before-start-recorded.js <workspace> <ref>...`: it opens the workspace with the
 * daemon's executor, deaf to its starts and ends (so the log keeps the runs queued), wants the refs, waits until
 * `<workspace>/ready` exists (a job writes it) and a run has ended (its status.json), then kills itself.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SupervisedExecutor } from '../../lib/executor/supervised-executor.js';
import { openDeafAndWant } from './deaf-platform.js';

const [dir, ...refs] = process.argv.slice(2);
await openDeafAndWant(dir!, (root) => new SupervisedExecutor({ workspaceRoot: root }), refs);
const until = Date.now() + 20_000;
const logs = join(dir!, '.platform', 'logs');
const oneEnded = () => existsSync(logs) && readdirSync(logs).some((id) => existsSync(join(logs, id, 'status.json')));
while (!(existsSync(join(dir!, 'ready')) && oneEnded()) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
process.kill(process.pid, 'SIGKILL');
