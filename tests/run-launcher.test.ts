/**
 * The two launchers of supervised runs, side by side on the same runs: the native one (lib/executor/native, built by
 * `npm run build`) and the shell one it replaces where no C compiler was at hand (`PLATFORM_LAUNCHER=shell`). Each
 * must start the job in a session of its own, under a supervisor whose environment names the run (the daemon's
 * identity check after a restart), with the run's files as stdin/stdout/stderr, and report start and exit.
 */
import test, { type ExecutionContext } from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filter, firstValueFrom, take, toArray, timeout } from 'rxjs';
import { RunLauncher, type LauncherNews } from '../lib/executor/run-launcher.js';
import { belongsToRun } from '../lib/executor/job-process-identity.js';
import { SUPERVISOR_SCRIPT } from '../lib/executor/supervised-executor.js';
import { isPidAlive, makeWorkspace, poll } from './helpers/jobs-fixture.js';

const NATIVE = fileURLToPath(new URL('../native/platform-launcher', import.meta.url));
const haveCc = spawnSync('sh', ['-c', 'command -v cc'], { stdio: 'ignore' }).status === 0;

function launcherFor(mode: 'native' | 'shell', workspace: string): RunLauncher {
  const before = process.env.PLATFORM_LAUNCHER;
  process.env.PLATFORM_LAUNCHER = mode === 'shell' ? 'shell' : '';
  try {
    return new RunLauncher(SUPERVISOR_SCRIPT, workspace);
  } finally {
    if (before === undefined) delete process.env.PLATFORM_LAUNCHER;
    else process.env.PLATFORM_LAUNCHER = before;
  }
}

