/** The `platform` command line: one file per command under commands/, registered here. */
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { quietLimitFromEnv } from '../client/http-fetch.js';
import { commandWord } from './entry.js';
import { directory, httpUrl, parsedOption } from './option-parsers.js';
import { globalOptions } from './global-options.js';
import { jsonError } from './json-error.js';
import { usageExitCode } from './output.js';
import { registerServe } from './commands/serve-command.js';
import { registerBuild } from './commands/build-command.js';
import { registerWant } from './commands/want-command.js';
import { registerLogs } from './commands/logs-command.js';
import { registerGraph } from './commands/graph-command.js';
import { registerPartitions } from './commands/partitions-command.js';
import { registerLineage } from './commands/lineage-command.js';
import { registerTaint } from './commands/taint-command.js';
import { registerBackfill } from './commands/backfill-command.js';
import { registerUi } from './commands/ui-command.js';
import { registerSchedules } from './commands/schedules-command.js';
import { registerJobRuns } from './commands/job-runs-command.js';
import { registerEvents } from './commands/events-command.js';
import { registerInit } from './commands/init-command.js';
import { registerStart } from './commands/start-command.js';
import { registerStatus } from './commands/status-command.js';
import { registerStop } from './commands/stop-command.js';
import { registerWorker } from './commands/worker-command.js';
import { registerDoctor } from './commands/doctor-command.js';
import { registerGc } from './commands/gc-command.js';

/**
 * What follows a usage error: where the usage is, not all of it (the whole help of `platform` is 60 lines, under
 * which the error scrolled away).
 */
const USAGE_HINT = "(usage: 'platform --help', or 'platform <command> --help')";

/** `jsonErrors`: a usage error is one JSON line on stderr (`{"error", "exit_code": 2}`), without the hint after it. */
export function buildProgram(options: { jsonErrors?: boolean } = {}): Command {
  const program = new Command('platform');
  // Before the subcommands are made: they take the program's output settings with them.
  if (options.jsonErrors) {
    program.configureOutput({
      writeErr: () => {},
      outputError: (text) => process.stderr.write(`${JSON.stringify({ error: text.replace(/^error: /, '').trim(), exit_code: 2 })}\n`),
    });
  }
  program
    .description('A data build orchestrator: want partitions, get them built, watch it happen.')
    .version(VERSION)
    .addOption(parsedOption('--server-url <url>', 'talk to this server instead of the workspace daemon (its base URL, such as http://127.0.0.1:8080)', httpUrl))
    .addOption(parsedOption('-C, --workspace <dir>', 'the workspace directory (default: nearest with .platform/)', directory))
    .option('--json', 'machine-readable JSON output')
    .showHelpAfterError(!options.jsonErrors && USAGE_HINT)
    .exitOverride();
  registerServe(program);
  registerBuild(program);
  registerWant(program);
  registerLogs(program);
  registerGraph(program);
  registerPartitions(program);
  registerLineage(program);
  registerTaint(program);
  registerBackfill(program);
  registerUi(program);
  registerSchedules(program);
  registerJobRuns(program);
  registerEvents(program);
  registerInit(program);
  registerStart(program);
  registerStatus(program);
  registerStop(program);
  registerWorker(program);
  registerDoctor(program);
  registerGc(program);
  program.hook('preAction', (_root, action) => refuseEmptyArguments(action));
  // Every command's usage errors (an unknown option or command, an extra argument) exit 2, as --json says they do.
  return usageExitCode(program);
}

/**
 * An argument given as '' names nothing: most often a shell variable left unset (`platform want get "$W"`). Sent on,
 * an id made the path of a list (`/api/wants/`), and the command printed other wants and exited 0.
 */
function refuseEmptyArguments(cmd: Command): void {
  cmd.registeredArguments.forEach((arg, i) => {
    const value: unknown = cmd.processedArgs[i];
    if (value === '' || (Array.isArray(value) && value.includes(''))) {
      const example = arg.description.startsWith('e.g.') ? ` (${arg.description})` : '';
      cmd.error(`error: the argument <${arg.name()}> is empty (an unset shell variable?): give one${example}.`, {
        exitCode: 2,
        code: 'platform.emptyArgument',
      });
    }
  });
}

export async function main(argv: string[]): Promise<void> {
  // Checked before anything runs: a bad value would otherwise surface only as a failed request, or a daemon judged absent.
  try {
    quietLimitFromEnv();
  } catch (err) {
    process.stderr.write(`platform: ${(err as Error).message}\n`);
    process.exit(2);
  }
  stopQuietlyWhenOutputCloses(commandWord(argv) === 'serve');
  // Asked for anywhere before `--`: a script that did wants JSON even of a mistake in its own command line.
  const end = argv.indexOf('--');
  const program = buildProgram({ jsonErrors: (end < 0 ? argv : argv.slice(0, end)).includes('--json') });
  let json = false;
  program.hook('preAction', (_root, action) => {
    json = globalOptions(action).json;
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode);
    if (!json) throw err;
    const body = jsonError(err);
    process.stderr.write(`${JSON.stringify(body)}\n`);
    process.exit(body.exit_code);
  }
}

/** 128 + SIGPIPE (13): what a shell reports for a process the signal ended. */
const SIGPIPE_STATUS = 141;

/**
 * A reader that stopped reading (`platform events | head -1`) ends a command quietly, as it ends `cat`: the write
 * failed with EPIPE, which node raised as an unhandled 'error' with a stack. The exit status is the one a process
 * killed by SIGPIPE has (141): under `set -o pipefail` a build cut short does not read as a success. The daemon
 * goes on: its output is a log, and losing the reader of a log is no reason to stop serving.
 */
function stopQuietlyWhenOutputCloses(daemon: boolean): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      if (!daemon) process.exit(SIGPIPE_STATUS);
    });
  }
}
