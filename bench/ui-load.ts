/**
 * The dashboard at scale, in Debian's Chromium: a workspace with 100,000 wants (20,000 with BENCH_QUICK; BENCH_UI_WANTS), written straight
 * to the event log and replayed by the daemon (which then records them failed: no job makes their refs). Measured,
 * once that settled: from navigation to the first rows of the wants page, a
 * jump to the middle of the list, and the longest gap between animation frames while 1,000 events a second
 * arrive for three seconds (updates are batched per frame, so the page must not freeze).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { EventPayload } from '../lib/events/build-event.js';
import { EventLog } from '../lib/events/event-log.js';
import { parseGraph } from '../lib/graph/parse-graph.js';
import { Platform } from '../lib/platform.js';
import { startHttpServer } from '../lib/server/http-server.js';

export interface UiFigures {
  wants: number;
  firstRowsMs: number;
  jumpMs: number;
  maxFrameGapMs: number;
  eventsPerSecond: number;
}

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));

export function canRunUiBench(): boolean {
  return CHROMIUM !== undefined;
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

function want(i: number): EventPayload {
  const id = `w-${i}`;
  return {
    type: 'want_created',
    want_created: {
      want_id: id, partitions: [`day/${i}`], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0, source: 'user',
      parent_want_id: '', root_want_id: id, rebuild: 'missing', priority: 0, backfill_id: '', max_concurrent_job_runs: 0, pattern: '', schedule_tick: 0,
    },
  };
}

export async function uiBench(root: string): Promise<UiFigures> {
  const n = Number(process.env.BENCH_UI_WANTS ?? (process.env.BENCH_QUICK === '1' ? 20_000 : 100_000));
  const dir = join(root, 'ui');
  mkdirSync(join(dir, '.platform'), { recursive: true });
  const log = await EventLog.open(join(dir, '.platform', 'bel'));
  for (let from = 1; from <= n; from += 10_000) {
    await log.append(Array.from({ length: Math.min(10_000, n - from + 1) }, (_, k) => want(from + k)), Date.now());
  }
  await log.close();
  // No job produces these refs, and a tick an hour: the wants stay idle, the page shows the log as it is.
  const platform = await Platform.open(dir, { graph: parseGraph({ jobs: [] }, 'bench'), tickMs: 3_600_000 });
  const server = await startHttpServer(platform, { port: 0, log: () => {} });
  // No job makes these refs: the start-up pass over the active wants records each one failed, a slice a step, and
  // its events stream to the page. Measured is the dashboard over the settled log, so the pass ends first.
  for (let last = -1; platform.state().last_event_id !== last; ) {
    last = platform.state().last_event_id;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  const browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    let t0 = process.hrtime.bigint();
    await page.goto(`${server.url}/wants`);
    await page.locator('[data-want]').first().waitFor();
    const firstRowsMs = ms(t0);
    t0 = process.hrtime.bigint();
    await page.locator('.vbody').evaluate((el, rows) => (el.scrollTop = rows * 36), Math.floor(n / 2));
    await page.locator(`[data-want="w-${Math.ceil(n / 2)}"]`).waitFor();
    const jumpMs = ms(t0);
    await page.evaluate(() => {
      // Runs in the page (the bench's tsconfig has no DOM types).
      const w = globalThis as unknown as { maxGap: number; requestAnimationFrame(cb: (now: number) => void): number };
      w.maxGap = 0;
      let last = performance.now();
      const tick = (now: number) => {
        w.maxGap = Math.max(w.maxGap, now - last);
        last = now;
        w.requestAnimationFrame(tick);
      };
      w.requestAnimationFrame(tick);
    });
    // 1,000 events a second for three seconds: cancels of the idle wants, 100 every 100 ms.
    const burstStart = process.hrtime.bigint();
    let sent = 0;
    for (let round = 0; round < 30; round++) {
      const start = process.hrtime.bigint();
      await Promise.all(Array.from({ length: 100 }, () => platform.cancelWant(`w-${n - sent++}`, 'bench')));
      const left = 100 - ms(start);
      if (left > 0) await new Promise((r) => setTimeout(r, left));
    }
    const eventsPerSecond = sent / (ms(burstStart) / 1000);
    await new Promise((r) => setTimeout(r, 300));
    const maxFrameGapMs = await page.evaluate(() => (globalThis as unknown as { maxGap: number }).maxGap);
    return { wants: n, firstRowsMs, jumpMs, maxFrameGapMs, eventsPerSecond };
  } finally {
    await browser.close();
    await server.close();
  }
}
