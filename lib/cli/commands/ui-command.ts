/**
 * `platform ui [--no-open]`: the workspace daemon's dashboard (starting the daemon if needed): prints its URL and
 * opens it in a browser where one can be opened (a desktop session); `--no-open` only prints it.
 */
import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import { connect, line, printJson, usageExitCode } from '../output.js';

/** The system's opener, when there is a display to open on. */
function opener(): string[] | undefined {
  if (process.platform === 'darwin') return ['open'];
  if (process.platform === 'win32') return ['cmd', '/c', 'start', ''];
  return process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? ['xdg-open'] : undefined;
}

export function registerUi(program: Command): void {
  const ui = program
    .command('ui')
    .description("print the dashboard's URL (a one-time link where the daemon requires its token) and open it in a browser (starts the workspace daemon if needed)")
    .option('--no-open', 'only print the URL')
    .action(async (opts: { open: boolean }, cmd: Command) => {
      const { client, options } = await connect(cmd);
      await client.health();
      // A daemon that requires its token gives a one-time link that signs the browser in (an older one: none).
      const url = await client.uiLink().then(
        (link) => link.url,
        () => `${client.baseUrl}/`,
      );
      if (options.json) printJson({ url });
      else line(url);
      const open = opts.open ? opener() : undefined;
      if (!open) {
        if (opts.open && !options.json) process.stderr.write('platform: no browser to open here (no display); open the URL above.\n');
        return;
      }
      const [program_, ...args] = open;
      const child = spawn(program_!, [...args, url], { stdio: 'ignore', detached: true });
      child.on('error', () => process.stderr.write(`platform: could not open a browser (${program_}); open the URL above.\n`));
      child.unref();
    });
  usageExitCode(ui);
}
