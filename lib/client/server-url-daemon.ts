/**
 * `--server-url` naming the workspace's own daemon: the URL a user copied from `platform status` or server.log. A
 * daemon the CLI started requires its token, which the CLI reads from server.json; without this, the same command
 * that works without `--server-url` got a 401 telling the user that the CLI sends the token for them.
 *
 * The token goes only where the workspace's daemon is: a loopback name at server.json's port, whose pid is alive and
 * is that workspace's `platform serve` (its command line), the trust discovery has before its probe sends the token.
 * And only to 127.0.0.1, the address the daemon binds: `localhost` may resolve to ::1 first, where any local user may
 * listen on the same port number, so it is talked to as 127.0.0.1; `[::1]` is never the daemon.
 */
import { readServerInfo, type ServerInfo } from './server-info.js';
import { fetchStatus, isWorkspaceServe, NotAStatusError, sameDir, TokenRefusedError, type ServerStatus } from './server-probe.js';
import { isPidAlive } from '../system/pid-liveness.js';
import { findWorkspaceRoot } from './workspace.js';
import { resolve } from 'node:path';

const DAEMON_NAMES = new Set(['127.0.0.1', 'localhost']);

/**
 * What a 401 says when `--server-url` found no token to send, in place of the server's words (which tell the user
 * that the CLI sends the token for them: not so here).
 */
export function noTokenMessage(url: string): string {
  return `The server at ${url} requires its token, and --server-url sent none: run the command in the daemon's workspace, or add -C <workspace>, and the CLI sends the token of its .platform/server.json (other clients send \`Authorization: Bearer <token>\` with that token).`;
}

/**
 * The workspace (cwd, or -C) whose running daemon answers at `url`, with its server.json and the URL to send its token
 * to (127.0.0.1 at its port); undefined for any other URL.
 */
export function workspaceDaemonAt(url: string, workspace: string | undefined): { root: string; info: ServerInfo; url: string } | undefined {
  let root: string;
  try {
    root = findWorkspaceRoot(workspace ? resolve(workspace) : process.cwd());
  } catch {
    return undefined; // no workspace here: nothing to send, which is no error with --server-url
  }
  const info = readServerInfo(root);
  if (!info || !sameDir(info.workspace_root, root) || !pointsAt(url, info.port)) return undefined;
  if (!isPidAlive(info.pid) || !isWorkspaceServe(info.pid, root)) return undefined;
  return { root, info, url: `http://127.0.0.1:${info.port}` };
}

/** The server refused `--server-url`'s request for want of a token it did not send: `noTokenMessage`'s words. */
export class NoTokenError extends Error {
  override readonly name = 'NoTokenError';
}

/**
 * `/api/status` of the server `url` (`--server-url`, its trailing slashes taken off by its parser) names: with the token when it is the
 * workspace's own daemon (workspaceDaemonAt), at 127.0.0.1; a 401 is a NoTokenError saying what to do. Anything else
 * (no answer, not a platform server) throws as fetchStatus does.
 */
export async function serverUrlStatus(url: string, workspace: string | undefined): Promise<ServerStatus> {
  const own = workspaceDaemonAt(url, workspace);
  try {
    return await fetchStatus(own?.url ?? url, undefined, own?.info.token);
  } catch (err) {
    if (err instanceof TokenRefusedError) throw new NoTokenError(noTokenMessage(url));
    // No /api/status there, or an answer of another shape: not a platform daemon. A daemon answers other errors too
    // (503 while it stops): those stay what they are.
    if (err instanceof NotAStatusError && (err.status === undefined || err.status === 404)) {
      throw new NotADaemonError(`The server at ${url} is not a platform daemon (${err.message}); check --server-url.`);
    }
    throw err;
  }
}

/** Something answers at the URL, but not as a platform daemon: not "no server" (status's exit 3), an error. */
export class NotADaemonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotADaemonError';
  }
}

function pointsAt(url: string, port: number): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== 'http:' || !DAEMON_NAMES.has(u.hostname.toLowerCase()) || (u.pathname !== '/' && u.pathname !== '')) return false;
  return Number(u.port === '' ? 80 : u.port) === port;
}
