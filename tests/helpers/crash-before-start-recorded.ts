/**
 * A daemon killed (SIGKILL) after the launcher started its runs but before it recorded their starts: the window
 * between a run's spawn and the step that writes `job_run_started`, which a busy daemon killed at a random moment
 * falls into. Run as `node crash-before-start-recorded.js <workspace> <ref>...`: it opens the workspace with the
 * daemon's executor, deaf to its starts and ends (so the log keeps the runs queued), wants the refs, waits until
 * `<workspace>/ready` exists (a job writes it) and a run has ended (its status.json), then kills itself.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { NEVER } from 'rxjs';
import { parseGraph } from '../../lib/graph/parse-graph.js';
import { Platform } from '../../lib/platform.js';
import { SupervisedExecutor } from '../../lib/executor/supervised-executor.js';
import type { Executor } from '../../lib/executor/executor-port.js';

const [dir, ...refs] = process.argv.slice(2);
const deaf = (root: string): Executor => {
  const real = new SupervisedExecutor({ workspaceRoot: root });
  return {
    outcomes$: NEVER,
    started$: NEVER,
    start: (launch) => real.start(launch),
    cancel: (id, reason) => real.cancel(id, reason),
    reattach: (launch, pid, startedAt) => real.reattach(launch, pid, startedAt),
    runningCount: () => real.runningCount(),
    shutdown: (reason, options) => real.shutdown(reason, options),
  };
};
const platform = await Platform.open(dir!, {
  graph: parseGraph(JSON.parse(readFileSync(join(dir!, 'platform.json'), 'utf8')), 'platform.json'),
  executor: deaf,
  tickMs: 60_000,
});
const r = await platform.createWant({ partitions: refs, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
if (!r.ok) throw new Error(`createWant refused: ${r.error}`);
const until = Date.now() + 20_000;
const logs = join(dir!, '.platform', 'logs');
const oneEnded = () => existsSync(logs) && readdirSync(logs).some((id) => existsSync(join(logs, id, 'status.json')));
while (!(existsSync(join(dir!, 'ready')) && oneEnded()) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
process.kill(process.pid, 'SIGKILL');