/** A run directory as the supervised executor writes it (run.sh serves the shell launcher). */
function runDir(workspace: string, id: string, argv: string[], stdin = '{"job":"x"}'): string {
  const dir = join(workspace, '.platform', 'logs', id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'stdin.json'), stdin);
  const q = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`;
  writeFileSync(join(dir, 'run.sh'), `cd ${q(workspace)} &&\nexport PLATFORM_JOB_RUN_ID=${q(id)} &&\ndeadline=0 &&\nset -- ${argv.map(q).join(' ')}\n`);
  return dir;
}

const news = (l: RunLauncher, id: string, kind: LauncherNews['kind']) =>
  firstValueFrom(l.news$.pipe(filter((n) => n.kind === kind && 'id' in n && n.id === id), timeout(10_000)));

type Started = Extract<LauncherNews, { kind: 'started' }>;

/**
 * A run `id` of the shell launcher in a workspace of its own: its directory as the executor writes it (`argv` may
 * name files of the workspace), its news of start and exit (the exit status), and `launch` to hand it over.
 */
function shellRun(t: ExecutionContext, id: string, argv: (workspace: string) => string[]) {
  const workspace = makeWorkspace(t);
  const launcher = launcherFor('shell', workspace);
  t.teardown(() => launcher.close());
  const dir = runDir(workspace, id, argv(workspace));
  const started = news(launcher, id, 'started') as Promise<Started>;
  const exited = news(launcher, id, 'exited').then((n) => (n as Extract<LauncherNews, { kind: 'exited' }>).status);
  const launch = (): void => launcher.launch({ id, dir, jobEnv: { PLATFORM_JOB_RUN_ID: id }, cwd: workspace, argv: argv(workspace) }, true);
  return { workspace, dir, started, exited, launch };
}

const touchesMarker = (workspace: string): string[] => ['/bin/sh', '-c', `touch '${join(workspace, 'job-ran')}'`];

test('npm run build compiled the native launcher (a C compiler is on this machine)', (t) => {
  if (!haveCc) return t.pass('no C compiler here: the shell launcher is the one in use, and is tested below');
  t.true(existsSync(NATIVE), `${NATIVE} is missing: npm run build should have compiled lib/executor/native/launcher.c`);
  const workspace = makeWorkspace(t);
  t.is(launcherFor('native', workspace).kind, 'native');
  t.is(launcherFor('shell', workspace).kind, 'shell');
});

for (const mode of ['native', 'shell'] as const) {
  test(`${mode}: a run gets its files, its environment and a session of its own; its exit status is reported and recorded`, async (t) => {
    if (mode === 'native' && !existsSync(NATIVE)) return t.pass('the native launcher is not built here (no C compiler)');
    const workspace = makeWorkspace(t);
    const launcher = launcherFor(mode, workspace);
    t.teardown(() => launcher.close());
    t.is(launcher.kind, mode);
    const id = 'r-1';
    const script = 'cat; echo " $PLATFORM_JOB_RUN_ID $PLATFORM_WORKSPACE $JOB_SETTING $(pwd)"; echo oops >&2; cut -d" " -f6 /proc/$$/stat > sid; exit 3';
    const dir = runDir(workspace, id, ['/bin/sh', '-c', script]);
    const started = news(launcher, id, 'started');
    const exited = news(launcher, id, 'exited');
    launcher.launch({ id, dir, jobEnv: { PLATFORM_JOB_RUN_ID: id, JOB_SETTING: 'on' }, cwd: workspace, argv: ['/bin/sh', '-c', script] }, true);
    const s = (await started) as Extract<LauncherNews, { kind: 'started' }>;
    t.true(s.pid > 0);
    const x = (await exited) as Extract<LauncherNews, { kind: 'exited' }>;
    t.is(x.status, 3);
    t.deepEqual(JSON.parse(readFileSync(join(dir, 'status.json'), 'utf8')), { exit_code: 3, pid: s.pid }, 'the status names the pid the daemon records');
    // The shell launcher's run.sh sets only what it was given; the native one gets the whole environment.
    const expectedSetting = mode === 'native' ? 'on' : '';
    t.is(readFileSync(join(dir, 'stdout.log'), 'utf8'), `{"job":"x"} ${id} ${workspace} ${expectedSetting} ${workspace}\n`);
    t.is(readFileSync(join(dir, 'stderr.log'), 'utf8'), 'oops\n');
    t.is(Number(readFileSync(join(workspace, 'sid'), 'utf8').trim()), s.pid, "the supervisor leads the job's session");
  });

  test(`${mode}: the supervisor's environment names the run while it runs; a job killed by a signal reports 128+n`, async (t) => {
    if (mode === 'native' && !existsSync(NATIVE)) return t.pass('the native launcher is not built here (no C compiler)');
    const workspace = makeWorkspace(t);
    const launcher = launcherFor(mode, workspace);
    t.teardown(() => launcher.close());
    const ids = ['r-7', 'r-8'];
    // The job says it is up: a signal then reaches it, whatever the launcher (a TERM before the fork is the shell
    // supervisor's to pass on: tested apart).
    const argv = ['/bin/sh', '-c', 'echo up > "$PLATFORM_JOB_RUN_ID.up"; exec sleep 30'];
    const dirs = ids.map((id) => runDir(workspace, id, argv));
    const starts = firstValueFrom(launcher.news$.pipe(filter((n) => n.kind === 'started'), take(2), toArray(), timeout(10_000)));
    ids.forEach((id, i) => launcher.launch({ id, dir: dirs[i]!, jobEnv: { PLATFORM_JOB_RUN_ID: id }, cwd: workspace, argv }, true));
    const started = (await starts) as Array<Extract<LauncherNews, { kind: 'started' }>>;
    for (const s of started) {
      // The shell launcher says `s` as it forks: the supervisor's environment is the run's once `env` has exec'd it.
      t.true(await poll(() => belongsToRun(s.pid, workspace, s.id), 5000), `${s.id}'s supervisor is recognised as the run's`);
      t.false(belongsToRun(s.pid, workspace, s.id === 'r-7' ? 'r-8' : 'r-7'));
    }
    const exited = news(launcher, 'r-7', 'exited');
    const r7 = started.find((s) => s.id === 'r-7')!;
    process.kill(-r7.pid, 'SIGKILL');
    t.is(((await exited) as Extract<LauncherNews, { kind: 'exited' }>).status, 128 + 9);
    const r8 = started.find((s) => s.id === 'r-8')!;
    t.true(await poll(() => existsSync(join(workspace, 'r-8.up')), 10_000), "r-8's job started");
    const exited8 = news(launcher, 'r-8', 'exited');
    // SIGTERM to the group: the job dies of it, the supervisor (which catches it) records that.
    process.kill(-r8.pid, 'SIGTERM');
    t.is(((await exited8) as Extract<LauncherNews, { kind: 'exited' }>).status, 128 + 15);
    t.true(await poll(() => existsSync(join(dirs[1]!, 'status.json')), 5000));
    t.deepEqual(JSON.parse(readFileSync(join(dirs[1]!, 'status.json'), 'utf8')), { exit_code: 128 + 15, pid: r8.pid });
  });
}

