/**
 * When following a want ends, on virtual time: the race of the want being over (after an event that concerns it,
 * or at the periodic poll), Ctrl-C, and the events stream ending or failing. The want's status on the "server" is
 * a function of virtual time; each read answers after READ_MS with the status at that moment.
 */
import test, { type ExecutionContext } from 'ava';
import { type Observable, EMPTY, NEVER, map, throwError, timer } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { followEnding, type FollowEnding, type FollowSources } from '../lib/cli/follow-ending.js';
import type { WantStatus } from '../lib/state/build-state.js';

interface Want {
  want_id: string;
  status: WantStatus;
}

const READ_MS = 2;
const POLL_MS = 5_000;
const want = (status: WantStatus): Want => ({ want_id: 'w-1', status });
const done = (status: WantStatus): FollowEnding<Want> => ({ kind: 'done', want: want(status) });
const C = { c: true, o: false };

function scheduler(t: ExecutionContext): TestScheduler {
  return new TestScheduler((actual, expected) => t.deepEqual(actual, expected));
}

/** The sources of a follow whose want is building until `overAt` (virtual ms), then `finalStatus`. */
function sources(
  s: TestScheduler,
  over: { at: number; status?: WantStatus },
  parts: Partial<Pick<FollowSources<Want>, 'events$' | 'sigint$' | 'catchUp$'>> & { reads?: number[] },
): FollowSources<Want> {
  return {
    want: want('building'),
    catchUp$: parts.catchUp$ ?? EMPTY,
    events$: parts.events$ ?? NEVER,
    sigint$: parts.sigint$ ?? NEVER,
    readWant: (): Observable<Want> => {
      parts.reads?.push(s.now());
      return timer(READ_MS, s).pipe(map(() => want(s.now() >= over.at ? (over.status ?? 'successful') : 'building')));
    },
    pollMs: POLL_MS,
    scheduler: s,
  };
}

test('an event that concerns the want leads to a read; the want over ends the follow', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable }) => {
    const events$ = hot('10ms o 19ms c', C); // the want is over at 30, the event saying so comes at 30
    expectObservable(followEnding(sources(s, { at: 30 }, { events$ }))).toBe('32ms (d|)', { d: done('successful') });
  });
});

test('a failed or canceled want is an ending too (the caller decides what it means)', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable }) => {
    const events$ = hot('30ms c', C);
    expectObservable(followEnding(sources(s, { at: 30, status: 'upstream_failed' }, { events$ }))).toBe('32ms (d|)', {
      d: done('upstream_failed'),
    });
  });
});

test('Ctrl-C ends the follow at once while the want builds', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable, expectSubscriptions }) => {
    const sigint$ = hot('100ms s');
    const events$ = hot('50ms c', C);
    expectObservable(followEnding(sources(s, { at: Infinity }, { events$, sigint$ }))).toBe('100ms (i|)', { i: { kind: 'interrupted' } });
    expectSubscriptions(events$.subscriptions).toBe('^ 99ms !');
  });
});

test('Ctrl-C after the want is over changes nothing: the first ending wins', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable, expectSubscriptions }) => {
    const sigint$ = hot('33ms s');
    expectObservable(followEnding(sources(s, { at: 30 }, { events$: hot('30ms c', C), sigint$ }))).toBe('32ms (d|)', {
      d: done('successful'),
    });
    expectSubscriptions(sigint$.subscriptions).toBe('^ 31ms !');
  });
});

test('the stream ending while the want builds is stream-ended, after one last read', (t) => {
  const s = scheduler(t);
  s.run(({ cold, expectObservable }) => {
    const events$ = cold('5ms c 10ms |', C);
    expectObservable(followEnding(sources(s, { at: Infinity }, { events$ }))).toBe('18ms (e|)', { e: { kind: 'stream-ended' } });
  });
});

test('the stream ending just after the want finished is done: the last read sees it', (t) => {
  const s = scheduler(t);
  s.run(({ cold, expectObservable }) => {
    // The want is over at 15 but no event said so before the stream ended at 16.
    const events$ = cold('5ms c 10ms |', C);
    expectObservable(followEnding(sources(s, { at: 15 }, { events$ }))).toBe('18ms (d|)', { d: done('successful') });
  });
});

test('the stream failing is an error ending at once', (t) => {
  const s = scheduler(t);
  s.run(({ cold, expectObservable }) => {
    const failure = new Error('the server failed to stream events: disk gone');
    const events$ = cold('5ms c 10ms #', C, failure);
    expectObservable(followEnding(sources(s, { at: Infinity }, { events$ }))).toBe('16ms (x|)', { x: { kind: 'error', error: failure } });
  });
});

test('with no event at all, the periodic poll sees the want over', (t) => {
  const s = scheduler(t);
  s.run(({ expectObservable }) => {
    const reads: number[] = [];
    expectObservable(followEnding(sources(s, { at: 7_000 }, { reads }))).toBe('10002ms (d|)', { d: done('successful') });
    s.flush();
    t.deepEqual(reads, [0, 5_000, 10_000]);
  });
});

test('a burst of events costs one read for the first and one more after it, not one each', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable }) => {
    const reads: number[] = [];
    const events$ = hot('10ms (ccccc) 95ms c c', C); // a burst of five at 10, one more event at 112, another at 113
    expectObservable(followEnding(sources(s, { at: 100 }, { events$, reads }))).toBe('114ms (d|)', { d: done('successful') });
    s.flush();
    // The first read at 0; at 10 one for the burst's first event, and one when it answered for the other four; at
    // 112 one read, which sees the want over before the event at 113 needs its own.
    t.deepEqual(reads, [0, 10, 10 + READ_MS, 112]);
  });
});

test('a read that fails is no ending: the next event reads again', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable }) => {
    const events$ = hot('10ms c 9ms c', C);
    let calls = 0;
    const src = sources(s, { at: 0 }, { events$ });
    const readWant = () => (++calls <= 2 ? throwError(() => new Error('connection reset')) : src.readWant());
    expectObservable(followEnding({ ...src, readWant })).toBe('22ms (d|)', { d: done('successful') });
  });
});

test('a want already over before the follow ends it at once, without watching the stream', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable, expectSubscriptions }) => {
    const events$ = hot('10ms c', C);
    expectObservable(followEnding({ ...sources(s, { at: 0 }, { events$ }), want: want('failed') })).toBe('(d|)', { d: done('failed') });
    expectSubscriptions(events$.subscriptions).toBe([]);
  });
});

test('the events are followed once the runs the want already had are read; a failed read is an error ending', (t) => {
  const s = scheduler(t);
  s.run(({ cold, hot, expectObservable, expectSubscriptions }) => {
    const events$ = hot('10ms c', C);
    expectObservable(followEnding(sources(s, { at: 10 }, { events$, catchUp$: cold('5ms |') }))).toBe('12ms (d|)', { d: done('successful') });
    expectSubscriptions(events$.subscriptions).toBe('5ms ^ 6ms !');
  });
  const s2 = scheduler(t);
  s2.run(({ cold, expectObservable }) => {
    const failure = new Error('No job run with id r-9');
    expectObservable(followEnding(sources(s2, { at: 0 }, { catchUp$: cold<never>('5ms #', undefined, failure) }))).toBe('5ms (x|)', {
      x: { kind: 'error', error: failure },
    });
  });
});
