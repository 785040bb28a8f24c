/**
 * A config program may only name refs of its own job: every output of a config it returns becomes a partition its
 * run makes live, so a config listing another job's ref (or a ref no job produces, or one output twice) is refused
 * as the program's failure, naming the ref and its owner, and nothing becomes live. Through a real platform, real
 * job processes and the real CLI.
 */
import test from 'ava';
import { bash, lines, makeWorkspace, openPlatform, runs, startServer, waitFor } from './helpers/jobs-fixture.js';
import { cliAgainst } from './helpers/cli-against.js';

/** Job x's config program: what it returns depends on the ref it is asked for. */
const X_CONFIG = `
case "$1" in
  x/steal) outs='"x/steal","y/stolen"' ;;
  x/orphan) outs='"x/orphan","nobody/owns"' ;;
  x/twice) outs='"x/twice","x/extra","x/extra"' ;;
  *) outs='"'"$1"'","x/also"' ;;
esac
echo '{"configs":[{"outputs":['"$outs"'],"args":["'"$1"'"]}]}'
`;

async function setup(t: Parameters<typeof makeWorkspace>[0]) {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, {
    jobs: [
      { label: 'x', outputs: ['x/(?<k>.+)'], config: bash(X_CONFIG, 'cfg'), exec: bash('echo "$@" >> x-runs.txt') },
      { label: 'y', outputs: ['y/(?<k>.+)'], exec: bash('echo "$@" >> y-runs.txt') },
    ],
  });
  const server = await startServer(t, platform);
  return { dir, platform, cli: cliAgainst(() => server.url) };
}

test("a config listing another job's ref, a ref no job produces, or an output twice fails its run; nothing of it becomes live", async (t) => {
  const { dir, platform, cli } = await setup(t);

  const steal = await cli('build', 'x/steal');
  t.is(steal.code, 1, steal.stdout + steal.stderr);
  t.regex(steal.stdout + steal.stderr, /Config program of job "x" returned a config for "x\/steal" whose outputs include "y\/stolen", which job "x" does not produce: job "y" produces it/);

  const orphan = await cli('build', 'x/orphan');
  t.is(orphan.code, 1, orphan.stdout + orphan.stderr);
  t.regex(orphan.stdout + orphan.stderr, /whose outputs include "nobody\/owns", which job "x" does not produce: no job produces it/);

  const twice = await cli('build', 'x/twice');
  t.is(twice.code, 1, twice.stdout + twice.stderr);
  t.regex(twice.stdout + twice.stderr, /returned a config for "x\/twice" that lists the output "x\/extra" twice/);

  // The RPC that shows configs refuses them the same way.
  const configs = await cli('graph', 'configs', 'x/steal');
  t.is(configs.code, 1, configs.stdout + configs.stderr);
  t.regex(configs.stderr, /"y\/stolen", which job "x" does not produce: job "y" produces it/);

  const state = platform.state();
  for (const ref of ['y/stolen', 'nobody/owns', 'x/extra', 'x/steal', 'x/orphan', 'x/twice']) {
    t.not(state.partitions.get(ref)?.status, 'live', ref);
  }
  t.deepEqual(runs(state, 'x').map((r) => r.status), ['failed', 'failed', 'failed']);
  t.deepEqual(lines(dir, 'x-runs.txt'), [], 'no run of x started');
  const list = await cli('--json', 'partitions', 'list', '--status', 'live');
  t.is(list.code, 0, list.stderr);
  t.is(JSON.parse(list.stdout).total, 0);
});

test('a config listing other refs of its own job still builds them all in one run', async (t) => {
  const { dir, platform, cli } = await setup(t);
  const ok = await cli('build', 'x/fine');
  t.is(ok.code, 0, ok.stdout + ok.stderr);
  const state = await waitFor(platform, (s) => s.partitions.get('x/also')?.status === 'live', 'x/also live');
  t.is(state.partitions.get('x/fine')?.status, 'live');
  t.deepEqual(lines(dir, 'x-runs.txt'), ['x/fine']);
});
