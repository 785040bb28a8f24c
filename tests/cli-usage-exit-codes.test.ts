/**
 * A usage error exits 2 on every command, as README's CLI section and the `--json` error line (`"exit_code": 2`)
 * say: an unknown option or command, an extra argument, a missing required option; and a number past the limit
 * a command's help gives (`--limit` 1-1000, `-n` 1-10000) is refused by the CLI, naming its option, rather than
 * sent for the server to refuse as a query parameter the user never typed. The real CLI against the real server.
 */
import test from 'ava';
import { runCli, startServer } from './helpers/server-fixture.js';

async function cli(t: Parameters<typeof startServer>[0], url: string, cwd: string, ...args: string[]) {
  const p = runCli(t, ['--server-url', url, ...args], cwd);
  const { code } = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr() };
}

test('usage errors exit 2 on every command, and the --json error line says the same exit code', async (t) => {
  const f = await startServer(t);
  const cases: string[][] = [
    ['gc', '--bogus'],
    ['status', 'extra'],
    ['stop', '--bogus'],
    ['doctor', '--bogus'],
    ['init', '--bogus'],
    ['worker'],
    ['nosuchcommand'],
  ];
  for (const args of cases) {
    const plain = await cli(t, f.url, f.dir, ...args);
    t.is(plain.code, 2, `${args.join(' ')}: ${plain.stderr}`);
    const json = await cli(t, f.url, f.dir, '--json', ...args);
    t.is(json.code, 2, args.join(' '));
    const line = JSON.parse(json.stderr.trim().split('\n').at(-1)!) as { exit_code: number };
    t.is(line.exit_code, json.code!, `${args.join(' ')}: the JSON line's exit_code is the exit status`);
  }
});

test('a --server-url with a path (the API\'s /api) is a usage error naming it, not a request to /api/api/... or a 401 about the token', async (t) => {
  const f = await startServer(t);
  const r = await cli(t, `${f.url}/api`, f.dir, 'want', 'list');
  t.is(r.code, 2, r.stderr);
  t.regex(r.stderr, new RegExp(`--server-url must be the daemon's base URL, such as http://127\\.0\\.0\\.1:8080 \\(no path\\); got '${f.url.replace(/[.]/g, '\\.')}/api'\\.`));
  t.notRegex(r.stderr, /No route|token/);
  const json = await cli(t, `${f.url}/api`, f.dir, '--json', 'want', 'list');
  t.is(json.code, 2);
  t.like(JSON.parse(json.stderr.trim().split('\n').at(-1)!), { exit_code: 2 });
});

test('an unknown command says so, what it may have meant and where the usage is, not the whole help', async (t) => {
  const f = await startServer(t);
  const r = await cli(t, f.url, f.dir, 'wnat', 'list');
  t.is(r.code, 2);
  t.regex(r.stderr, /unknown command 'wnat'/);
  t.regex(r.stderr, /Did you mean want\?/);
  t.regex(r.stderr, /platform --help/);
  t.notRegex(r.stderr, /Options:/, 'the whole help is not printed under the error');
});