test('shell: a cancel that comes while the supervisor reads run.sh starts no job; the run ends 143 with its status written', async (t) => {
  const { workspace, dir, started, exited, launch } = shellRun(t, 'r-9', touchesMarker);
  // run.sh held open until the test says go: the cancel lands before the job could be forked, at any machine speed.
  // It says it is being read (a file) first: the supervisor then keeps its traps (set before it reads run.sh); a
  // SIGTERM sent once its environment was the run's could still come before them on a loaded machine.
  const go = join(workspace, 'go');
  const reading = join(workspace, 'reading');
  writeFileSync(join(dir, 'run.sh'), `: > '${reading}'\nwhile [ ! -e '${go}' ]; do :; done\n${readFileSync(join(dir, 'run.sh'), 'utf8')}`);
  launch();
  const s = await started;
  t.true(await poll(() => belongsToRun(s.pid, workspace, 'r-9'), 20_000));
  t.true(await poll(() => existsSync(reading), 20_000), 'the supervisor reads run.sh');
  process.kill(-s.pid, 'SIGTERM');
  await new Promise((r) => setTimeout(r, 100));
  writeFileSync(go, '');
  t.is(await exited, 128 + 15);
  t.deepEqual(JSON.parse(readFileSync(join(dir, 'status.json'), 'utf8')), { exit_code: 128 + 15, pid: s.pid });
  t.false(existsSync(join(workspace, 'job-ran')), 'the canceled run\'s job never started');
});

