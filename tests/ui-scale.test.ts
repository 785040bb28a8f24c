/**
 * The dashboard against what the API answers, where the API cuts its lists (a batch run of many outputs, a want of
 * many runs): a real daemon with real job processes, driven in Debian's Chromium through playwright-core. Each check
 * compares the page with the API's own answer in the same run, never with a number written here.
 *
 * Without a Chromium on the machine the tests are skipped, saying so.
 */
import test, { type ExecutionContext } from 'ava';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Platform, parseGraph, startHttpServer, type RunningServer } from '../lib/index.js';
import { until } from './helpers/until.js';
import { cliAgainst } from './helpers/cli-against.js';
import type { JobRunView, WantView } from '../lib/api/views.js';
import type { LineageReply } from '../lib/api/partitions-change.js';
import type { BackfillView } from '../lib/api/backfills.js';
import { writeFileSync } from 'node:fs';
import { groupDigits } from '../lib/group-digits.js';
import type { TaintView } from '../lib/api/partitions-change.js';
import type { Page as ApiPage } from '../lib/api/page.js';
import { MIN_RELOAD_MS } from '../lib/api/dashboard-reads.js';

const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => p && existsSync(p));
const uiTest = CHROMIUM ? test.serial : test.serial.skip;
if (!CHROMIUM) console.warn('ui-scale: skipped, no Chromium found (apt-get install chromium, or set CHROMIUM_PATH)');

const GRAPH = {
  max_concurrent_job_runs: 2,
  jobs: [
    // One run builds up to 60 refs: a run's outputs are more than a list of runs shows (20).
    // 300 lines of 300,000 characters (a JSON dump a row): a log of 90 MB whose follow sends 256 KiB of each line.
    { label: 'wide', outputs: ['wide/(?<n>\\d+)'], exec: ['bash', '-c', 'l=$(head -c 300000 /dev/zero | tr "\\0" y); for i in $(seq 0 299); do echo "$i $l"; done'] },
    // A program given on the command line over several lines, indented (as a python -c or bash -c script is).
    { label: 'script', outputs: ['script/(?<n>\\d+)'], exec: ['bash', '-c', 'for i in 1 2; do\n    echo "$i  two spaces"\ndone'] },
    // 600 consumers of one partition: more than a lineage draws (500 partitions).
    { label: 'src', outputs: ['src/(?<n>\\d+)'], exec: ['bash', '-c', 'true'] },
    { label: 'fan', outputs: ['fan/(?<n>\\d+)'], inputs: [{ partition_ref: 'src/1', dep_type: 'MATERIALIZE' }], exec: ['bash', '-c', 'true'], args: ['${n}'], batch: { max_partitions: 600 } },
    // gate/200 waits until the test lets it go (a minute at most); the others end at once.
    { label: 'gate', outputs: ['gate/(?<n>\\d+)'], args: ['${n}'], exec: ['bash', '-c', 'if [ "$1" = 200 ]; then i=0; while [ ! -e gate-open ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done; fi', 'gate'] },
    { label: 'ok', outputs: ['ok/(?<n>\\d+)'], exec: ['bash', '-c', 'true'] },
    { label: 'batchy', outputs: ['bat/(?<n>\\d+)'], exec: ['bash', '-c', 'true'], args: ['${n}'], batch: { max_partitions: 60 } },
  ],
};

let browser: Browser | undefined;
let server: RunningServer | undefined;
let dir = '';
const base = () => `http://127.0.0.1:${server!.port}`;

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${base()}${path}`);
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function post<T>(path: string, body: unknown): Promise<T> {
  const res = await fetch(`${base()}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

const pageProblems = new WeakMap<Page, string[]>();

async function newPage(t: ExecutionContext): Promise<Page> {
  const page = await browser!.newPage({ viewport: { width: 1400, height: 900 } });
  const problems: string[] = [];
  pageProblems.set(page, problems);
  page.on('pageerror', (err) => problems.push(err.message));
  t.teardown(() => page.close());
  return page;
}

/** Script errors the page logged: a test ends by saying there were none. */
function noScriptErrors(t: ExecutionContext, page: Page): void {
  t.deepEqual(pageProblems.get(page), [], 'no script errors on the page');
}

