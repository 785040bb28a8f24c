/** `platform graph analyze|configs <ref...>`: the PlatformService RPCs (Connect protocol, JSON). */
import type { Command } from 'commander';
import type { JobConfigJson, JobGraphJson, TaskJson } from '../../client/platform-client.js';
import { refsOf } from '../pattern-args.js';
import { cellLines, colors, connect, line, printJson, shellWords, table, usageExitCode } from '../output.js';

const depType = (d: { depType?: string }) => d.depType ?? 'QUERY';

/**
 * The job graph as a tree from the requested outputs down through their inputs: each ref with the job that
 * builds it; MATERIALIZE inputs expand below it, QUERY inputs are listed but not expanded. A ref reached a
 * second time is shown once more without its subtree.
 */
export function graphTree(graph: JobGraphJson): string[] {
  const nodes = graph.nodes ?? [];
  const producer = new Map<string, TaskJson>();
  for (const n of nodes) for (const ref of n.config?.outputs ?? []) if (!producer.has(ref)) producer.set(ref, n);
  const out: string[] = [];
  const shown = new Set<string>();
  const visit = (ref: string, prefix: string, last: boolean, root: boolean, query: boolean, path: Set<string>) => {
    const node = producer.get(ref);
    const branch = root ? '' : last ? '└── ' : '├── ';
    const label = node ? colors.cyan(node.jobLabel ?? '?') : colors.dim(query ? '(not built: query)' : '(no job in graph)');
    const again = shown.has(ref) && node !== undefined;
    const marks = [query ? colors.dim(' [query]') : '', again ? colors.dim(' (see above)') : '', path.has(ref) ? colors.red(' (cycle)') : ''].join('');
    out.push(`${prefix}${branch}${ref}  ${colors.dim('←')} ${label}${marks}`);
    if (!node || again || query || path.has(ref)) return;
    shown.add(ref);
    const inputs = node.config?.inputs ?? [];
    const childPrefix = root ? prefix : prefix + (last ? '    ' : '│   ');
    const next = new Set(path).add(ref);
    inputs.forEach((dep, i) =>
      visit(dep.partitionRef ?? '', childPrefix, i === inputs.length - 1, false, depType(dep) !== 'MATERIALIZE', next),
    );
  };
  for (const ref of graph.outputs ?? []) visit(ref, '', true, true, false, new Set());
  return out;
}

export function graphTable(graph: JobGraphJson): string {
  return table(
    ['Job', 'Outputs', 'Inputs', 'Args'],
    (graph.nodes ?? []).map((n) => [
      n.jobLabel ?? '',
      cellLines(n.config?.outputs ?? []),
      cellLines((n.config?.inputs ?? []).map((d) => `${d.partitionRef ?? ''} (${depType(d)})`)),
      shellWords(n.config?.args),
    ]),
  );
}

export function configsTable(configs: JobConfigJson[]): string {
  return table(
    ['Outputs', 'Inputs', 'Args', 'Env'],
    configs.map((c) => [
      cellLines(c.outputs ?? []),
      cellLines((c.inputs ?? []).map((d) => `${d.partitionRef ?? ''} (${depType(d)})`)),
      shellWords(c.args),
      Object.entries(c.env ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    ]),
  );
}

export function registerGraph(program: Command): void {
  const graph = program.command('graph').description("the job graph, as the server's PlatformService resolves it");
  graph
    .command('analyze')
    .description('the jobs needed to build these partitions, with their inputs (a tree, or --table)')
    .argument('<ref...>', 'partition refs or brace patterns, as build takes them')
    .option('--table', 'one row per job instead of a tree')
    .action(async (patterns: string[], opts: { table?: boolean }, cmd: Command) => {
      const refs = refsOf(patterns, cmd);
      const { client, options } = await connect(cmd);
      const res = await client.analyzeGraph(refs);
      if (options.json) return printJson(res);
      const g = res.graph ?? {};
      if (opts.table) line(graphTable(g));
      else for (const l of graphTree(g)) line(l);
      const n = (g.nodes ?? []).length;
      // The graph, not a plan: what is built already is in it too (partitions lookup says which are).
      line(colors.dim(`${n} job${n === 1 ? '' : 's'} in the graph of ${refs.length} ref${refs.length === 1 ? '' : 's'}, built or not (which are: platform partitions lookup <ref...>)`));
    });
  graph
    .command('configs')
    .description('the job configurations (outputs, inputs, args, env) for these partitions')
    .argument('<ref...>', 'partition refs or brace patterns, as build takes them')
    .action(async (patterns: string[], _opts: unknown, cmd: Command) => {
      const refs = refsOf(patterns, cmd);
      const { client, options } = await connect(cmd);
      const res = await client.getJobConfigs(refs);
      if (options.json) return printJson(res);
      line(configsTable(res.configs ?? []));
    });
  usageExitCode(graph);
}