test('shell: a cancel that comes while the supervisor opens its run directory (before it reads run.sh) still ends the run with its status written', async (t) => {
  const { workspace, dir, started, exited, launch } = shellRun(t, 'r-10', touchesMarker);
  // The supervisor's first program (`env test`, naming its run directory) held a second, on a slow machine's scale:
  // a SIGTERM then must reach a supervisor that already keeps it, not one that dies of it and records nothing.
  const bin = join(workspace, 'slow-bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'env'), `#!/bin/sh\ncase "$1" in test) touch '${join(workspace, 'in-test')}'; sleep 2;; esac\nexec /usr/bin/env "$@"\n`, { mode: 0o755 });
  const path = process.env.PATH;
  process.env.PATH = `${bin}:${path}`;
  try {
    launch();
  } finally {
    process.env.PATH = path;
  }
  const s = await started;
  t.true(await poll(() => existsSync(join(workspace, 'in-test')), 5000), 'the supervisor ran its first program');
  process.kill(-s.pid, 'SIGTERM');
  t.is(await exited, 128 + 15);
  t.deepEqual(JSON.parse(readFileSync(join(dir, 'status.json'), 'utf8')), { exit_code: 128 + 15, pid: s.pid }, 'the supervisor outlived the SIGTERM and recorded it');
  t.false(existsSync(join(workspace, 'job-ran')), "the canceled run's job never started");
});

test("shell: a cancel that comes after the supervisor's last look at it, as the job's files are opened, still reaches the job: the run ends 143 with its status", async (t) => {
  const { workspace, dir, started, exited, launch } = shellRun(t, 'r-11', touchesMarker);
  // The job's stdin a FIFO no one writes: opening it holds the supervisor (or the job's fork) where a cancel once fell
  // between the supervisor's check of its TERM flag and the fork of a job that would then run on.
  rmSync(join(dir, 'stdin.json'));
  t.is(spawnSync('mkfifo', [join(dir, 'stdin.json')]).status, 0);
  launch();
  const s = await started;
  const openingFifo = (): boolean =>
    readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .some((p) => {
        try {
          const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === s.pid && readFileSync(`/proc/${p}/wchan`, 'utf8') === 'wait_for_partner';
        } catch {
          return false;
        }
      });
  t.true(await poll(openingFifo, 10_000), "the run's group opens the job's stdin");
  process.kill(-s.pid, 'SIGTERM');
  t.is(await exited, 128 + 15);
  t.deepEqual(JSON.parse(readFileSync(join(dir, 'status.json'), 'utf8')), { exit_code: 128 + 15, pid: s.pid });
  t.false(existsSync(join(workspace, 'job-ran')), "the canceled run's job never ran");
});

test("shell: a cancel's TERM reaches the job once (the supervisor sends it only a TERM that came before the fork)", async (t) => {
  // Counts the TERMs it gets, and ends when told: a loop of builtins runs its trap at once, so two TERMs are two.
  const { workspace, started, exited, launch } = shellRun(t, 'r-12', () => ['/bin/sh', '-c', 'trap "echo T >> terms" TERM; echo up > up; while [ ! -e stop ]; do :; done']);
  launch();
  const s = await started;
  t.true(await poll(() => existsSync(join(workspace, 'up')), 10_000), 'the job is up');
  process.kill(-s.pid, 'SIGTERM');
  t.true(await poll(() => existsSync(join(workspace, 'terms')), 10_000), 'the job got the TERM');
  // A second one would come at once, from the supervisor's wait broken by its trap.
  await new Promise((r) => setTimeout(r, 500));
  writeFileSync(join(workspace, 'stop'), '');
  await exited;
  t.is(readFileSync(join(workspace, 'terms'), 'utf8'), 'T\n', 'one TERM');
});

test("shell: a job whose environment sets PATH (where no env, mv or sleep is) still runs, with its timeout kept and its status written", async (t) => {
  const { dir, started, exited, launch } = shellRun(t, 'r-13', () => ['/bin/sh', '-c', 'echo "hi $PATH"']);
  writeFileSync(join(dir, 'run.sh'), `${readFileSync(join(dir, 'run.sh'), 'utf8')}export PATH=/opt/venv/bin\nplatform_timeout_seconds=30\n`);
  launch();
  const s = await started;
  t.is(await exited, 0);
  t.is(readFileSync(join(dir, 'stdout.log'), 'utf8'), 'hi /opt/venv/bin\n');
  t.deepEqual(JSON.parse(readFileSync(join(dir, 'status.json'), 'utf8')), { exit_code: 0, pid: s.pid });
  t.false(existsSync(join(dir, 'status.json.tmp')));
});

for (const mode of ['native', 'shell'] as const) {
  test(`${mode}: given the job's config, the launcher makes the run's directory and gives the job its config on stdin (the native one with no stdin.json); where it cannot, the run fails saying why`, async (t) => {
    if (mode === 'native' && !existsSync(NATIVE)) return t.pass('the native launcher is not built here (no C compiler)');
    const workspace = makeWorkspace(t);
    const launcher = launcherFor(mode, workspace);
    t.teardown(() => launcher.close());
    const id = 'r-3';
    const dir = join(workspace, '.platform', 'logs', 'deeper', id);
    // Read twice, as a file: a job may open its stdin again (/dev/stdin), as it could the stdin.json it was before.
    const argv = ['/bin/sh', '-c', 'cat /dev/stdin; cat /dev/stdin'];
    // The shell launcher's supervisor reads run.sh, which the executor writes beside stdin.json; the native one does not.
    if (mode === 'shell') runDir(workspace, id, argv, 'placeholder');
    const exited = news(launcher, id, 'exited');
    launcher.launch({ id, dir: mode === 'shell' ? join(workspace, '.platform', 'logs', id) : dir, jobEnv: { PLATFORM_JOB_RUN_ID: id }, cwd: workspace, argv, stdin: '{"config":1}' }, true);
    t.is(((await exited) as Extract<LauncherNews, { kind: 'exited' }>).status, 0);
    const used = mode === 'shell' ? join(workspace, '.platform', 'logs', id) : dir;
    // The native one hands it over on a memfd: an inode less a run (launcher.c, config_stdin).
    t.is(existsSync(join(used, 'stdin.json')), mode === 'shell');
    t.is(readFileSync(join(used, 'stdout.log'), 'utf8'), '{"config":1}{"config":1}');

    // A directory that cannot be made: under a regular file.
    writeFileSync(join(workspace, 'a-file'), '');
    const bad = 'r-4';
    const failed = news(launcher, bad, 'failed');
    launcher.launch({ id: bad, dir: join(workspace, 'a-file', bad), jobEnv: {}, cwd: workspace, argv, stdin: '{}' }, true);
    const f = (await failed) as Extract<LauncherNews, { kind: 'failed' }>;
    t.true(f.runFiles);
    t.is(f.error.code, 'ENOTDIR');
  });
}

test("native: a run started again in its directory gets its config as stdin.json too, the mark of that hand-over; the first attempt makes none", async (t) => {
  if (!existsSync(NATIVE)) return t.pass('the native launcher is not built here (no C compiler)');
  const workspace = makeWorkspace(t);
  const launcher = launcherFor('native', workspace);
  t.teardown(() => launcher.close());
  const id = 'r-again';
  const dir = join(workspace, '.platform', 'logs', id);
  const attempt = async (config: string) => {
    const exited = news(launcher, id, 'exited');
    launcher.launch({ id, dir, jobEnv: {}, cwd: workspace, argv: ['/bin/sh', '-c', 'cat'], stdin: config }, true);
    t.is(((await exited) as Extract<LauncherNews, { kind: 'exited' }>).status, 0);
  };
  await attempt('{"attempt":1}');
  t.false(existsSync(join(dir, 'stdin.json')), 'a first attempt: its config on a memfd only');
  await attempt('{"attempt":2}');
  t.is(readFileSync(join(dir, 'stdin.json'), 'utf8'), '{"attempt":2}');
  t.is(readFileSync(join(dir, 'stdout.log'), 'utf8'), '{"attempt":1}{"attempt":2}', 'each attempt read its own config');
});

test("native: the job's own variables win over the daemon's (PATH, HOME), and PLATFORM_* are the run's even if the daemon has them", async (t) => {
  if (!existsSync(NATIVE)) return t.pass('the native launcher is not built here (no C compiler)');
  const workspace = makeWorkspace(t);
  const before = process.env.PLATFORM_JOB_RUN_ID;
  // A daemon started from inside a job run inherits that run's variables.
  process.env.PLATFORM_JOB_RUN_ID = 'r-outer';
  t.teardown(() => {
    if (before === undefined) delete process.env.PLATFORM_JOB_RUN_ID;
    else process.env.PLATFORM_JOB_RUN_ID = before;
  });
  const launcher = launcherFor('native', workspace);
  t.teardown(() => launcher.close());
  const id = 'r-5';
  const argv = ['/bin/sh', '-c', 'echo "$HOME|$PLATFORM_JOB_RUN_ID|$(env | grep -c ^PLATFORM_JOB_RUN_ID=)|$SHELL_ONLY"'];
  const dir = runDir(workspace, id, argv);
  const exited = news(launcher, id, 'exited');
  launcher.launch({ id, dir, jobEnv: { HOME: '/job/home', SHELL_ONLY: 'x' }, cwd: workspace, argv }, true);
  t.is(((await exited) as Extract<LauncherNews, { kind: 'exited' }>).status, 0);
  t.is(readFileSync(join(dir, 'stdout.log'), 'utf8'), '/job/home|r-5|1|x\n');
});

test('native: a malformed record ends the launcher\'s news (the daemon sees it gone) but not its supervision: the run before it still gets its status', async (t) => {
  if (!existsSync(NATIVE)) return t.pass('the native launcher is not built here (no C compiler)');
  const workspace = makeWorkspace(t);
  const dir = join(workspace, '.platform', 'logs', 'r-1');
  const launcher = spawn(NATIVE, [workspace], { stdio: ['pipe', 'pipe', 'ignore'] });
  t.teardown(() => void launcher.kill('SIGKILL'));
  let out = '';
  launcher.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
  const ended = once(launcher.stdout!, 'end');
  const exited = once(launcher, 'exit');
  const env = [`PLATFORM_WORKSPACE=${workspace}`, 'PLATFORM_JOB_RUN_ID=r-1'];
  // Runs until the test lets it go (a file), not a fixed 0.5 s that a loaded machine could spend before it looks.
  const go = join(workspace, 'go');
  const argv = ['/bin/sh', '-c', `i=0; while [ ! -e '${go}' ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i + 1)); done`];
  launcher.stdin!.write(['r-1', dir, workspace, '{}', '0', '0', String(env.length), ...env, String(argv.length), ...argv].join('\0') + '\0');
  t.true(await poll(() => /^s r-1 \d+ \d+$/m.test(out), 20_000), 'the good run started');
  const pid = Number(/^s r-1 (\d+) \d+$/m.exec(out)![1]);
  // A count over launcher.c's field table: what no daemon sends, but a bug could.
  launcher.stdin!.write(['r-2', dir, workspace, '{}', '0', '0', '99999'].join('\0') + '\0');
  await ended;
  t.true(isPidAlive(launcher.pid!), 'the launcher lives on while its run does');
  t.true(isPidAlive(pid), 'its run goes on');
  writeFileSync(go, '');
  const [code] = (await exited) as [number | null];
  t.is(code, 0, 'it ended once its last run did');
  t.deepEqual(JSON.parse(readFileSync(join(dir, 'status.json'), 'utf8')), { exit_code: 0, pid });
  t.false(out.includes('r-2'), out);
});

test('native: past its slots the launcher holds runs, oldest first, and starts the next as one of its runs ends; a held run is dropped on cancel, and at the end of its input', async (t) => {
  if (!existsSync(NATIVE)) return t.pass('the native launcher is not built here (no C compiler)');
  const workspace = makeWorkspace(t);
  const launcher = launcherFor('native', workspace);
  t.teardown(() => launcher.close());
  const heard: LauncherNews[] = [];
  launcher.news$.subscribe((n) => heard.push(n));
  const run = (id: string, seconds: string) => {
    const dir = join(workspace, '.platform', 'logs', id);
    // Each job says when it started and ended, by its own clock: the order is theirs, not the news'.
    const argv = ['/bin/sh', '-c', `date +%s%N >> ${join(workspace, 'starts')}.${id}; sleep ${seconds}; date +%s%N >> ${join(workspace, 'ends')}.${id}`];
    launcher.launch({ id, dir, jobEnv: {}, cwd: workspace, argv, stdin: '{}' }, true);
    return dir;
  };
  launcher.setSlots(2);
  const dirs = ['r-1', 'r-2', 'r-3', 'r-4', 'r-5'].map((id, i) => run(id, i < 2 ? '0.3' : '0.2'));
  launcher.cancelHeld('r-4');
  await news(launcher, 'r-4', 'dropped');
  await news(launcher, 'r-5', 'exited');
  const started = heard.flatMap((n) => (n.kind === 'started' ? [n.id] : []));
  t.deepEqual(started, ['r-1', 'r-2', 'r-3', 'r-5'], 'two at once, then in the order given; r-4 never');
  t.true(existsSync(dirs[3]!), "a held run's directory is made when it is handed over");
  t.false(existsSync(join(dirs[3]!, 'status.json')), 'the dropped run never ran');
  const at = (kind: string, id: string) => BigInt(readFileSync(join(workspace, `${kind}.${id}`), 'utf8').trim());
  // Never more than two at once, by the jobs' own clocks: each held run started after a run before it ended.
  t.true(at('starts', 'r-3') >= [at('ends', 'r-1'), at('ends', 'r-2')].reduce((a, b) => (a < b ? a : b)), 'r-3 waited for a slot');
  t.true(at('starts', 'r-5') >= [at('ends', 'r-1'), at('ends', 'r-2')].reduce((a, b) => (a > b ? a : b)), 'r-5 waited for the second slot');
  // A cancel that comes after the run started changes nothing: the daemon kills it by its pid.
  launcher.cancelHeld('r-1');
  // Held at the end of its input (the daemon stopped): never started, for the next daemon to start.
  launcher.setSlots(0);
  const held = run('r-6', '0');
  launcher.close();
  await new Promise((r) => setTimeout(r, 300));
  t.false(existsSync(join(held, 'status.json')), 'a run held when the daemon went away is not started');
  t.false(heard.some((n) => n.kind === 'started' && n.id === 'r-6'));
});