test.before(async () => {
  if (!CHROMIUM) return;
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'platform-ui-scale-')));
  mkdirSync(join(dir, '.platform'), { recursive: true });
  const platform = await Platform.open(dir, { graph: parseGraph(GRAPH, 'test'), tickMs: 100 });
  server = await startHttpServer(platform, { port: 0, log: () => {}, drainMs: 500 });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

test.after.always(async () => {
  await browser?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

uiTest("a batch run's outputs are counted in full on the runs list and on its want's page, as the API counts them", async (t) => {
  const { want_id } = await post<{ want_id: string }>('/api/wants', { partitions: Array.from({ length: 60 }, (_, i) => `bat/${i + 1}`) });
  await until(() => api<WantView>(`/api/wants/${want_id}`), (w) => w.status === 'successful', 'the want to be built');
  const runs = await api<ApiPage<JobRunView>>(`/api/job_runs?want_id=${want_id}`);
  const run = runs.data[0]!;
  t.true(run.outputs_total > run.outputs.length, 'the list of runs cuts the outputs it shows (else this test checks nothing)');

  const page = await newPage(t);
  await page.goto(`${base()}/job_runs`);
  const row = page.locator('.vrow', { has: page.locator(`a[href="/job_runs/${run.job_run_id}"]`) });
  await row.waitFor();
  t.true((await row.innerText()).includes(`+${run.outputs_total - 2}`), `the runs list counts the run's ${run.outputs_total} outputs: ${await row.innerText()}`);

  await page.goto(`${base()}/wants/${want_id}`);
  const cell = page.locator('tr', { has: page.locator(`a[href="/job_runs/${run.job_run_id}"]`) }).locator('td').last();
  await cell.waitFor();
  t.true((await cell.innerText()).endsWith(`+${run.outputs_total - 3}`), `the want's runs count the run's ${run.outputs_total} outputs: ${await cell.innerText()}`);
  noScriptErrors(t, page);
});

uiTest('a list open on a busy build reads its page at most every MIN_RELOAD_MS, one read at a time', async (t) => {
  const page = await newPage(t);
  // The page's own clock of when each read began and ended (its resource timings, every one kept): this process
  // sees a request's time through the browser's protocol, jittered by tens of ms.
  await page.addInitScript(() => performance.setResourceTimingBufferSize(1_000_000));
  await page.goto(`${base()}/wants`);
  await page.locator('.vrow:not(.vhead)').first().waitFor();
  const opened = performance.now();
  const { want_id } = await post<{ want_id: string }>('/api/wants', { partitions: Array.from({ length: 150 }, (_, i) => `ok/${i + 1}`) });
  await until(() => api<WantView>(`/api/wants/${want_id}`), (w) => w.status === 'successful', 'the want to be built', 60_000);
  await page.locator(`[data-want="${want_id}"] .status-successful`).waitFor();
  const took = performance.now() - opened;
  const reads = await page.evaluate(() =>
    performance
      .getEntriesByType('resource')
      .filter((e) => new URL(e.name).pathname === '/api/wants')
      .map((e) => [e.startTime, (e as unknown as { responseEnd: number }).responseEnd] as const),
  );
  // The first read is the page's opening; the rest came from ~500 events in `took` ms.
  t.true(reads.length >= 2, `${reads.length} reads`);
  t.true(reads.length <= took / MIN_RELOAD_MS + 3, `${reads.length} reads of the list in ${took.toFixed(0)} ms`);
  for (let i = 1; i < reads.length; i++) {
    t.true(reads[i]![0] >= reads[i - 1]![1], `read ${i} began before read ${i - 1} ended: one read at a time`);
    // Half the gap is the bound, as the want page's test has it.
    t.true(reads[i]![0] - reads[i - 1]![0] >= MIN_RELOAD_MS / 2, `reads ${i - 1} and ${i} ${(reads[i]![0] - reads[i - 1]![0]).toFixed(0)} ms apart`);
  }
  noScriptErrors(t, page);
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
    s.on('error', reject);
  });
}

/** A daemon of its own on `port`, in a fresh workspace, with `wants` ok wants built; closed and removed after the test. */
async function daemonOn(t: ExecutionContext, port: number, wants: number): Promise<RunningServer> {
  const own = realpathSync(mkdtempSync(join(tmpdir(), 'platform-ui-scale-')));
  mkdirSync(join(own, '.platform'), { recursive: true });
  const platform = await Platform.open(own, { graph: parseGraph(GRAPH, 'test'), tickMs: 100 });
  const running = await startHttpServer(platform, { port, log: () => {}, drainMs: 500 });
  t.teardown(async () => {
    await running.close();
    rmSync(own, { recursive: true, force: true });
  });
  const at = `http://127.0.0.1:${port}`;
  for (let i = 0; i < wants; i++) {
    const res = await fetch(`${at}/api/wants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ partitions: [`ok/${i}`] }) });
    const { want_id } = (await res.json()) as { want_id: string };
    await until(() => fetch(`${at}/api/wants/${want_id}`).then((r) => r.json() as Promise<WantView>), (w) => w.status === 'successful', 'a want built');
  }
  return running;
}

uiTest('a page whose daemon comes back with another event log (another workspace on its port, a log restored from a backup) shows that log, whether or not it saw an event before', async (t) => {
  const port = await freePort();
  const first = await daemonOn(t, port, 4);
  const at = `http://127.0.0.1:${port}`;
  // One page sees an event of the first log (it resumes from its id); the other sees none (it resumes from nothing).
  const heard = await newPage(t);
  await heard.goto(`${at}/wants`);
  await heard.locator('.vrow [data-want]').first().waitFor();
  const { want_id: fifth } = await fetch(`${at}/api/wants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ partitions: ['ok/4'] }) }).then((r) => r.json() as Promise<{ want_id: string }>);
  await heard.locator(`[data-want="${fifth}"] .status-successful`).waitFor();
  const quiet = await newPage(t);
  await quiet.goto(`${at}/wants`);
  await quiet.locator('.vrow [data-want]').first().waitFor();
  for (const page of [heard, quiet]) t.is(await page.locator('.count').innerText(), '5 in all');
  await first.close();
  for (const page of [heard, quiet]) await page.locator('[data-connection="lost"]').waitFor({ timeout: 15_000 });
  // The second log is shorter than what the first page saw: the stream refuses its Last-Event-ID (400), an id this
  // log never sent. Its want is made before either page is back.
  await daemonOn(t, port, 1);
  const latest = ((await (await fetch(`${at}/api/events?limit=1`)).json()) as { latest_id: number }).latest_id;
  t.true(latest < 15, `the second log is shorter (${latest} events)`);
  for (const page of [heard, quiet]) {
    await page.locator('[data-connection]').waitFor({ state: 'detached', timeout: 20_000 });
    await until(() => page.locator('.count').innerText(), (text) => text === '1 in all', "the second daemon's wants on the page");
  }
  // And both follow the new log: a want made now appears.
  const { want_id } = await fetch(`${at}/api/wants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ partitions: ['ok/99'] }) }).then((r) => r.json() as Promise<{ want_id: string }>);
  for (const page of [heard, quiet]) {
    await page.locator(`[data-want="${want_id}"]`).waitFor({ timeout: 10_000 });
    t.is(await page.locator('.count').innerText(), '2 in all');
    noScriptErrors(t, page);
  }
});

