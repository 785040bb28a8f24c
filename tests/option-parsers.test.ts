import test from 'ava';
import { Command, CommanderError } from 'commander';
import { duration, httpUrl, isoTime, parsedOption, wholeNumber } from '../lib/cli/option-parsers.js';

function program(): Command {
  return new Command('p')
    .exitOverride()
    .configureOutput({ writeErr: () => {} })
    .addOption(parsedOption('-n, --count <n>', 'a count', wholeNumber({ min: 1 })))
    .addOption(parsedOption('--port <port>', 'a port', wholeNumber({ max: 65535, note: '0 = any free port' })))
    .addOption(parsedOption('--wait <duration>', 'a duration', duration))
    .addOption(parsedOption('--at <iso>', 'a time', isoTime()));
}

test('option values arrive parsed', (t) => {
  const args = ['-n', '3', '--port', '0', '--wait', '5m', '--at', '2026-01-05T00:00:00Z'];
  t.deepEqual(program().parse(args, { from: 'user' }).opts(), { count: 3, port: 0, wait: 300_000, at: '2026-01-05T00:00:00Z' });
  t.deepEqual(program().parse([], { from: 'user' }).opts(), {});
});

test('a bad option value is a usage error (exit 2) that names the option and what it takes', (t) => {
  const cases: Array<[string[], RegExp]> = [
    [['-n', '0'], /argument '0' is invalid\. --count must be a whole number of at least 1\.$/],
    [['--count', '1.5'], /--count must be a whole number/],
    [['--count', '9007199254740993'], /--count is too large: at most 9007199254740991; got '9007199254740993'\.$/],
    [['--port', '65536'], /--port must be a whole number from 0 to 65535 \(0 = any free port\)\.$/],
    [['--port', '-1'], /--port must be a whole number/],
    [['--wait', '10x'], /--wait must be a duration like 90, 90s, 5m, 3h or 1d/],
    [['--wait', '0'], /--wait must be more than zero/],
    [['--at', 'yesterday'], /--at must be an ISO 8601 time such as 2026-01-05T00:00:00Z\.$/],
    // Date.parse rolls a day past its month's end (and 24:00) into the next: no calendar has these.
    [['--at', '2026-02-30'], /--at names no time there is: February 2026 has 28 days, not 30 \(got '2026-02-30'\)\.$/],
    [['--at', '2024-02-30T00:00:00Z'], /February 2024 has 29 days, not 30/],
    [['--at', '2026-04-31'], /April 2026 has 30 days, not 31/],
    [['--at', '2026-01-01T24:00:00Z'], /an hour is 00 to 23, not 24/],
  ];
  for (const [args, message] of cases) {
    const err = t.throws(() => program().parse(args, { from: 'user' }), { instanceOf: CommanderError }, args.join(' '));
    t.is(err.exitCode, 2, args.join(' '));
    t.is(err.code, 'commander.invalidArgument');
    t.regex(err.message, message);
  }
});

test("--server-url takes the daemon's base URL only: a path (the API's /api), a query or a fragment is a usage error saying so", (t) => {
  const parse = (value: string) =>
    new Command('p').exitOverride().configureOutput({ writeErr: () => {} }).addOption(parsedOption('--server-url <url>', 'a server', httpUrl)).parse(['--server-url', value], { from: 'user' }).opts();
  for (const [value, kept] of [
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http://127.0.0.1:8080/', 'http://127.0.0.1:8080'],
    ['https://localhost:8443//', 'https://localhost:8443'],
  ] as const) {
    t.deepEqual(parse(value), { serverUrl: kept }, value);
  }
  for (const [value, what] of [
    ['http://127.0.0.1:8080/api', 'no path'],
    ['http://127.0.0.1:8080/api/', 'no path'],
    ['http://127.0.0.1:8080/dashboard/wants', 'no path'],
    ['http://127.0.0.1:8080/?token=x', 'no query or fragment'],
    ['http://127.0.0.1:8080?', 'no query or fragment'],
    ['http://127.0.0.1:8080/#wants', 'no query or fragment'],
  ] as const) {
    const err = t.throws(() => parse(value), { instanceOf: CommanderError }, value);
    t.is(err.exitCode, 2, value);
    t.true(err.message.endsWith(`--server-url must be the daemon's base URL, such as http://127.0.0.1:8080 (${what}); got '${value}'.`), err.message);
  }
});
