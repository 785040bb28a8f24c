/**
 * An embedder's own executor (the Executor port, through Platform.open) that writes no run log directory: its
 * finished runs' logs read as empty (200), as they did before a missing directory meant logs removed. A 410 is for
 * logs that existed: an executor that says it makes each run's directory (keepsRunLogs) gets it when one is missing.
 */
import test from 'ava';
import { existsSync } from 'node:fs';
import { Subject, type Observable } from 'rxjs';
import type { Executor, Reattached } from '../lib/executor/executor-port.js';
import type { JobLaunch, JobOutcome } from '../lib/executor/job-launch.js';
import { makeWorkspace, openPlatform, runsFor, startServer, waitForWant, want } from './helpers/jobs-fixture.js';

/** Runs "elsewhere": each run succeeds on the next turn, and nothing is written to the workspace. */
class FarmExecutor implements Executor {
  private readonly subject = new Subject<JobOutcome>();
  readonly outcomes$: Observable<JobOutcome> = this.subject.asObservable();
  private running = 0;

  start(launch: JobLaunch): { pid: number; worker: string } {
    this.running++;
    setImmediate(() => {
      this.running--;
      this.subject.next({ job_run_id: launch.job_run_id, status: 'succeeded' });
    });
    return { pid: 0, worker: 'farm-1' };
  }

  cancel(): void {}

  reattach(): Reattached {
    return 'lost';
  }

  runningCount(): number {
    return this.running;
  }

  async shutdown(): Promise<void> {}
}

/** The same farm, saying (wrongly) that it makes each run's log directory. */
class KeepingFarmExecutor extends FarmExecutor {
  readonly keepsRunLogs = true;
}

const graph = { jobs: [{ label: 'far', outputs: ['far/(?<n>\\d+)'], exec: ['true'] }] };

async function finishedRun(t: Parameters<typeof makeWorkspace>[0], executor: () => Executor) {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph, { executor });
  const w = await want(platform, ['far/1']);
  const s = await waitForWant(platform, w, ['successful']);
  const run = runsFor(s, 'far/1')[0]!;
  t.is(run.status, 'succeeded');
  t.false(existsSync(platform.logPath(run.job_run_id, 'stdout')), 'the executor wrote no log');
  const server = await startServer(t, platform);
  return { run, server };
}

test("a custom executor that writes no log directory: its finished run's logs read as empty (200), whole, tailed and followed", async (t) => {
  const { run, server } = await finishedRun(t, () => new FarmExecutor());
  for (const stream of ['stdout', 'stderr']) {
    for (const query of ['', '?tail=10']) {
      const res = await fetch(`${server.url}/api/job_runs/${run.job_run_id}/logs/${stream}${query}`);
      t.is(res.status, 200, `${stream}${query}`);
      t.is(await res.text(), '', `${stream}${query}`);
    }
  }
  const followed = await fetch(`${server.url}/api/job_runs/${run.job_run_id}/logs/stdout?follow=true`);
  t.is(followed.status, 200);
  const frames = await followed.text();
  t.regex(frames, /^event: end$/m, 'the follow of a finished run with no log ends at once');
  t.notRegex(frames, /^event: log$/m);
});

test('an executor that says it makes each run\'s log directory: a finished run without one lost its logs (410, saying so)', async (t) => {
  const { run, server } = await finishedRun(t, () => new KeepingFarmExecutor());
  const res = await fetch(`${server.url}/api/job_runs/${run.job_run_id}/logs/stdout`);
  t.is(res.status, 410);
  const body = (await res.json()) as { error: string };
  t.regex(body.error, new RegExp(`^The logs of job run ${run.job_run_id} are gone: its log directory .+ is not there`));
});
