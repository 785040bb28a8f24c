/**
 * `platform init [dir]`: makes a directory a workspace. Creates `.platform/` (the marker and the daemon's state)
 * with a `.gitignore` of `*`, and a starter `platform.json` when there is none. Idempotent: what exists is left
 * as is, and the output says what was created and what was already there.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { GRAPH_FILE } from '../../graph/graph-file.js';
import { MARKER, findWorkspaceRoot } from '../../client/workspace.js';
import { globalOptions } from '../global-options.js';
import { errorMessage } from '../../errors.js';

/**
 * Two declarative jobs: `greeting` writes data/greeting/<date>.txt, `loud_greeting` needs it (MATERIALIZE) and
 * writes an upper-cased copy. `platform build loud_greeting/date=2026-01-05` builds both.
 */
export const STARTER_GRAPH = {
  jobs: [
    {
      label: 'greeting',
      outputs: ['greeting/date=(?<date>\\d{4}-\\d{2}-\\d{2})'],
      exec: ['sh', '-c', 'mkdir -p data/greeting && echo "hello, world of $DATE" > "data/greeting/$DATE.txt"'],
      env: { DATE: '${date}' },
    },
    {
      label: 'loud_greeting',
      outputs: ['loud_greeting/date=(?<date>\\d{4}-\\d{2}-\\d{2})'],
      inputs: [{ partition_ref: 'greeting/date=${date}', dep_type: 'MATERIALIZE' }],
      exec: ['sh', '-c', 'mkdir -p data/loud_greeting && tr a-z A-Z < "data/greeting/$DATE.txt" > "data/loud_greeting/$DATE.txt"'],
      env: { DATE: '${date}' },
    },
  ],
};

export interface InitResult {
  workspace_root: string;
  created: string[];
  existing: string[];
  /** A problem with an existing platform.json, if any. */
  graph_error?: string;
}

export async function initWorkspace(root: string): Promise<InitResult> {
  const created: string[] = [];
  const existing: string[] = [];
  mkdirSync(root, { recursive: true });
  const dir = join(root, MARKER);
  if (existsSync(dir)) existing.push(`${MARKER}/`);
  else {
    // Only the owner may look inside: the daemon's token, its log and the job logs live here.
    mkdirSync(dir, { mode: 0o700 });
    created.push(`${MARKER}/`);
  }
  const gitignore = join(dir, '.gitignore');
  if (existsSync(gitignore)) existing.push(`${MARKER}/.gitignore`);
  else {
    writeFileSync(gitignore, '*\n');
    created.push(`${MARKER}/.gitignore`);
  }
  const graph = join(root, GRAPH_FILE);
  let graph_error: string | undefined;
  if (existsSync(graph)) {
    existing.push(GRAPH_FILE);
    // Loaded here: the graph's parser (and the schedules' cron and time-zone packages) is most of what a command
    // would otherwise load and never use. Outside the try: a failed load is not a fault of platform.json.
    const { parseGraphText } = await import('../../graph/load-graph.js');
    try {
      parseGraphText(readFileSync(graph, 'utf8'), graph);
    } catch (err) {
      graph_error = errorMessage(err);
    }
  } else {
    writeFileSync(graph, `${JSON.stringify(STARTER_GRAPH, null, 2)}\n`, { flag: 'wx' });
    created.push(GRAPH_FILE);
  }
  return { workspace_root: root, created, existing, ...(graph_error ? { graph_error } : {}) };
}

/** The workspace above `dir` that a new one at `dir` would shadow, if any. */
function enclosingWorkspace(dir: string): string | undefined {
  // From the nearest directory that exists: `init a/b/c` makes a and b too.
  let from = resolve(dir, '..');
  while (!existsSync(from) && dirname(from) !== from) from = dirname(from);
  try {
    const above = findWorkspaceRoot(from);
    return above === dir ? undefined : above;
  } catch {
    return undefined;
  }
}

export function registerInit(program: Command): void {
  program
    .command('init')
    .description('make a directory (default: the current one, or -C) a platform workspace: .platform/ and a starter platform.json')
    .argument('[dir]', 'the directory to initialize')
    .action(async (dir: string | undefined, _opts: unknown, cmd: Command) => {
      const g = globalOptions(cmd);
      const root = resolve(g.workspace ?? process.cwd(), dir ?? '.');
      const hadMarker = existsSync(join(root, MARKER));
      const outer = hadMarker ? undefined : enclosingWorkspace(root);
      const result = await initWorkspace(root);
      if (g.json) {
        process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
        return;
      }
      const out: string[] = [];
      if (result.created.length === 0) out.push(`Already a platform workspace: ${root} (nothing to do).`);
      else out.push(`Initialized platform workspace in ${root}`);
      for (const c of result.created) {
        const what =
          c === GRAPH_FILE
            ? 'the job graph: a starter with two jobs, greeting and loud_greeting, writing files under data/'
            : c === `${MARKER}/`
              ? "daemon state: event log, job logs, server.json"
              : 'keeps .platform/ out of git';
        out.push(`  created  ${c}  (${what})`);
      }
      for (const e of result.existing) out.push(`  exists   ${e}  (left as is)`);
      if (result.graph_error) out.push(`Warning: ${result.graph_error}`);
      if (outer) out.push(`Note: this workspace is inside the workspace ${outer}; commands run under ${relative(outer, root) || '.'} now use the new one.`);
      if (result.created.includes(GRAPH_FILE)) {
        // Commands find the workspace from where they run: one made elsewhere is entered first.
        const there = relative(process.cwd(), root);
        const enter = there === '' ? '' : `cd ${/^[\w./-]+$/.test(there) ? there : JSON.stringify(there)} && `;
        out.push('', `Next: ${enter}platform build loud_greeting/date=2026-01-05   (builds greeting first, then loud_greeting)`);
      }
      process.stdout.write(`${out.join('\n')}\n`);
    });
}
