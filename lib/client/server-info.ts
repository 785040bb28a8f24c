/** `.platform/server.json`: how a client finds the workspace's daemon. Written atomically, removed on clean exit. */
import { readFileSync, rmSync } from 'node:fs';
import { dirIdentity } from '../system/dir-identity.js';
import { join } from 'node:path';
import { replaceFile } from './replace-file.js';
import { platformDir } from './workspace.js';

export interface ServerInfo {
  pid: number;
  port: number;
  started_at: string;
  workspace_root: string;
  version: string;
  /** What every request must carry when the daemon requires it (`Authorization: Bearer`); absent from older daemons. */
  token?: string;
  /**
   * Which `.platform` directory it serves (`platformDirId`): a workspace moved (or reached through a link since removed)
   * still has it, where its path changed. Absent from older daemons.
   */
  platform_dir_id?: string;
}

/** The identity of a workspace's `.platform` directory (device and inode), whatever path leads to it; '' when none. */
export function platformDirId(root: string): string {
  return dirIdentity(platformDir(root)) ?? '';
}

export function serverInfoPath(root: string): string {
  return join(platformDir(root), 'server.json');
}

export function writeServerInfo(root: string, info: ServerInfo): void {
  // Only the owner may read it: it holds the daemon's token.
  replaceFile(serverInfoPath(root), `${JSON.stringify(info, null, 2)}\n`);
}

/** undefined when absent or unreadable: a half-written or foreign file is treated as no server. */
export function readServerInfo(root: string): ServerInfo | undefined {
  try {
    const v = JSON.parse(readFileSync(serverInfoPath(root), 'utf8')) as Partial<ServerInfo>;
    if (typeof v.pid !== 'number' || typeof v.port !== 'number' || typeof v.workspace_root !== 'string') return undefined;
    return {
      pid: v.pid,
      port: v.port,
      started_at: String(v.started_at ?? ''),
      workspace_root: v.workspace_root,
      version: String(v.version ?? ''),
      ...(typeof v.token === 'string' && v.token !== '' ? { token: v.token } : {}),
      ...(typeof v.platform_dir_id === 'string' && v.platform_dir_id !== '' ? { platform_dir_id: v.platform_dir_id } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Removes server.json only if it still describes this process: a newer server's file is left alone. */
export function removeServerInfo(root: string, pid: number): void {
  if (readServerInfo(root)?.pid === pid) rmSync(serverInfoPath(root), { force: true });
}
