/**
 * `Platform.eventsSince` as an RxJS app follows the log: an id past the latest (kept from a log since restored from a
 * backup, or from another workspace) waited silently and then skipped every event up to it, as the event stream
 * once did (server-input-edges.test.ts); it errors now, saying the latest.
 */
import test from 'ava';
import { firstValueFrom, take, toArray } from 'rxjs';
import { makeWorkspace, openPlatform } from './helpers/jobs-fixture.js';

const graph = { jobs: [{ label: 'a', outputs: ['a/(?<n>\\w+)'], exec: ['true'] }] };
const want = (ref: string) => ({ partitions: [ref], comment: '', data_timestamp: 0, ttl_seconds: 0, sla_seconds: 0 });

test('eventsSince an id past the latest, or no id at all, errors saying so; the latest itself follows what comes next', async (t) => {
  const dir = makeWorkspace(t);
  const platform = await openPlatform(t, dir, graph);
  const w = await platform.createWant(want('a/x'));
  t.true(w.ok);
  const latest = platform.log.latestId();
  t.true(latest >= 1);

  const past = await t.throwsAsync(firstValueFrom(platform.eventsSince(latest + 50)));
  t.true(past instanceof RangeError);
  t.regex(past!.message, new RegExp(`eventsSince\\(${latest + 50}\\).*past the latest event of this log \\(${latest}\\)`));
  for (const bad of [-1, 1.5, Number.NaN, '3' as unknown as number]) {
    const err = await t.throwsAsync(firstValueFrom(platform.eventsSince(bad)));
    t.regex(err!.message, /eventsSince takes an event id, a whole number of at least 0/, String(bad));
  }

  // From 0: the log's first events; from the latest: the next one appended.
  const first = await firstValueFrom(platform.eventsSince(0).pipe(take(1), toArray()));
  t.is(first[0]!.event_id, 1);
  const next = firstValueFrom(platform.eventsSince(latest));
  await platform.createWant(want('a/y'));
  t.is((await next).event_id, latest + 1);
});

test('eventsSince asked of a closed platform errors saying so, rather than complete as if its log were empty', async (t) => {
  const platform = await openPlatform(t, makeWorkspace(t), graph);
  t.true((await platform.createWant(want('a/x'))).ok);
  await platform.close();
  const err = await t.throwsAsync(firstValueFrom(platform.eventsSince(0).pipe(toArray())));
  t.regex(err!.message, /^eventsSince: this platform is closed \(or closing\); open the workspace again/);
});
