/** Options every command shares, read from the root program. */
import type { Command } from 'commander';

export interface GlobalOptions {
  serverUrl?: string;
  /** -C / --workspace */
  workspace?: string;
  json: boolean;
}

export function globalOptions(cmd: Command): GlobalOptions {
  let root = cmd;
  while (root.parent) root = root.parent;
  const o = root.opts<{ serverUrl?: string; workspace?: string; json?: boolean }>();
  const local = cmd.opts<{ json?: boolean }>();
  return {
    ...(o.serverUrl ? { serverUrl: o.serverUrl } : {}),
    // Not a truthiness test: '' is refused where -C is parsed (option-parsers.ts), never taken for "not given".
    ...(o.workspace !== undefined ? { workspace: o.workspace } : {}),
    json: Boolean(o.json || local.json),
  };
}
