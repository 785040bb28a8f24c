/** `platform lineage <ref> [--downstream] [--depth N]`: what a partition's build consumed, or what consumed it, as a tree. */
import type { Command } from 'commander';
import type { LineageNode } from '../../api/partitions-change.js';
import { parsedOption, wholeNumber } from '../option-parsers.js';
import { colors, connect, line, printJson, statusColor, usageExitCode } from '../output.js';
import { treeLines } from '../tree-lines.js';

/** The tree as lines: `├─`/`└─` branches, each node with its build, status and staleness. */
export function lineageTree(root: LineageNode): string[] {
  const label = (n: LineageNode) => {
    const parts = [colors.bold(n.partition_ref), n.build_id ?? colors.dim('(no build)'), statusColor(n.status)];
    if (n.stale) parts.push(colors.yellow('stale'));
    if (n.rebuilt_since) parts.push(colors.magenta('rebuilt since'));
    return parts.join(' ');
  };
  return treeLines(root, label, (n) => n.children, (n) => (n.truncated ? colors.dim('… (deeper or more: raise --depth)') : undefined));
}

export function registerLineage(program: Command): void {
  const cmd = program
    .command('lineage')
    .description("a partition's lineage: the builds its current build consumed (default), or with --downstream what consumed it")
    .argument('<ref>', 'the partition ref')
    .option('--downstream', 'follow what consumed it instead of what it consumed')
    .addOption(parsedOption('--depth <n>', 'levels to show (1-50, default 3)', wholeNumber({ min: 1, max: 50 })))
    .action(async (ref: string, opts: { downstream?: boolean; depth?: number }, self: Command) => {
      const { client, options } = await connect(self);
      const reply = await client.lineage(ref, { direction: opts.downstream ? 'downstream' : 'upstream', ...(opts.depth !== undefined ? { depth: opts.depth } : {}) });
      if (options.json) return printJson(reply);
      line(lineageTree(reply.root).join('\n'));
    });
  usageExitCode(cmd);
}
