/** One real server for a whole test file (the CLI tests that can share one): opened before, closed after. */
import test from 'ava';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Platform } from '../../lib/platform.js';
import { parseGraph } from '../../lib/graph/parse-graph.js';
import { startHttpServer, type RunningServer } from '../../lib/server/http-server.js';

export interface SharedServer {
  /** The workspace directory. */
  ws(): string;
  url(): string;
  platform(): Platform;
}

export function sharedServer(graph: unknown, prefix: string): SharedServer {
  let ws = '';
  let server: RunningServer | undefined;
  let platform: Platform | undefined;
  test.before(async () => {
    ws = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    mkdirSync(join(ws, '.platform'), { recursive: true });
    platform = await Platform.open(ws, { graph: parseGraph(graph, 'test'), tickMs: 50 });
    server = await startHttpServer(platform, { port: 0, log: () => {}, drainMs: 2_000 });
  });
  test.after.always(async () => {
    await server?.close();
    if (ws) rmSync(ws, { recursive: true, force: true });
  });
  return { ws: () => ws, url: () => server!.url, platform: () => platform! };
}
