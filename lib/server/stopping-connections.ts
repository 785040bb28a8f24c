/**
 * The connections of a server as it stops. A connection the server accepted is never reset under a request it has
 * not answered: a client that sent one could not tell whether it was carried out. Node's own close (and
 * closeIdleConnections) destroys every connection with no request being handled, and that includes one just accepted
 * whose request is in its socket but not read yet, and a kept-alive one the client is sending its next request on.
 *
 * So, once stopping: the listening socket closes once no connection came for a moment (at most the grace after the
 * stop: the kernel resets what is still in its accept queue then), every request read from then on is answered
 * 503 with `stopping: true` (nothing of it was carried out: it may be run again, against a new server), every answer
 * closes its connection, and a connection is ended only when it has been quiet (no request under way) for a grace
 * period: one just accepted has time to be read, a kept-alive one to carry the request a client already sent on it.
 * The requests under way when the stop began complete as before. The server's `drainMs` still bounds it all.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { ErrorBody } from '../api/error-body.js';
import { isServicePath } from './connect/refusal-as-rpc-error.js';
import type { Listener } from './fast-lane.js';

/**
 * How long a connection with no request under way is kept once the server stops. A client that connected (or had its
 * last answer) sends its request within milliseconds on loopback; a loaded machine may take longer to read it.
 */
export const STOP_GRACE_MS = 1_000;
/** How often quiet connections are looked for while stopping. */
const SWEEP_MS = 50;
/** How long no new connection must come before the listening socket closes (at most the grace after the stop). */
const LISTEN_QUIET_MS = 150;

interface Connection {
  /** Requests read and not yet answered (pipelined requests are handled one after another). */
  busy: number;
  /** When it was accepted or last answered. */
  quietSince: number;
}

export interface StoppingConnections {
  /** The listener in front of `inner`: counts each request on its connection; once stopping, answers it 503. */
  listener(inner: Listener): Listener;
  /**
   * Stops: closes the listening socket, ends connections once quiet for `graceMs` (at most `drainMs` later all of
   * them), resolves once every connection is gone.
   */
  stop(graceMs: number, drainMs: number): Promise<void>;
  readonly stopping: boolean;
}

export function stoppingConnections(server: Server, now: () => number = Date.now): StoppingConnections {
  const connections = new Map<Socket, Connection>();
  const answering = new Set<ServerResponse>();
  let stopping = false;
  let lastConnectionAt = 0;
  server.on('connection', (socket: Socket) => {
    lastConnectionAt = now();
    connections.set(socket, { busy: 0, quietSince: now() });
    socket.once('close', () => connections.delete(socket));
  });

  const listener = (inner: Listener): Listener => (req, res) => {
    const conn = connections.get(req.socket);
    if (conn) {
      conn.busy++;
      res.once('close', () => {
        conn.busy--;
        conn.quietSince = now();
      });
    }
    if (stopping) return refuse(req, res);
    answering.add(res);
    res.once('close', () => answering.delete(res));
    inner(req, res);
  };

  const stop = (graceMs: number, drainMs: number): Promise<void> => {
    stopping = true;
    // The answers still to come close their connections: the client opens a new one (to a new server) for its next.
    for (const res of answering) if (!res.headersSent) res.setHeader('Connection', 'close');
    const stoppedAt = now();
    // Counted from the stop at the earliest: a connection quiet for long may be carrying a request right now.
    const sweep = (): void => {
      const t = now();
      for (const [socket, conn] of connections) if (conn.busy === 0 && t - Math.max(conn.quietSince, stoppedAt) >= graceMs) socket.destroy();
    };
    return new Promise<void>((resolve) => {
      let listening = true;
      let looking = false;
      // The listening socket closes once no connection came for a moment (or the grace is over): the kernel resets
      // a connection still in its accept queue when it closes, and a client that connected just before the stop
      // (its handshake done, not yet accepted) could not tell whether its request was carried out. Until then a
      // new connection is accepted, and its requests answered 503 like any other.
      const quiet = (): boolean => {
        const t = now();
        return t - Math.max(stoppedAt, lastConnectionAt) >= LISTEN_QUIET_MS || t - stoppedAt >= graceMs;
      };
      // Looked at after the event loop has looked at its sockets, not in the timer itself: the timer may run long after
      // the loop's last look (a loaded machine, the stop's own work), and what came meanwhile waits unseen, connections
      // in the accept queue (not yet in lastConnectionAt) and requests in their sockets (their connection not yet
      // busy). setImmediate runs after the loop's next poll, which accepts and reads them. (Seen under load: the
      // listening socket closed 264 ms after the stop, the last connection accepted 289 ms before it, and a command's
      // connection, made in between, was reset.)
      const tick = (): void => {
        if (looking) return;
        looking = true;
        setImmediate(() => {
          looking = false;
          sweep();
          if (!listening || !quiet()) return;
          listening = false;
          // The net server's close: stops listening and calls back once every connection is gone, without http's
          // closing of the idle ones (see above).
          NetServer.prototype.close.call(server, () => {
            clearInterval(timer);
            clearTimeout(deadline);
            // http's own close now, for its timers; there is nothing left for it to close.
            server.close();
            resolve();
          });
        });
      };
      const timer = setInterval(tick, SWEEP_MS);
      const deadline = setTimeout(() => server.closeAllConnections(), drainMs);
    });
  };

  return {
    listener,
    stop,
    get stopping() {
      return stopping;
    },
  };
}

/** What a request read while the server stops is answered: not carried out, to be run again. */
export function stoppingMessage(req: IncomingMessage): string {
  const what = `${req.method ?? 'GET'} ${(req.url ?? '/').split('?')[0]}`;
  return (
    `The server (pid ${process.pid}) is stopping (platform stop, a signal, or its idle timeout): ${what} was not carried out, ` +
    'and nothing of it was recorded. Run the command again: the next platform command starts a new server.'
  );
}

function refuse(req: IncomingMessage, res: ServerResponse): void {
  const message = stoppingMessage(req);
  const body = isServicePath(req.url ?? '')
    ? { code: 'unavailable', message }
    : ({ error: message, stopping: true } satisfies ErrorBody);
  const text = JSON.stringify(body);
  // Answered once its body is read: a socket closed with bytes unread is reset, and the reset can take the answer
  // with it before the client reads it.
  req.once('error', () => {});
  req.once('end', () => {
    if (res.destroyed) return;
    res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), Connection: 'close' });
    res.end(text);
  });
  req.resume();
}
