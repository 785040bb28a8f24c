/**
 * A command's error under `--json`, written to stderr as one JSON line, so a script can tell a refusal (the HTTP
 * status the server gave: 400, 404, 409, ...) from a failure without parsing prose. The exit status is the one the
 * text form has.
 */
import type { ClientError } from '../client/platform-client.js';

export interface JsonError {
  error: string;
  /** The HTTP status of the server's refusal; absent when no server answered (none running, a local failure). */
  status?: number;
  want_id?: string;
  /** A PlatformService error's Connect code (`invalid_argument`, ...). */
  code?: string;
  /** The process's exit status. */
  exit_code: number;
}

export function jsonError(err: unknown): JsonError {
  const message = err instanceof Error ? err.message : String(err);
  const exitCode = (err as { exitCode?: unknown } | undefined)?.exitCode;
  const out: JsonError = { error: message, exit_code: typeof exitCode === 'number' ? exitCode : 1 };
  // By name, not instanceof: every command loads this file, and only those that talk to a server load the client.
  if (err instanceof Error && err.name === 'ClientError') {
    const e = err as ClientError;
    out.status = e.status;
    if (e.wantId) out.want_id = e.wantId;
    if (e.code) out.code = e.code;
  }
  return out;
}
