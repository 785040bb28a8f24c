/** `platform lineage <ref> [--downstream] [--depth N]`: what a partition's build consumed, or what consumed it, as a tree. */
import type { Command } from 'commander';
import type { LineageNode } from '../../api/partitions-change.js';
import { parsedOption, wholeNumber } from '../option-parsers.js';
import { colors, connect, line, printJson, statusColor, usageError, usageExitCode } from '../output.js';
import { expandPattern, isPattern, patternSize } from '../../graph/partition-pattern.js';
import { treeLines } from '../tree-lines.js';
import { outputWidth } from '../table-layout.js';
import { groupDigits } from '../../group-digits.js';

/**
 * The tree as lines: `├─`/`└─` branches, each node with its build, status and staleness. What a node's children leave
 * out says why: the depth asked (`raise --depth`) or the answer's cap of nodes (a lineage of that node shows them).
 */
export function lineageTree(root: LineageNode, depth: number, maxNodes: number, direction: 'upstream' | 'downstream', width?: number): string[] {
  const label = (n: LineageNode) => {
    const parts = [colors.bold(n.partition_ref), n.build_id ?? colors.dim('(no build)'), statusColor(n.status)];
    if (n.stale) parts.push(colors.yellow('stale'));
    // Upstream: this input was rebuilt since; downstream: this consumer took a build of its parent before the current one.
    if (n.rebuilt_since) parts.push(colors.magenta(direction === 'upstream' ? 'rebuilt since' : 'took an earlier build'));
    return parts.join(' ');
  };
  const levels = new Map<LineageNode, number>();
  const walk = (n: LineageNode, at: number): void => {
    levels.set(n, at);
    for (const c of n.children) walk(c, at + 1);
  };
  walk(root, 0);
  const noun = (k: number) => (direction === 'upstream' ? (k === 1 ? 'input' : 'inputs') : k === 1 ? 'consumer' : 'consumers');
  const more = (n: LineageNode): string | undefined => {
    if (!n.truncated) return undefined;
    // A reply from a daemon before children_total: no count.
    const left = (n.children_total ?? 0) - n.children.length;
    if ((levels.get(n) ?? 0) >= depth) return colors.dim(`… ${left > 0 ? `${groupDigits(left)} ${noun(left)} ` : ''}deeper (raise --depth)`);
    const of = left > 0 ? `${groupDigits(left)} more of its ${groupDigits(n.children_total)} ${noun(n.children_total)}` : 'more';
    const own = `platform lineage ${n.partition_ref}${direction === 'downstream' ? ' --downstream' : ''} --depth 1`;
    // Of the root, that is the command just run: no use saying it.
    const hint = n === root ? '' : `; its own: ${own}`;
    return colors.dim(`… ${of} (a lineage shows at most ${groupDigits(maxNodes)} partitions${hint})`);
  };
  return treeLines(root, label, (n) => n.children, more, width);
}

export function registerLineage(program: Command): void {
  const cmd = program
    .command('lineage')
    .description("a partition's lineage: the builds its current build consumed (default), or with --downstream what consumed it")
    .argument('<ref>', 'the partition ref')
    .option('--downstream', 'follow what consumed it instead of what it consumed')
    .addOption(parsedOption('--depth <n>', 'levels to show (1-50, default 3)', wholeNumber({ min: 1, max: 50 })))
    .action(async (given: string, opts: { downstream?: boolean; depth?: number }, self: Command) => {
      const ref = oneRef(given, self);
      const { client, options } = await connect(self);
      const reply = await client.lineage(ref, { direction: opts.downstream ? 'downstream' : 'upstream', ...(opts.depth !== undefined ? { depth: opts.depth } : {}) });
      if (options.json) return printJson(reply);
      line(lineageTree(reply.root, reply.depth, reply.max_nodes, reply.direction, outputWidth()).join('\n'));
    });
  usageExitCode(cmd);
}

/**
 * A lineage is one partition's tree: a brace pattern that names more (as build and taint take) is a usage error that
 * says so, not a 404 of the pattern as a ref. One that does not parse as a pattern is taken as the ref it may be.
 */
function oneRef(given: string, cmd: Command): string {
  if (!isPattern(given)) return given;
  let size: number;
  try {
    // Counted, not expanded: a pattern of 100,000 refs was built whole to say it was more than one, and one over the
    // expansion's limit was taken for a ref (a 404).
    size = patternSize(given);
  } catch {
    return given;
  }
  if (size === 1) return expandPattern(given)[0]!;
  const example = size <= EXAMPLE_EXPANSION ? ` (platform lineage ${expandPattern(given)[0]})` : '';
  return usageError(cmd, `lineage shows the tree of one partition; '${given}' is a pattern of ${groupDigits(size)}: name one of them${example}.`);
}

/** Up to how many refs a pattern is expanded for an example of one of them. */
const EXAMPLE_EXPANSION = 1_000;
