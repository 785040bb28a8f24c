/**
 * `platform build <ref...>`: creates a want and, unless `--detach`, waits for it like a build tool (see
 * follow-want.ts): live progress, a summary table; exit 0 when the want is successful, 1 when it is not, 130 on
 * Ctrl-C (the want keeps building unless `--cancel-on-interrupt`; `platform want wait <want_id>` resumes waiting).
 */
import { Option, type Command } from 'commander';
import { fromEvent } from 'rxjs';
import { followWant } from '../follow-want.js';
import { settleFollow } from '../settle-follow.js';
import { refsOf } from '../pattern-args.js';
import { priorityOption, textOption } from '../request-options.js';
import { connect, errColors, line, printJson, usageExitCode } from '../output.js';

interface BuildOptions {
  comment?: string;
  priority?: number;
  stale?: boolean;
  force?: boolean;
  detach?: boolean;
  cancelOnInterrupt?: boolean;
}

async function runBuild(patterns: string[], opts: BuildOptions, cmd: Command): Promise<void> {
  const refs = refsOf(patterns, cmd, 'a want');
  const ctx = await connect(cmd);
  const { client, options } = ctx;
  const startedAt = Date.now();
  // The latest event id before the want exists: following from it misses nothing the want causes.
  const { latest_id: after } = await client.listEvents({ limit: 1 });
  const rebuild = opts.force ? 'all' : opts.stale ? 'stale' : undefined;
  const reply = await client.createWant({
    partitions: refs,
    ...(opts.comment !== undefined ? { comment: opts.comment } : {}),
    ...(rebuild ? { rebuild } : {}),
    ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
  });
  const rootId = reply.want_id;

  if (opts.detach) {
    if (options.json) return printJson(reply);
    line(rootId);
    if (process.stderr.isTTY) {
      process.stderr.write(
        errColors.dim(
          `want ${rootId} is ${reply.want.status}; wait for it with 'platform want wait ${rootId}', stop it with 'platform want cancel ${rootId}'\n`,
        ),
      );
    }
    return;
  }
  const follow = { want: reply.want, derived: [], after, created: true };
  // Ctrl-C from the moment the want exists is ours: it must be reported (or the want canceled).
  const result = await followWant(ctx, follow, startedAt, fromEvent(process, 'SIGINT'));
  const code = await settleFollow(client, rootId, result, opts.cancelOnInterrupt === true);
  if (code !== 0) process.exit(code);
}

export function registerBuild(program: Command): void {
  const build = program
    .command('build')
    .description('want partitions built and wait for them, showing progress (exit 0 when built)')
    .argument('<ref...>', "partition refs, or brace patterns: 'daily/revenue/date={2026-01-01..2026-01-31}', 'h={00..23}', '{a,b}'")
    .addOption(textOption('--comment <text>', 'why the partitions are wanted'))
    .addOption(priorityOption())
    .addOption(new Option('--stale', 'also rebuild what is stale or tainted in their inputs, inputs first').conflicts('force'))
    .option('--force', 'rebuild them and everything they need, even what is up to date')
    .option('--detach', 'print the want id and return once the want is accepted')
    .option('--cancel-on-interrupt', 'on Ctrl-C cancel the want (default: it keeps building)')
    .action(async (refs: string[], opts: BuildOptions, cmd: Command) => runBuild(refs, opts, cmd));
  usageExitCode(build);
}
