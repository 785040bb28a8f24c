/**
 * The embedding API as another project uses it: `import ... from 'platform'` resolved through package.json's
 * exports, its types type-checked by tsc against the emitted declarations, and the compiled program run.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Platform } from '../lib/platform.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));

const CONSUMER = `
import { Platform, listWants, type WantView, type Page, type BuildState, type JobRunStarted } from 'platform';

const platform = await Platform.open(process.argv[2]!);
// A run's start as the log has it: started_at is 0 for a run this process started (its event's time).
const starts: JobRunStarted[] = [];
platform.events$.subscribe((e) => {
  if (e.type === 'job_run_started') starts.push(e.job_run_started);
});
const reply = await platform.createWant({ partitions: ['out/1'], comment: 'from a package', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });
if (!reply.ok) throw new Error(reply.error);
const wantId: string = reply.want_id;
const done = await new Promise<BuildState>((resolve) => {
  const sub = platform.state$.subscribe((s) => {
    const status = s.wants.get(wantId)?.status;
    if (status === 'successful' || status === 'failed') {
      resolve(s);
      queueMicrotask(() => sub.unsubscribe());
    }
  });
});
const page: Page<WantView> = listWants(done, { offset: 0, limit: 10, reverse: false });
await platform.close();
console.log(JSON.stringify({ status: done.wants.get(wantId)?.status, total: page.total, comment: page.data[0]?.comment, started_at: starts.map((s) => s.started_at) }));
`;

test("another project imports 'platform' by name, type-checks against its declarations and runs a build with it", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-embedder-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  symlinkSync(REPO, join(dir, 'node_modules', 'platform'));
  symlinkSync(join(REPO, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'embedder', private: true, type: 'module' }));
  writeFileSync(join(dir, 'main.ts'), CONSUMER);
  const workspace = join(dir, 'ws');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'platform.json'), JSON.stringify({ jobs: [{ label: 'out', outputs: ['out/(?<n>\\d+)'], exec: ['true'] }] }));

  const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
  const flags = ['--strict', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022', '--skipLibCheck', '--types', 'node'];
  const compiled = await run(process.execPath, [tsc, ...flags, 'main.ts'], { cwd: dir }).then(
    () => '',
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
  t.is(compiled, '', 'the consumer type-checks against the declarations');

  const { stdout } = await run(process.execPath, [join(dir, 'main.js'), workspace], { cwd: dir, timeout: 30_000 });
  t.deepEqual(JSON.parse(stdout), { status: 'successful', total: 1, comment: 'from a package', started_at: [0] });
});

/** The README's Embedding example, as a new user copies it: the first ```ts block after "## Embedding". */
function readmeEmbeddingExample(): string {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Embedding'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block?.[1]) throw new Error("README.md has no ```ts block under '## Embedding'");
  return block[1];
}

test("the README's Embedding example, run as written on the example workspace, does what its comments say", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-readme-embedder-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true });
  symlinkSync(REPO, join(dir, 'node_modules', 'platform'));
  symlinkSync(join(REPO, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'embedder', private: true, type: 'module' }));
  const workspace = join(dir, 'ws');
  mkdirSync(join(workspace, '.platform'), { recursive: true });
  cpSync(join(REPO, 'examples', 'revenue', 'platform.json'), join(workspace, 'platform.json'));
  cpSync(join(REPO, 'examples', 'revenue', 'jobs'), join(workspace, 'jobs'), { recursive: true });
  const example = readmeEmbeddingExample();
  t.true(example.includes("'/path/to/workspace'"));
  writeFileSync(join(dir, 'main.ts'), example.replace("'/path/to/workspace'", JSON.stringify(workspace)));

  const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
  const flags = ['--strict', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022', '--skipLibCheck', '--types', 'node'];
  const compiled = await run(process.execPath, [tsc, ...flags, 'main.ts'], { cwd: dir }).then(
    () => '',
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
  t.is(compiled, '', 'the example type-checks as it is');
  await run(process.execPath, [join(dir, 'main.js')], { cwd: dir, timeout: 60_000 });

  // What it did, read back from the workspace it left: the want built, the taint made (of a built ref), the backfill.
  const platform = await Platform.open(workspace, { start: false });
  t.teardown(() => platform.close());
  const state = platform.state();
  t.is(state.wants.get('w-1')?.status, 'successful');
  const taints = [...state.taints.values()];
  t.is(taints.length, 1, 'the taint was made: the example waits for the build before it taints');
  t.is(taints[0]?.reason, 'late rows');
  t.is(state.backfills.size, 1);
});
