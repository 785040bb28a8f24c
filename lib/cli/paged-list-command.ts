/** The shape every `... list` command shares: status/limit/offset options, a page, a table or JSON, a footer. */
import type { Command } from 'commander';
import type { Page, PlatformClient } from '../client/platform-client.js';
import { MAX_PAGE, type PageOrder } from '../api/page.js';
import { oneOf, parsedOption, wholeNumber } from './option-parsers.js';
import { connect, line, pageFooter, printJson } from './output.js';

export interface PagedListSpec<T> {
  /** Plural noun for help and the footer: 'wants'. */
  noun: string;
  description: string;
  statuses: readonly string[];
  /** Extra string options: [flag, help, key]. */
  extra?: ReadonlyArray<[string, string, string]>;
  fetch(client: PlatformClient, query: { status?: string; limit?: number; offset?: number; order?: PageOrder; [key: string]: unknown }): Promise<Page<T>>;
  rows(items: T[]): string;
}

export function pagedListCommand<T>(parent: Command, spec: PagedListSpec<T>): Command {
  const cmd = parent.command('list').description(spec.description);
  // Checked here, as --order is: a typo is the command line's mistake (exit 2), not the server's "Query parameter".
  if (spec.statuses.length > 0) {
    cmd.addOption(parsedOption('--status <status>', `only ${spec.noun} in this status (${spec.statuses.join(', ')})`, oneOf(spec.statuses, `the statuses of ${spec.noun}`)));
  }
  for (const [flag, help] of spec.extra ?? []) cmd.option(flag, help);
  return cmd
    .addOption(parsedOption('--limit <n>', 'at most this many (1-1000, default 100)', wholeNumber({ min: 1, max: MAX_PAGE })))
    .addOption(parsedOption('--offset <n>', 'skip this many', wholeNumber()))
    .addOption(parsedOption('--order <order>', 'asc (the list\'s order: oldest first, or by ref for partitions; the default) or desc (reversed)', oneOf(['asc', 'desc'] as const, 'oldest or newest first')))
    .action(async (opts: { status?: string; limit?: number; offset?: number; order?: PageOrder } & Record<string, unknown>, self: Command) => {
      const extra: Record<string, unknown> = {};
      for (const [, , key] of spec.extra ?? []) extra[key] = opts[key];
      const { client, options } = await connect(self);
      const page = await spec.fetch(client, { ...extra, status: opts.status, limit: opts.limit, offset: opts.offset, order: opts.order });
      if (options.json) return printJson(page);
      if (page.data.length > 0) line(spec.rows(page.data));
      const footer = pageFooter(page, spec.noun);
      if (footer) line(footer);
    });
}
