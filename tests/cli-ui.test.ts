/**
 * `platform ui --no-open` in a fresh workspace: starts the workspace daemon, prints the dashboard's URL, and that URL
 * (and a deep link) answers the page; the API keeps its paths.
 */
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = join(fileURLToPath(new URL('../../', import.meta.url)), 'bin', 'platform');
const ENV: NodeJS.ProcessEnv = { ...process.env, PLATFORM_IDLE_TIMEOUT: '30s', NO_COLOR: '1' };

test('ui --no-open starts the daemon and prints a URL that serves the dashboard, deep links included', async (t) => {
  const ws = realpathSync(mkdtempSync(join(tmpdir(), 'platform-ui-cli-')));
  mkdirSync(join(ws, '.platform'));
  t.teardown(() => {
    spawnSync(process.execPath, [BIN, '-C', ws, 'stop'], { env: ENV });
    rmSync(ws, { recursive: true, force: true });
  });
  const r = spawnSync(process.execPath, [BIN, '-C', ws, 'ui', '--no-open'], { env: ENV, encoding: 'utf8' });
  t.is(r.status, 0, r.stderr);
  const link = r.stdout.trim();
  // The daemon requires its token: the link signs the browser in once, with the token as a cookie.
  t.regex(link, /^http:\/\/127\.0\.0\.1:\d+\/login\?code=[\w-]+$/);
  const url = `${new URL(link).origin}/`;
  t.is((await fetch(url, { headers: { accept: 'text/html' } })).status, 401, 'no cookie, no dashboard');
  const signIn = await fetch(link, { redirect: 'manual' });
  t.is(signIn.status, 303);
  t.is(signIn.headers.get('location'), '/');
  const setCookie = signIn.headers.get('set-cookie') ?? '';
  t.regex(setCookie, /^platform_token=[^;]+;.*HttpOnly/i);
  t.regex(setCookie, /SameSite=Strict/i);
  const cookie = setCookie.split(';')[0]!;
  t.is((await fetch(link, { redirect: 'manual' })).status, 401, 'the link opens once');
  for (const path of ['', 'wants/w-1', 'partitions/raw%2F1']) {
    const page = await fetch(`${url}${path}`, { headers: { accept: 'text/html', cookie } });
    t.is(page.status, 200, path);
    t.regex(await page.text(), /<div id="app"><\/div>/);
    t.regex(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
  }
  const api = await fetch(`${url}api/wants`, { headers: { cookie } });
  t.is(api.status, 200);
  t.is(api.headers.get('content-type')?.split(';')[0], 'application/json');
  const missing = await fetch(`${url}api/nothing`, { headers: { accept: 'text/html', cookie } });
  t.is(missing.status, 404, 'the API keeps its 404s, even for a browser');
  const json = spawnSync(process.execPath, [BIN, '-C', ws, '--json', 'ui', '--no-open'], { env: ENV, encoding: 'utf8' });
  const again = (JSON.parse(json.stdout) as { url: string }).url;
  t.regex(again, /\/login\?code=/);
  t.not(again, link, 'a new link each time');
});
