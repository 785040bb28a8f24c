/**
 * A run the native launcher starts on its own (held past the cap, started as the run before it ended) and the end of
 * the run before it are recorded with the times they happened, not the time of the step that heard of them: a
 * platform too busy to take a step (its event loop held here) recorded a 0 ms run started after its job had ended
 * (QA, session 36: 440 of 1,000 runs of a backfill read 0 ms). Checked against the jobs' own clocks (held-runs-fixture).
 */
import test from 'ava';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { makeWorkspace, poll, runsFor, waitFor, waitForWant } from './helpers/jobs-fixture.js';
import { handedOver, holdLoopUntil, markedUntilReleased, markWritten, openSupervised, release, spans } from './helpers/held-runs-fixture.js';

const NATIVE = fileURLToPath(new URL('../native/platform-launcher', import.meta.url));
const request = (partitions: string[]) => ({ partitions, comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, priority: 0 });



test('a held run started while the platform could take no step is recorded with its own start and end, as is the end of the run before it', async (t) => {
  if (!existsSync(NATIVE)) return t.pass('the native launcher is not built here (no C compiler): runs are not held');
  const dir = makeWorkspace(t);
  release(dir, 'p_2');
  const platform = await openSupervised(t, dir, { max_concurrent_job_runs: 1, jobs: [{ label: 'p', outputs: ['p/(?<n>\\d+)'], exec: markedUntilReleased() }] });
  const id = (await platform.createWant(request(['p/1', 'p/2']))) as { ok: true; want_id: string };
  await waitFor(platform, (s) => s.job_runs_by_status.running.size === 1, 'p/1 to start');
  t.true(await poll(() => handedOver(dir, platform, ['p/2']), 20_000), 'p/2 was handed to the launcher');
  release(dir, 'p_1');
  // Held until p/2 ran to its end, and 300 ms more: every start and end is heard after it happened.
  holdLoopUntil(() => markWritten(dir, 'p_2.end'), 10_000);
  holdLoopUntil(() => false, 300);
  await waitForWant(platform, id.want_id, ['successful'], 10_000);
  const s = spans(dir);
  const ms = (ns: bigint) => Number(ns / 1_000_000n);
  const [p1, p2] = [runsFor(platform.state(), 'p/1')[0]!, runsFor(platform.state(), 'p/2')[0]!];
  const [, p1End] = s.get('p_1')!;
  const [p2Start, p2End] = s.get('p_2')!;
  // The launcher's clock reads the start as it forks, before the job's shell writes its mark; the end after.
  const slack = 100;
  t.true(Math.abs(p1.ended_at! - ms(p1End)) <= slack, `p/1 ended at ${ms(p1End)} by its clock, recorded ${p1.ended_at}`);
  t.true(p2.started_at! <= ms(p2Start) && ms(p2Start) - p2.started_at! <= slack, `p/2 started at ${ms(p2Start)} by its clock, recorded ${p2.started_at}`);
  t.true(p2.ended_at! >= ms(p2End) && p2.ended_at! - ms(p2End) <= slack, `p/2 ended at ${ms(p2End)} by its clock, recorded ${p2.ended_at}`);
});
