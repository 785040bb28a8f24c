import test from 'ava';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, of, Subject, take, tap, toArray } from 'rxjs';
import { followFile, followFileLines, type FileLine } from '../lib/executor/follow-file.js';
import { FOLLOWED_LINE_BYTES } from '../lib/server/log-follow.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function tempDir(t: { teardown: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'platform-follow-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await sleep(10);
  }
  return cond();
}

test('follows a file while another process appends, and completes after done$ with everything', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'out.log');
  writeFileSync(file, 'existing 1\nexisting 2\n');
  const done$ = new Subject<void>();
  const got: string[] = [];
  let beforeExit = 0;
  let exited = false;
  const completed = new Promise<void>((resolve, reject) =>
    followFile(file, done$).subscribe({
      next: (line) => {
        got.push(line);
        if (!exited) beforeExit++;
      },
      error: reject,
      complete: resolve,
    }),
  );
  const writer = spawn('bash', ['-c', `for i in $(seq 1 30); do echo "line $i" >> '${file}'; sleep 0.02; done`]);
  writer.on('exit', () => {
    exited = true;
    done$.next();
  });
  await completed;
  const expected = ['existing 1', 'existing 2', ...Array.from({ length: 30 }, (_, i) => `line ${i + 1}`)];
  t.deepEqual(got, expected);
  t.true(beforeExit > 2, `lines arrived while the writer ran (${beforeExit})`);
});

test('holds back a partial line until its newline, and emits a final partial line at the end', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'out.log');
  writeFileSync(file, 'abc');
  const done$ = new Subject<void>();
  const got: string[] = [];
  let complete = false;
  followFile(file, done$, 20).subscribe({ next: (l) => got.push(l), complete: () => (complete = true) });
  await sleep(150);
  t.deepEqual(got, []);
  appendFileSync(file, 'def\r\nsecond\n');
  t.true(await waitFor(() => got.length === 2, 2000));
  t.deepEqual(got, ['abcdef', 'second']);
  // A multi-byte character split across two writes.
  const e = Buffer.from('é');
  appendFileSync(file, Buffer.concat([Buffer.from('caf'), e.subarray(0, 1)]));
  await sleep(100);
  appendFileSync(file, Buffer.concat([e.subarray(1), Buffer.from('\n\nlast, no newline')]));
  await sleep(100);
  t.false(complete);
  done$.next();
  t.true(await waitFor(() => complete, 2000));
  t.deepEqual(got, ['abcdef', 'second', 'café', '', 'last, no newline']);
});

test('waits for a file that is created later', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'later.log');
  const done$ = new Subject<void>();
  const all = firstValueFrom(followFile(file, done$, 20).pipe(toArray()));
  await sleep(150);
  writeFileSync(file, 'one\ntwo\n');
  await sleep(150);
  appendFileSync(file, 'three\n');
  done$.next();
  t.deepEqual(await all, ['one', 'two', 'three']);
});

test('done$ that already emitted reads the whole file and completes; a missing file gives nothing', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'out.log');
  const big = Array.from({ length: 50000 }, (_, i) => `row ${i}`);
  writeFileSync(file, big.join('\n') + '\n');
  t.deepEqual(await firstValueFrom(followFile(file, of(true)).pipe(toArray())), big);
  t.deepEqual(await firstValueFrom(followFile(join(dir, 'absent.log'), of(true)).pipe(toArray())), []);
});

test('take() and unsubscribe stop following', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'out.log');
  writeFileSync(file, 'a\nb\nc\n');
  const never$ = new Subject<void>();
  t.deepEqual(await firstValueFrom(followFile(file, never$, 20).pipe(take(2), toArray())), ['a', 'b']);
  const got: string[] = [];
  const sub = followFile(file, never$, 20).subscribe((l) => got.push(l));
  t.true(await waitFor(() => got.length === 3, 2000));
  sub.unsubscribe();
  appendFileSync(file, 'd\n');
  await sleep(150);
  t.deepEqual(got, ['a', 'b', 'c']);
});

test('a truncated file is read again from its start', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'out.log');
  writeFileSync(file, 'old 1\nold 2\n');
  const done$ = new Subject<void>();
  const got: string[] = [];
  const completed = new Promise<void>((resolve) =>
    followFile(file, done$, 20).subscribe({ next: (l) => got.push(l), complete: resolve }),
  );
  t.true(await waitFor(() => got.length === 2, 2000));
  truncateSync(file, 0);
  await sleep(100);
  appendFileSync(file, 'new\n');
  t.true(await waitFor(() => got.length === 3, 2000));
  done$.next();
  await completed;
  t.deepEqual(got, ['old 1', 'old 2', 'new']);
});