test("a run's log asked for under job-runs (as job-runs get) is a usage error that says where it is: platform logs", async (t) => {
  const f = await startServer(t);
  for (const word of ['logs', 'log']) {
    const r = await cli(t, f.url, f.dir, 'job-runs', word, 'r-4', '-f');
    t.is(r.code, 2, r.stderr);
    t.regex(r.stderr, /a run's log is not under job-runs: it is 'platform logs r-4 -f'/);
  }
  const json = await cli(t, f.url, f.dir, '--json', 'job-runs', 'logs');
  t.like(JSON.parse(json.stderr.trim().split('\n').at(-1)!), { exit_code: 2, error: "a run's log is not under job-runs: it is 'platform logs <job_run_id>' (-f to follow, --stderr for stderr)." });
  const help = await cli(t, f.url, f.dir, 'job-runs', '--help');
  t.notRegex(help.stdout, /\blogs?\b.*\n/, 'not listed as a command of its own');
});

test("a worker name the log gives another meaning ('local', 'redis:...') or an empty one is a usage error: its runs would be taken for this machine's or a queue's", async (t) => {
  const f = await startServer(t);
  for (const [name, message] of [
    ['local', /--name 'local' is taken: runs record 'local' for this machine's own and 'redis:<queue>' for those waiting in a queue; give another name/],
    ['redis:platform-runs', /--name 'redis:platform-runs' is taken/],
    [' ', /--name is empty/],
  ] as const) {
    const r = await cli(t, f.url, f.dir, 'worker', '--redis', 'redis://127.0.0.1:1', '--name', name);
    t.is(r.code, 2, r.stderr);
    t.regex(r.stderr, message);
  }
});

test("a --limit or -n past the help's range is a usage error naming the option; the range's end is accepted", async (t) => {
  const f = await startServer(t);
  const over: Array<[string[], RegExp]> = [
    [['want', 'list', '--limit', '1001'], /--limit must be a whole number from 1 to 1000/],
    [['job-runs', 'list', '--limit', '5000'], /--limit must be a whole number from 1 to 1000/],
    [['schedules', '--limit', '1001'], /--limit must be a whole number from 1 to 1000/],
    [['events', '--limit', '10001'], /--limit must be a whole number from 1 to 10000/],
    [['logs', 'r-1', '-n', '10001'], /--tail must be a whole number from 1 to 10000/],
  ];
  for (const [args, message] of over) {
    const r = await cli(t, f.url, f.dir, ...args);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, message, args.join(' '));
    t.notRegex(r.stderr, /Query parameter/, 'said in the words typed');
  }
  for (const args of [['want', 'list', '--limit', '1000'], ['events', '--limit', '10000']]) {
    const r = await cli(t, f.url, f.dir, '--json', ...args);
    t.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  }
});

test('a backfill pattern that is malformed or too large is a usage error, as for build; nothing is sent', async (t) => {
  const f = await startServer(t);
  const eventsBefore = ((await (await fetch(`${f.url}/api/events?limit=1`)).json()) as { latest_id: number }).latest_id;
  for (const [pattern, message] of [
    ['x={1..', /x=\{1\.\./],
    ['x={1..1000}/y={1..1000}', /expands to .*100,000/],
  ] as const) {
    for (const command of ['backfill', 'build']) {
      const r = await cli(t, f.url, f.dir, command, pattern);
      t.is(r.code, 2, `${command} ${pattern}: ${r.stderr}`);
      t.regex(r.stderr, message, `${command} ${pattern}`);
    }
  }
  // Over a want's 10,000 (a backfill's range is not): said of the pattern, with what takes more.
  for (const args of [['build', 'ok/{1..10001}'], ['want', 'create', '-p', 'ok/{1..10001}']]) {
    const r = await cli(t, f.url, f.dir, ...args);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, /'ok\/\{1\.\.10001\}' expands to 10,001 partitions; a want takes at most 10,000: split them, or use 'platform backfill <pattern>'/);
  }
  const taint = await cli(t, f.url, f.dir, 'taint', 'ok/{1..10001}');
  t.is(taint.code, 2);
  t.regex(taint.stderr, /expands to 10,001 partitions; a taint takes at most 10,000: split them\./);
  const eventsAfter = ((await (await fetch(`${f.url}/api/events?limit=1`)).json()) as { latest_id: number }).latest_id;
  t.is(eventsAfter, eventsBefore, 'no want or backfill was made');
});

test('an argument given empty (an unset shell variable) is a usage error naming it, on every command taking one; the API does not take the bare path as its list', async (t) => {
  const f = await startServer(t);
  const cases: string[][] = [
    ['want', 'get', ''],
    ['want', 'wait', ''],
    ['want', 'cancel', ''],
    ['want', 'tree', ''],
    ['backfills', 'get', ''],
    ['backfills', 'wait', ''],
    ['backfills', 'cancel', ''],
    ['taints', 'get', ''],
    ['job-runs', 'get', ''],
    ['logs', ''],
    ['partitions', 'get', ''],
    ['lineage', ''],
    ['schedules', ''],
    ['build', 'ok/one', ''],
  ];
  for (const args of cases) {
    const plain = await cli(t, f.url, f.dir, ...args);
    t.is(plain.code, 2, `${args.join(' ')}: ${plain.stderr}`);
    t.regex(plain.stderr, /^error: the argument <[a-z_.]+> is empty \(an unset shell variable\?\): give one/m, args.join(' '));
    t.notRegex(plain.stderr, /Cannot read properties|TypeError/);
    t.is(plain.stdout, '', `${args.join(' ')}: nothing printed as if it were an answer`);
    const json = await cli(t, f.url, f.dir, '--json', ...args);
    t.is(json.code, 2, args.join(' '));
    t.is(json.stdout, '');
  }
  const ids = await cli(t, f.url, f.dir, 'backfills', 'get', '');
  t.regex(ids.stderr, /<backfill_id> is empty .*give one \(e\.g\. bf-1\)\./);
  // The API: a path ending in '/' where an id goes is no route, for reads and writes alike.
  for (const [method, path] of [['GET', '/api/wants/'], ['DELETE', '/api/wants/'], ['GET', '/api/backfills/'], ['GET', '/api/partitions/'], ['GET', '/api/job_runs/']] as const) {
    const res = await f.api(path, { method });
    t.is(res.status, 404, `${method} ${path}`);
    t.regex(((await res.json()) as { error: string }).error, /ends in '\/', where an id or a name goes/);
  }
  t.is((await f.api('/api/wants')).status, 200, 'the list itself');
});

test("-C '' and --workspace '' are usage errors (an unset variable), not the current directory's workspace", async (t) => {
  const f = await startServer(t);
  for (const args of [['-C', ''], ['--workspace', ''], ['--workspace=']]) {
    // No --server-url: the workspace is what the command would use; f.dir (the cwd) is one, which '' must not fall back to.
    const p = runCli(t, [...args, 'want', 'list'], f.dir);
    const { code } = await p.exited;
    t.is(code, 2, `${args.join(' ')}: ${p.stderr()}`);
    t.regex(p.stderr(), /--workspace is empty \(an unset shell variable\?\): give the workspace's directory, or leave --workspace out/);
    t.is(p.stdout(), '');
  }
  const json = runCli(t, ['--json', '-C', '', 'status'], f.dir);
  t.is((await json.exited).code, 2);
  t.like(JSON.parse(json.stderr().trim().split('\n').at(-1)!), { exit_code: 2 });
});

test('an option bound for a bounded field of the request is a usage error naming the option, checked before any request', async (t) => {
  const f = await startServer(t);
  const cases: Array<[string[], RegExp]> = [
    [['build', 'ok/a', '--priority', '99999999'], /--priority must be a whole number from -1000000 to 1000000, such as 10 or -5; got '99999999'\./],
    [['build', 'ok/a', '--priority', '-1000001'], /--priority must be a whole number from -1000000 to 1000000/],
    [['want', 'create', '-p', 'ok/a', '--priority', '1000001'], /--priority must be a whole number from -1000000 to 1000000/],
    [['backfill', 'ok/{1..2}', '--priority', '99999999'], /--priority must be a whole number from -1000000 to 1000000/],
    [['want', 'create', '-p', 'ok/a', '--ttl', '40000d'], /--ttl is at most 100 years \(3162240000 seconds, 36600d\); got '40000d' \(3456000000 seconds\)\./],
    [['want', 'create', '-p', 'ok/a', '--sla', '40000d'], /--sla is at most 100 years/],
    [['want', 'create', '-p', 'ok/a', '--data-timestamp', '9999-01-01T00:00:00Z'], /--data-timestamp must be a time from 1970 to before the year 9900; got '9999-01-01T00:00:00Z'\./],
    [['want', 'create', '-p', 'ok/a', '--data-timestamp', '1969-12-31T00:00:00Z'], /--data-timestamp must be a time from 1970 to before the year 9900/],
    [['build', 'ok/a', '--comment', 'x'.repeat(10_001)], /--comment is 10001 characters long; the limit is 10000\./],
    [['want', 'create', '-p', 'ok/a', '--comment', 'a\tb'], /--comment holds a control character \(U\+0009, at position 2\)/],
    [['backfill', 'ok/{1..2}', '--comment', 'a\nb'], /--comment holds a control character \(U\+000A/],
    [['taint', 'ok/a', '--reason', 'x'.repeat(10_001)], /--reason is 10001 characters long/],
    [['schedules', 'pause', 'nightly', '--reason', 'a\u001bb'], /--reason holds a control character \(U\+001B/],
  ];
  for (const [args, message] of cases) {
    const r = await cli(t, f.url, f.dir, ...args);
    t.is(r.code, 2, `${args.join(' ').slice(0, 80)}: ${r.stderr}`);
    t.regex(r.stderr, message, args.join(' ').slice(0, 80));
    t.notRegex(r.stderr, /Field '/, 'said in the words typed, not the API field');
  }
  t.is(f.platform.state().wants.size, 0, 'nothing was sent: no want was made');
  // The ends of the ranges are taken.
  const edge = await cli(t, f.url, f.dir, '--json', 'want', 'create', '-p', 'ok/a', '--priority', '-1000000', '--ttl', '36600d', '--data-timestamp', '9899-12-31T23:59:59Z');
  t.is(edge.code, 0, edge.stderr);
});

test('lineage of a brace pattern of several refs is a usage error naming one to ask for, not a 404 of the pattern as a ref', async (t) => {
  const f = await startServer(t);
  const r = await cli(t, f.url, f.dir, 'lineage', 'raw/{1..3}');
  t.is(r.code, 2, r.stderr);
  t.regex(r.stderr, /lineage shows the tree of one partition; 'raw\/\{1\.\.3\}' is a pattern of 3: name one of them \(platform lineage raw\/1\)\./);
  // Past what a pattern may expand to: counted, and refused the same (it was taken for a ref, and a 404).
  const huge = await cli(t, f.url, f.dir, 'lineage', 'raw/{1..200000}');
  t.is(huge.code, 2, huge.stderr);
  t.regex(huge.stderr, /'raw\/\{1\.\.200000\}' is a pattern of 200,000: name one of them\./);
  // A pattern of one is that ref: asked of the server (which has never seen it).
  const one = await cli(t, f.url, f.dir, 'lineage', 'raw/{7}');
  t.is(one.code, 1, one.stderr);
  t.regex(one.stderr, /raw\/7/);
});

test("a Redis URL whose path is no database number is a usage error (the client took it for database 0: a worker on another database than its daemon's)", async (t) => {
  const f = await startServer(t);
  for (const args of [
    ['worker', '--redis', 'redis://127.0.0.1:1/2x', '--name', 'w1'],
    ['worker', '--redis', 'redis://127.0.0.1:1/queue', '--name', 'w1'],
    ['serve', '--port', '0', '--executor', 'redis://127.0.0.1:1/abc'],
  ]) {
    const r = await cli(t, f.url, f.dir, ...args);
    t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    t.regex(r.stderr, /a database number after it if any: redis:\/\/[^ ]+\/2\); got 'redis:\/\/127\.0\.0\.1:1\/\w+'/);
  }
  // A database number, or none, is a URL as before (it fails to connect, not to parse).
  for (const url of ['redis://127.0.0.1:1/2', 'redis://127.0.0.1:1/', 'redis://127.0.0.1:1']) {
    const p = runCli(t, ['--server-url', f.url, 'worker', '--redis', url, '--name', 'w1'], f.dir);
    await p.waitForStdout(/cannot reach Redis/);
    p.child.kill('SIGTERM');
    t.not((await p.exited).code, 2, url);
  }
});