uiTest("a run's page takes in a log of long lines at the pace it arrives, each shown cut with how much more the raw log has", async (t) => {
  const { want_id } = await post<{ want_id: string }>('/api/wants', { partitions: ['wide/1'] });
  const want = await until(() => api<WantView>(`/api/wants/${want_id}`), (w) => w.status === 'successful', 'the run to write its log', 60_000);
  const runId = want.job_run_ids[0]!;
  const raw = await fetch(`${base()}/api/job_runs/${runId}/logs/stdout?tail=1`).then((r) => r.text());
  t.true(raw.length > 300_000, `the log's lines are long (${raw.length} characters)`);
  const page = await newPage(t);
  const opened = performance.now();
  await page.goto(`${base()}/job_runs/${runId}`);
  // Each frame used to join every line kept into the page's text again: 4 lines a second, minutes for these 300.
  await page.locator('pre.log + p', { hasText: 'The run succeeded' }).waitFor({ timeout: 45_000 });
  const took = performance.now() - opened;
  const log = page.locator('pre.log');
  t.is(await log.getAttribute('data-lines'), '300', `every line is on the page (${took.toFixed(0)} ms)`);
  const text = await log.innerText();
  const last = text.slice(text.lastIndexOf('\n') + 1);
  t.true(last.startsWith('299 yyy'), last.slice(0, 40));
  // Longer than the follow sends (256 KiB): the follow's own mark, with the line's whole size, ends it.
  t.regex(last, new RegExp(` … \\[line cut: ${Buffer.byteLength(raw) - 1} bytes, followed to 262144; the log read whole has all of it\\]$`));
  t.true(text.length < 300 * 3_000, `what the page holds is bounded (${text.length} characters)`);
  noScriptErrors(t, page);
});

