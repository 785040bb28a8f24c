/**
 * Which server a command talks to: `--server-url` when given; otherwise the workspace's daemon from
 * `.platform/server.json`. (Auto-start of a missing daemon is added by the discovery work.)
 */
import { resolve } from 'node:path';
import { readServerInfo } from './server-info.js';
import { findWorkspaceRoot } from './workspace.js';

export interface ConnectOptions {
  serverUrl?: string;
  workspace?: string;
  /** Start the daemon when none answers (default true). */
  autoStart?: boolean;
}

export class NoServerError extends Error {
  constructor(readonly url: string, detail: string) {
    super(`No server at ${url}: ${detail}`);
    this.name = 'NoServerError';
  }
}

export async function resolveServerUrl(opts: ConnectOptions): Promise<string> {
  if (opts.serverUrl) return opts.serverUrl.replace(/\/+$/, '');
  const root = opts.workspace ? resolve(opts.workspace) : findWorkspaceRoot(process.cwd());
  const info = readServerInfo(root);
  if (!info) throw new NoServerError(root, "the workspace's daemon is not running; start it with 'platform serve'.");
  return `http://127.0.0.1:${info.port}`;
}