test('followFileLines: each line with the byte offset after it; from `start`; a chunk read only once `ready` resolves', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'out.log');
  // 3 × 64 KiB and some: four chunks. Line n is 'é' then n zero-padded to 1022 digits (1024 bytes with its newline).
  const lineOf = (n: number) => `é${String(n).padStart(1021, '0')}`;
  const count = 200;
  writeFileSync(file, Array.from({ length: count }, (_, i) => `${lineOf(i)}\n`).join(''));
  let calls = 0;
  let open!: () => void;
  // The first chunk may be read; the second waits until the test opens the gate.
  const gate = new Promise<void>((resolve) => (open = resolve));
  let asked!: () => void;
  const secondAsk = new Promise<void>((resolve) => (asked = resolve));
  const ready = (): Promise<void> => {
    if (++calls === 2) asked();
    return calls === 1 ? Promise.resolve() : gate;
  };
  const got: FileLine[] = [];
  const done = firstValueFrom(followFileLines(file, of(true), { ready }).pipe(tap((l) => got.push(l)), toArray()));
  await secondAsk;
  // Held at the second chunk: only the lines the first 64 KiB ended.
  t.is(got.length, 64);
  open();
  const all = await done;
  t.is(all.length, count);
  t.deepEqual(all[0], { line: lineOf(0), end: 1024 });
  t.true(all.every((l, i) => l.line === lineOf(i) && l.end === (i + 1) * 1024));
  // From an offset a line ended at: the lines after it, with the same offsets.
  const rest = await firstValueFrom(followFileLines(file, of(true), { start: 198 * 1024 }).pipe(toArray()));
  t.deepEqual(rest, [
    { line: lineOf(198), end: 199 * 1024 },
    { line: lineOf(199), end: 200 * 1024 },
  ]);
});

test('followFileLines with maxLineBytes: a longer line comes cut where a character ends, marked with its size, its offset the whole line\'s; shorter lines whole; a last line without its newline too', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'out.log');
  // A 200 KiB line of 'é' (2 bytes each) across chunks, a short one, a line of exactly the limit, and a cut last line.
  const long = 'é'.repeat(100 * 1024);
  const atLimit = 'a'.repeat(1000);
  writeFileSync(file, `${long}\nshort\n${atLimit}\n${'b'.repeat(5000)}`);
  const lines = await firstValueFrom(followFileLines(file, of(true), { maxLineBytes: 1001 }).pipe(toArray()));
  const longBytes = Buffer.byteLength(long);
  // 1001 bytes would split an 'é': cut at 1000 (500 characters).
  t.is(lines[0]!.line, `${'é'.repeat(500)} … [line cut: ${longBytes} bytes, followed to 1000; the log read whole has all of it]`);
  t.is(lines[0]!.end, longBytes + 1);
  t.deepEqual(lines[1], { line: 'short', end: longBytes + 7 });
  t.is(lines[2]!.line, atLimit);
  t.is(lines[3]!.line, `${'b'.repeat(1001)} … [line cut: 5000 bytes, followed to 1001; the log read whole has all of it]`);
  t.is(lines[3]!.end, longBytes + 7 + 1001 + 5000);
  t.is(lines.length, 4);
});

test('followFileLines at FOLLOWED_LINE_BYTES: a line of the limit or less is whole with LF or CRLF (its CR is its ending, not content); one byte more is cut', async (t) => {
  const dir = tempDir(t);
  const max = FOLLOWED_LINE_BYTES;
  const cut = (n: number): string => `${'x'.repeat(max)} … [line cut: ${n} bytes, followed to ${max}; the log read whole has all of it]`;
  const cases: Array<{ bytes: number; ending: string; line: string }> = [];
  for (const ending of ['\n', '\r\n']) {
    cases.push({ bytes: max - 1, ending, line: 'x'.repeat(max - 1) });
    cases.push({ bytes: max, ending, line: 'x'.repeat(max) });
    cases.push({ bytes: max + 1, ending, line: cut(max + 1) });
  }
  // Each alone in its file (the limit is a whole number of the reader's chunks: the CR of a line of the limit is the
  // first byte of a chunk), then all in one, and once each as a last line with no newline after it.
  for (const c of cases) {
    const file = join(dir, `line-${c.bytes}-${c.ending.length}.log`);
    writeFileSync(file, `${'x'.repeat(c.bytes)}${c.ending}after\n`);
    const lines = await firstValueFrom(followFileLines(file, of(true), { maxLineBytes: max }).pipe(toArray()));
    t.deepEqual(lines, [{ line: c.line, end: c.bytes + c.ending.length }, { line: 'after', end: c.bytes + c.ending.length + 6 }], `${c.bytes} bytes, ${JSON.stringify(c.ending)}`);
  }
  const all = join(dir, 'all.log');
  writeFileSync(all, cases.map((c) => `${'x'.repeat(c.bytes)}${c.ending}`).join(''));
  const lines = await firstValueFrom(followFileLines(all, of(true), { maxLineBytes: max }).pipe(toArray()));
  t.deepEqual(lines.map((l) => l.line), cases.map((c) => c.line), 'all in one file');
  const unended = join(dir, 'unended.log');
  writeFileSync(unended, `${'x'.repeat(max)}\r`);
  t.deepEqual(await firstValueFrom(followFileLines(unended, of(true), { maxLineBytes: max }).pipe(toArray())), [{ line: 'x'.repeat(max), end: max + 1 }], 'a last line of the limit and its CR');
});

test('a file truncated to empty drops the partial line read before: nothing of it comes at the end', async (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'out.log');
  writeFileSync(file, 'whole\npart');
  const done$ = new Subject<void>();
  const got: FileLine[] = [];
  const completed = new Promise<void>((resolve) => followFileLines(file, done$, { pollMs: 20 }).subscribe({ next: (l) => got.push(l), complete: resolve }));
  t.true(await waitFor(() => got.length === 1, 2000));
  truncateSync(file, 0);
  // Seen truncated (a poll reads its size) before the end.
  await sleep(200);
  done$.next();
  await completed;
  t.deepEqual(got, [{ line: 'whole', end: 6 }]);
});
