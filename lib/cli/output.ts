/**
 * What the CLI commands share: the client for the chosen server, JSON and table output, colour only on a TTY,
 * and usage errors (exit 2) through commander.
 */
import { groupDigits } from '../group-digits.js';
import { CONTROL_CHARACTER } from '../control-characters.js';
import { Chalk, supportsColor, type ChalkInstance } from 'chalk';
import { CommanderError, type Command } from 'commander';
import { formatDuration } from '../duration.js';
import { PlatformClient, type ServerTarget } from '../client/platform-client.js';
import { connectServer, type ServerConnection } from '../client/server-connection.js';
import { noTokenMessage } from '../client/server-url-daemon.js';
import { serverLogPath } from '../client/start-daemon.js';
import { globalOptions, type GlobalOptions } from './global-options.js';
import { drawTables, layoutTable, outputWidth } from './table-layout.js';

export const isTty = (stream: NodeJS.WriteStream = process.stdout): boolean => Boolean(stream.isTTY);

/** Colour only on a terminal, and not when the user asked for none (NO_COLOR, TERM=dumb). */
function colorLevel(stream: NodeJS.WriteStream): 0 | 1 | 2 | 3 {
  if (!isTty(stream) || 'NO_COLOR' in process.env || process.env.TERM === 'dumb') return 0;
  return supportsColor && supportsColor.level > 0 ? supportsColor.level : 1;
}

/** Colour for stdout: none (level 0) unless stdout is a terminal. */
export const colors: ChalkInstance = new Chalk({ level: colorLevel(process.stdout) });
/** Colour for stderr, on the same rule. */
export const errColors: ChalkInstance = new Chalk({ level: colorLevel(process.stderr) });

export interface CommandContext {
  client: PlatformClient;
  options: GlobalOptions;
}

export async function connect(cmd: Command): Promise<CommandContext> {
  const options = globalOptions(cmd);
  const conn = await connectServer(options);
  const first = target(conn);
  const hint = options.serverUrl && !first.token ? { unauthorizedMessage: noTokenMessage(conn.url) } : {};
  // A discovered daemon that stopped under a request (`platform stop`, its idle timeout, a crash) did not carry it out:
  // it is sent to the workspace's next daemon, started as any command starts one. A --server-url is only ever that URL.
  const resend = options.serverUrl
    ? {}
    : {
        reconnect: async () => target(await connectServer(options)),
        onResend: (r: { reason: string }) => process.stderr.write(`platform: the workspace server did not carry out the request (${r.reason}); sent it to the next one\n`),
      };
  return { client: new PlatformClient(conn.url, { ...first, ...hint, ...resend }), options };
}

