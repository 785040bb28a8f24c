/**
 * What `Platform.open` refuses of the directory it is given, before it makes anything there: opening a directory
 * makes its `.platform/`, the marker every platform command looks up the tree for, so a directory that is no
 * workspace (a mistyped or parent path) became one silently, and every command below it then took it for its own.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { GRAPH_FILE } from './graph/graph-file.js';

/** The workspace marker (lib/client/workspace.ts's MARKER; not imported from there: the core loads no client). */
const MARKER = '.platform';

/**
 * Why `root` cannot be opened, or undefined. A workspace has a `.platform/` (`platform init` makes one) or a
 * platform.json (its graph: the directory is meant as one); with a graph of its own given (`graphGiven`), any
 * directory becomes one, as asked.
 */
export function workspaceDirProblem(root: string, graphGiven: boolean): string | undefined {
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory()) {
    return `no directory at ${root}: Platform.open takes the workspace's directory (one with platform.json; 'platform init' makes one)`;
  }
  if (graphGiven) return undefined;
  if (statSync(join(root, MARKER), { throwIfNoEntry: false })?.isDirectory()) return undefined;
  if (statSync(join(root, GRAPH_FILE), { throwIfNoEntry: false })) return undefined;
  return (
    `${root} is not a platform workspace: it has neither a ${MARKER}/ directory nor ${GRAPH_FILE}, and nothing was made ` +
    `there. Run 'platform init ${root}' to make it one, or pass PlatformOptions.graph to open it with a graph of your ` +
    `own (opened as it is, it would become a workspace, which every platform command run below it takes for its own)`
  );
}