uiTest("a run's command is shown as it ran: an argument's line breaks and runs of spaces are kept, not folded into one space", async (t) => {
  const { want_id } = await post<{ want_id: string }>('/api/wants', { partitions: ['script/1'] });
  const want = await until(() => api<WantView>(`/api/wants/${want_id}`), (w) => w.status === 'successful', 'the run');
  const run = await api<JobRunView>(`/api/job_runs/${want.job_run_ids[0]!}`);
  const script = run.exec[2]!;
  t.true(script.includes('\n    echo'), 'the script has a line break and an indent');
  const page = await newPage(t);
  await page.goto(`${base()}/job_runs/${run.job_run_id}`);
  const command = page.locator('[data-fact="command"] code');
  await command.waitFor();
  // Shell-quoted as the page quotes it: the script in single quotes, whole.
  t.is(await command.innerText(), `bash -c '${script}'`);
  noScriptErrors(t, page);
});

uiTest("a partition's page says what its lineage leaves out, as the API and the CLI say it: a partition with more consumers than a lineage draws", async (t) => {
  const { want_id } = await post<{ want_id: string }>('/api/wants', { partitions: Array.from({ length: 600 }, (_, i) => `fan/${i + 1}`) });
  await until(() => api<WantView>(`/api/wants/${want_id}`), (w) => w.status === 'successful', 'the 600 consumers to be built', 60_000);
  const down = await api<LineageReply>(`/api/partitions/${encodeURIComponent('src/1')}/lineage?direction=downstream&depth=6`);
  t.true(down.root.truncated && down.root.children_total === 600, 'the API cuts the lineage (else this test checks nothing)');
  const page = await newPage(t);
  await page.goto(`${base()}/partitions/${encodeURIComponent('src/1')}`);
  const cut = page.locator('[data-field="lineage_cut"]');
  await cut.waitFor();
  const left = down.root.children_total - down.root.children.length;
  t.regex(await cut.innerText(), new RegExp(`src/1: ${left} more of its 600 consumers are not drawn \\(a lineage shows at most ${down.max_nodes} partitions\\)`));
  noScriptErrors(t, page);
});

uiTest("a backfill one partition short of done reads 99% on the dashboard, as platform backfills says it, not 100%", async (t) => {
  const { backfill_id } = await post<{ backfill_id: string }>('/api/backfills', { pattern: 'gate/{1..200}' });
  const b = await until(() => api<BackfillView>(`/api/backfills/${backfill_id}`), (v) => v.counts.live === 199, '199 of its 200 partitions built', 60_000);
  t.is(b.status, 'building');
  // The CLI's words (backfill-command.ts, backfill-progress.ts): the share settled, rounded down.
  const pct = `${Math.floor(b.progress * 100)}%`;
  t.is(pct, '99%');
  const page = await newPage(t);
  await page.goto(`${base()}/backfills`);
  const bar = page.locator(`[aria-label="${backfill_id} progress"]`);
  await bar.waitFor();
  t.is(await bar.innerText(), pct, 'the list');
  await page.goto(`${base()}/backfills/${backfill_id}`);
  await page.locator('.progress').first().waitFor();
  t.is(await page.locator('.progress').first().innerText(), pct, "the backfill's page");
  writeFileSync(join(dir, 'gate-open'), '');
  await until(() => api<BackfillView>(`/api/backfills/${backfill_id}`), (v) => v.status === 'successful', 'the backfill to end');
  await until(() => page.locator('.progress').first().innerText(), (text) => text === '100%', 'the page at 100% once it ended');
  noScriptErrors(t, page);
});

