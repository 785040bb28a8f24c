/**
 * `platform logs <run>` prints the log as the job wrote it, byte for byte: the log files keep the job's bytes (a
 * remote run's too, since session 35), but the CLI decoded the answer as UTF-8 and printed U+FFFD for each byte that
 * is no UTF-8, so `platform logs r-1 > dump.bin` was not the job's output. The real server, the real CLI, a real job.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, REPO_ROOT, createWant, startServer, waitForWant } from './helpers/server-fixture.js';

const graph = {
  jobs: [
    {
      label: 'binary',
      outputs: ['binary/(?<n>\\d+)'],
      // Random bytes, a CRLF line, stray bytes, no final newline; a copy kept to compare with what the CLI prints.
      exec: ['sh', '-c', "head -c 20000 /dev/urandom > out.bin; printf 'a\\r\\nb\\377\\376\\r\\nno newline' >> out.bin; cat out.bin; printf 'e\\300\\n' >&2"],
    },
  ],
};

/** The CLI's stdout as bytes, and its exit code. */
function cliBytes(url: string, ...args: string[]): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  const child = spawn(process.execPath, [CLI, '--server-url', url, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr })));
}

test("platform logs prints a run's log byte for byte, and --json still gives it as text", async (t) => {
  const f = await startServer(t, { graph, platform: { executor: 'supervised' } });
  const done = await waitForWant(f, await createWant(f, ['binary/1']), ['successful']);
  const run = (done.job_run_ids as string[])[0]!;
  const written = readFileSync(join(f.dir, 'out.bin'));

  const printed = await cliBytes(f.url, 'logs', run);
  t.is(printed.code, 0, printed.stderr);
  t.is(printed.stdout.length, written.length, 'as many bytes as the job wrote');
  t.true(printed.stdout.equals(written), 'the bytes the job wrote');

  const err = await cliBytes(f.url, 'logs', '--stderr', run);
  t.true(err.stdout.equals(Buffer.from('e\xc0\n', 'latin1')), '--stderr too');

  const tail = await cliBytes(f.url, 'logs', '-n', '1', run);
  t.true(tail.stdout.equals(Buffer.from('no newline')), '-n: the last line as written');

  const json = await cliBytes(f.url, '--json', 'logs', run);
  t.is(json.code, 0, json.stderr);
  t.is((JSON.parse(json.stdout.toString()) as { text: string }).text, written.toString(), '--json: the text, as before');
});