/** Where the CLI's requests go: a discovered daemon is named in errors (with its log) and given its token. */
function target(conn: ServerConnection): ServerTarget {
  const daemon = conn.info && conn.root ? { pid: conn.info.pid, logPath: serverLogPath(conn.root) } : undefined;
  const token = conn.info?.token;
  return { url: conn.url, ...(daemon ? { daemon } : {}), ...(token ? { token } : {}) };
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function line(text = ''): void {
  process.stdout.write(`${text}\n`);
}

/**
 * A table with a header row, fitted to the terminal (laid out by table-layout.ts, drawn by cli-table3); header
 * colour and borders only on a TTY.
 */
export function table(head: string[], rows: Array<Array<string | number | null | undefined>>): string {
  const tty = colors.level > 0;
  const cells = rows.map((row) => row.map((c) => (c === null || c === undefined ? '' : String(c))));
  return drawTables(layoutTable([head.map((h) => (tty ? colors.bold(h) : h)), ...cells], { headRows: 1, width: outputWidth() }), tty);
}

/**
 * Most lines a cell of a detail table shows: past them a record is a wall to scroll through (--json has it all).
 * Not for speed: a cell's lines reach cli-table3 as rows of one line each (table-layout.ts), drawn in linear time.
 */
export const CELL_LINES = 20;
/** What a cell built by hand is cut to, whatever built it. */
const CELL_LINES_MAX = 40;

/** The first CELL_LINES of `lines`, then how many more of `total` there are (`hint`: where to see them). */
export function cellLines(lines: readonly string[], total = lines.length, hint = ''): string {
  const shown = lines.length > CELL_LINES ? lines.slice(0, CELL_LINES) : lines;
  return `${shown.join('\n')}${total > shown.length ? `\n… ${groupDigits(total - shown.length)} more${hint}` : ''}`;
}

/** Key/value rows of one record; empty values are left out. */
export function detailTable(rows: Array<[string, string | number | null | undefined]>): string {
  const tty = colors.level > 0;
  const cells: string[][] = [];
  for (const [k, v] of rows) {
    if (v === null || v === undefined || v === '') continue;
    let text = String(v);
    const lines = text.split('\n');
    if (lines.length > CELL_LINES_MAX) text = cellLines(lines, lines.length, ' lines (--json has them all)');
    cells.push([tty ? colors.bold(k) : k, text]);
  }
  return drawTables(layoutTable(cells, { headRows: 0, width: outputWidth() }), tty);
}

const GOOD = new Set(['successful', 'succeeded', 'live']);
const BAD = new Set(['failed', 'upstream_failed']);
const ACTIVE = new Set(['building', 'upstream_building', 'running', 'queued']);

export function statusColor(status: string, c: ChalkInstance = colors): string {
  if (GOOD.has(status)) return c.green(status);
  if (BAD.has(status)) return c.red(status);
  if (ACTIVE.has(status)) return c.yellow(status);
  if (status === 'canceled' || status === 'dep_missed' || status === 'tainted') return c.magenta(status);
  return status;
}

/** An ISO time as local `YYYY-MM-DD HH:MM:SS`; empty for null. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function duration(ms: number | null | undefined): string {
  return formatDuration(ms);
}

/** At most `max` of `items`, then "+N more" of `total` (a list may hold only the first of them). */
export function listShort(items: readonly string[], max = 3, total = items.length): string {
  const shown = items.length > max ? items.slice(0, max) : items;
  return total > shown.length ? `${shown.join(', ')} +${groupDigits(total - shown.length)} more` : shown.join(', ');
}

/**
 * "showing 1-100 of 250" when a page is not everything; "no wants at offset 5000 (there are 205; ...)" for a page past
 * the end, which a range would misstate ("showing 5000-5000 of 205").
 */
export function pageFooter(page: { data: unknown[]; total: number; offset: number }, noun: string): string | undefined {
  if (page.data.length === 0 && page.total === 0) return `no ${noun}`;
  if (page.data.length === 0) return `no ${noun} at offset ${page.offset} (there ${page.total === 1 ? 'is' : 'are'} ${groupDigits(page.total)}; use a smaller --offset)`;
  if (page.offset === 0 && page.data.length >= page.total) return undefined;
  return colors.dim(`showing ${groupDigits(page.offset + 1)}-${groupDigits(page.offset + page.data.length)} of ${groupDigits(page.total)} ${noun} (use --offset and --limit for more)`);
}

/** An error in how the command was called: printed by commander, exit code 2. */
export function usageError(cmd: Command, message: string): never {
  // Prefixed as commander's own usage errors are ("error: option ..."); --json takes the prefix off again.
  cmd.error(`error: ${message}`, { exitCode: 2, code: 'platform.usage' });
}

/**
 * Commander reports its usage errors (missing argument, unknown option, missing subcommand) with exit code 1;
 * make them 2 on these commands and their subcommands, like other command-line tools.
 */
export function usageExitCode(cmd: Command): Command {
  cmd.exitOverride((err) => {
    if (err.exitCode !== 0 && err.code.startsWith('commander.') && err.code !== 'commander.executeSubCommandAsync') {
      throw new CommanderError(2, err.code, err.message);
    }
    throw err;
  });
  for (const sub of cmd.commands) usageExitCode(sub);
  return cmd;
}

/**
 * How a job run ended, in a few words: the server's reason when it gave one (it already names the exit code
 * or signal), else the exit code or signal; a run that missed its inputs (`dep_missed`), the refs it missed, as the
 * build's table says them (`missing src/a1`).
 */
export function endedHow(r: { status: string; exit_code: number | null; signal: string | null; reason: string | null; missing?: readonly string[] }): string {
  if (r.reason) return r.reason;
  if (r.status === 'dep_missed' && r.missing && r.missing.length > 0) return `missing ${listShort(r.missing, 3)}`;
  if (r.signal) return `killed by ${r.signal}`;
  if (r.status === 'failed' && r.exit_code !== null && r.exit_code >= 0) return `exit code ${r.exit_code}`;
  return '';
}

/**
 * A run with its job, `r-7 (daily)`: a run recorded for a ref no job could be configured for has the label
 * `(unresolved)`, in its parentheses already.
 */
export function runWithJob(r: { job_run_id: string; job_label: string }): string {
  return `${r.job_run_id} ${r.job_label.startsWith('(') ? r.job_label : `(${r.job_label})`}`;
}

/** Arguments as a shell would need them: quoted only when they must be. */
export function shellWords(args: readonly string[] | undefined): string {
  return (args ?? []).map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/**
 * Text from a job (its stderr) quoted in a message, made safe to print: its terminal sequences (colour, a title, a
 * clear screen) dropped, any other control character shown as its picture (ESC as ␛). `platform logs` prints the log
 * as it is; a message quoting it must not drive the terminal.
 */
export function printable(text: string): string {
  return text
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g, '')
    .replace(new RegExp(CONTROL_CHARACTER.source, 'g'), (c) => {
      const code = c.charCodeAt(0);
      return code < 0x20 ? String.fromCharCode(0x2400 + code) : code === 0x7f ? '\u2421' : '\ufffd';
    });
}