uiTest("the create form refuses a pattern of more refs than a want takes in the CLI's words, sending nothing (not a 413 about the body's size)", async (t) => {
  const cli = cliAgainst(base);
  const page = await newPage(t);
  const posts: string[] = [];
  page.on('request', (r) => r.method() === 'POST' && posts.push(new URL(r.url()).pathname));
  await page.goto(`${base()}/wants`);
  for (const pattern of ['bat/{1..12000}', 'bat/{1..100000}']) {
    const said = await cli('want', 'create', '--partition', pattern);
    t.is(said.code, 2, said.stderr);
    const words = said.stderr.split('\n')[0]!.replace(/^error: /, '');
    t.regex(words, /a want takes at most 10,000/);
    await page.getByLabel('Partition refs or brace patterns').fill(pattern);
    await page.getByRole('button', { name: 'Create want' }).click();
    await until(() => page.locator('form.create .error').innerText().catch(() => ''), (text) => text === words, `the CLI's words for ${pattern}`);
  }
  t.deepEqual(posts, [], 'nothing was sent');
  noScriptErrors(t, page);
});

uiTest("a write the daemon never answered (it stopped) says so and what to do, not 'Failed to fetch'", async (t) => {
  const port = await freePort();
  const own = await daemonOn(t, port, 1);
  const at = `http://127.0.0.1:${port}`;
  const page = await newPage(t);
  await page.goto(`${at}/wants`);
  await page.locator('.vrow [data-want]').first().waitFor();
  await own.close();
  await page.getByLabel('Partition refs or brace patterns').fill('ok/5');
  await page.getByRole('button', { name: 'Create want' }).click();
  const said = await until(() => page.locator('form.create .error').innerText().catch(() => ''), (text) => text !== '', 'the form to say what happened');
  t.regex(said, /^The daemon at http:\/\/127\.0\.0\.1:\d+ did not answer \(POST \/api\/wants\): it may be stopped, or listening on another port; run platform ui for a link to it\.$/);
  noScriptErrors(t, page);
});

uiTest("counts of a thousand and more are grouped as the CLI groups them: a taint of 1,201 partitions, its backfill and want", async (t) => {
  // 1,200 consumers of src/1 (600 of them built by the lineage test, if it ran), tainted with it.
  const { backfill_id, want_id } = await post<{ backfill_id: string; want_id: string }>('/api/backfills', { pattern: 'fan/{1..1200}' });
  await until(() => api<BackfillView>(`/api/backfills/${backfill_id}`), (b) => b.status === 'successful', 'the consumers to be built', 60_000);
  const { taint_id } = await post<{ taint_id: string }>('/api/taints', { partitions: ['src/1'], downstream: true, reason: 'a thousand and more' });
  const taint = await api<TaintView>(`/api/taints/${taint_id}`);
  t.true(taint.partitions_total > 1000, `${taint.partitions_total} partitions`);
  const total = groupDigits(taint.partitions_total);
  const page = await newPage(t);
  await page.goto(`${base()}/taints/${taint_id}`);
  await page.locator('[data-fact="still_tainted"]').waitFor();
  t.is(await page.locator('[data-fact="still_tainted"]').innerText(), `${groupDigits(taint.still_tainted)} of ${total}`);
  t.is(await page.locator('h2', { hasText: 'Partitions' }).innerText(), `Partitions (${total})`);
  await page.goto(`${base()}/taints`);
  const row = page.locator('.vrow', { has: page.locator(`[data-taint="${taint_id}"]`) });
  await row.waitFor();
  t.true((await row.innerText()).includes(total), await row.innerText());
  await page.goto(`${base()}/backfills/${backfill_id}`);
  await page.locator('[data-count="live"]').waitFor();
  t.is(await page.locator('[data-count="live"]').innerText(), '1,200');
  await page.goto(`${base()}/wants/${want_id}`);
  await page.locator('h1 .status').waitFor();
  t.regex(await page.locator('main').innerText(), /fan\/\{1\.\.1200\} \(1,200\)/);
  noScriptErrors(t, page);
});
