/**
 * A command whose reader stops reading (`platform events --follow | head -1`) ends quietly with the status of a
 * process SIGPIPE ended (141), as `cat` does: its next write fails with EPIPE, which node raised as an unhandled
 * 'error' with a stack.
 */
import test from 'ava';
import { REPO_ROOT, runCli, startServer } from './helpers/server-fixture.js';

test('a command whose output is closed by its reader ends quietly, exit status 141 as SIGPIPE gives, no stack', async (t) => {
  const f = await startServer(t, { graph: { jobs: [{ label: 'a', outputs: ['a/(?<n>\\d+)'], exec: ['true'] }] } });
  await f.postWant({ partitions: ['a/1'] });
  const cli = runCli(t, ['--server-url', f.url, 'events', '--follow'], REPO_ROOT);
  await cli.waitForStdout(/want_created/);
  // The reader goes away; the events that follow are written to nobody.
  cli.child.stdout!.destroy();
  for (let i = 2; i <= 20; i++) await f.postWant({ partitions: [`a/${i}`] });
  const { code } = await cli.exited;
  t.is(code, 141, cli.stderr());
  t.notRegex(cli.stderr(), /EPIPE|Unhandled|at /);
});
