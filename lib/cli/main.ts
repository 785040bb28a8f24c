/** The `platform` command line: one file per command under commands/, registered here. */
import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { registerServe } from './commands/serve-command.js';

export function buildProgram(): Command {
  const program = new Command('platform')
    .description('A data build orchestrator: want partitions, get them built, watch it happen.')
    .version(VERSION)
    .option('--server-url <url>', 'talk to this server instead of the workspace daemon')
    .option('-C, --workspace <dir>', 'the workspace directory (default: nearest with .platform/)')
    .option('--json', 'machine-readable JSON output')
    .showHelpAfterError()
    .exitOverride();
  registerServe(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) process.exit(err.exitCode);
    throw err;
  }
}
