/**
 * The daemon around a Platform: listens on 127.0.0.1 only, shuts down by itself after the idle timeout with no
 * request in flight and no job run running, and shuts down gracefully: stop accepting, end SSE streams, let
 * in-flight requests finish (the orchestrator still answers them), then let the current orchestrator step finish
 * and start no other, and close the log.
 */
import { LoginCodes } from './login-codes.js';
import { SseClients } from './sse-clients.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ReplaySubject, type Subscription, distinctUntilChanged, map } from 'rxjs';
import type { Platform } from '../platform.js';
import type { StoreStart } from '../state/state-store.js';
import { stateStartWords } from '../api/state-start.js';
import { createApp } from './app.js';
import { answerClientError } from './client-error.js';
import { withFastCreateWant } from './fast-create-want.js';
import { withFastReads } from './fast-reads.js';
import { idleTimeout } from './idle-timeout.js';
import { serverBusy$ } from './server-busy.js';
import { scheduleLogLine } from './schedule-log.js';
import { serverOptionsProblem } from './server-options-check.js';
import { STOP_GRACE_MS, stoppingConnections } from './stopping-connections.js';

export interface HttpServerOptions {
  port: number;
  /**
   * Shut down (the server, and the platform unless `closePlatform` is false) after this long with no request in
   * flight, no run going and no schedule: the daemon's idle timeout. None when not given: an app that serves its
   * platform over HTTP as an extra does not lose it for want of requests.
   */
  idleTimeoutMs?: number;
  /** Whether closing the server closes the platform too (default true); false: the app keeps it, and closes it. */
  closePlatform?: boolean;
  /** How long in-flight requests get to finish at shutdown before their sockets are closed. */
  drainMs?: number;
  log?: (line: string) => void;
  logError?: (line: string) => void;
  /** Require this token (a non-empty string) of every request but /health (docs/SECURITY.md); none: the open loopback API. */
  token?: string;
}

export interface RunningServer {
  readonly port: number;
  readonly url: string;
  /** Resolves once shutdown is complete, whatever started it. */
  readonly closed: Promise<void>;
  /** `cancelRuns`: kill the running job runs and record them canceled, rather than leave them running. */
  close(options?: { cancelRuns?: boolean }): Promise<void>;
}

export const DEFAULT_IDLE_TIMEOUT_MS = 3 * 3_600_000;

export async function startHttpServer(platform: Platform, options: HttpServerOptions): Promise<RunningServer> {
  const problem = serverOptionsProblem(options);
  if (problem) throw new RangeError(problem);
  const log = options.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const logError = options.logError ?? ((l: string) => process.stderr.write(`${l}\n`));
  // Replays its one value and never completes: an SSE stream opened while the server shuts down (a request on a
  // kept-alive connection) ends at once too, where a completed notifier would be ignored by takeUntil.
  const shutdown$ = new ReplaySubject<void>(1);
  const ctx = {
    platform,
    shutdown$,
    sse: new SseClients(),
    access: { ...(options.token ? { token: options.token } : {}), codes: new LoginCodes() },
  };
  const server: Server = createServer();
  const connections = stoppingConnections(server);
  server.on('request', connections.listener(withFastReads(ctx, withFastCreateWant(ctx, logError, createApp(ctx, logError)))));
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.listen(options.port, '127.0.0.1', () => resolve());
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(`Port ${options.port} on 127.0.0.1 is in use; pick another with --port (0 = any free port).`)
          : err,
      );
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  log(`Listening on ${url}`);
  log(startLine(platform.store.start));

  let closing: Promise<void> | undefined;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  // Subscribed as soon as the port is bound, before any request can be handled, so the timer counts every one.
  const timeoutMs = options.idleTimeoutMs ?? Number.POSITIVE_INFINITY;
  // Said on stderr (server.log) when it changes, so whoever wonders why a daemon never stops finds the reason.
  const scheduled$ = platform.graph$.pipe(
    map((g) => g.graph.schedules.length > 0),
    distinctUntilChanged(),
    map((has, i) => {
      if (has) logError('platform.json has schedules: this daemon makes their wants, so it does not stop when idle');
      else if (i > 0) logError('platform.json has no schedules any more: the idle timeout applies again');
      return has;
    }),
  );
  // Skips, pauses and resumes of schedules, said in server.log as they are recorded.
  const scheduleNews = platform.events$.subscribe((e) => {
    const line = scheduleLogLine(e);
    if (line !== undefined) log(line);
  });
  const idleSub: Subscription | undefined = Number.isFinite(timeoutMs)
    ? serverBusy$(server, platform.state$, scheduled$)
        .pipe(idleTimeout(timeoutMs))
        .subscribe((idleMs) => {
          logError(`Server idle for ${spokenDuration(idleMs)} (timeout ${spokenDuration(timeoutMs)}), shutting down`);
          void close();
        })
    : undefined;
  // A close asked again with `cancelRuns` (`platform stop --cancel-runs` after a plain stop) is taken while the
  // connections drain, and handed on to a platform close under way.
  let cancelAsked = false;
  let platformClosing = false;
  const close = (closeOptions: { cancelRuns?: boolean } = {}): Promise<void> => {
    if (closing && closeOptions.cancelRuns) {
      cancelAsked = true;
      if (platformClosing && options.closePlatform !== false) void platform.close({ cancelRuns: true });
    }
    closing ??= (async () => {
      idleSub?.unsubscribe();
      scheduleNews.unsubscribe();
      shutdown$.next();
      // Requests under way complete; any read from now on is answered 503 (not carried out, run it again); no
      // connection is reset under a request (stopping-connections.ts). drainMs bounds it, as before.
      const drainMs = options.drainMs ?? 30_000;
      await connections.stop(Math.min(STOP_GRACE_MS, drainMs), drainMs);
      platformClosing = true;
      if (options.closePlatform !== false) await platform.close(cancelAsked ? { cancelRuns: true } : closeOptions);
      log('Shutdown complete');
      resolveClosed();
    })();
    return closing;
  };

  return { port, url, closed, close };
}

/** A duration in the unit a person reads it in: a 3 s timeout is not "0.00 hours". */
function spokenDuration(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(2)} hours`;
}

/** How the state was read at start, for server.log: "State: from the snapshot at event 1,204, then 3 events replayed". */
export function startLine(start: StoreStart): string {
  return `State: ${stateStartWords(start)}`;
}
