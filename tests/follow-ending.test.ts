/**
 * How following a want ends, on virtual time (RxJS TestScheduler): the want read as ended, Ctrl-C, the server
 * ending or failing the stream, and the periodic read that catches a missed event. Nothing here waits on a clock.
 */
import test from 'ava';
import { type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { WantView } from '../lib/client/platform-client.js';
import { followEnding } from '../lib/cli/follow-ending.js';

const want = (status: string) => ({ want_id: 'w-1', status }) as unknown as WantView;
const building = want('building');
const successful = want('successful');
const failed = want('failed');

const scheduler = (t: { deepEqual: (a: unknown, b: unknown) => void }) => new TestScheduler((actual, expected) => t.deepEqual(actual, expected));

test('an event that concerns the build leads to a read; the read that shows the want ended ends the follow', (t) => {
  scheduler(t).run(({ hot, cold, expectObservable }) => {
    let reads = 0;
    // The want is building until the third read.
    const readWant = (): Observable<WantView> => cold('--(w|)', { w: ++reads >= 3 ? successful : building });
    const relevant$ = hot('-----e--e---------');
    expectObservable(followEnding({ relevant$, readWant, interrupt$: hot('-'), pollMs: 1000 })).toBe('----------(d|)', {
      d: { kind: 'done', want: successful },
    });
  });
});

test('a newer reason to read replaces a read in flight, so the last word is read', (t) => {
  scheduler(t).run(({ hot, cold, expectObservable }) => {
    let reads = 0;
    // Read 2 (at 3) is slow and would answer "building"; read 3 (at 4) answers first-hand "failed".
    const readWant = (): Observable<WantView> => {
      reads++;
      return reads === 2 ? cold('-----(w|)', { w: building }) : cold('-(w|)', { w: reads >= 3 ? failed : building });
    };
    const relevant$ = hot('---ee---');
    expectObservable(followEnding({ relevant$, readWant, interrupt$: hot('-'), pollMs: 1000 })).toBe('-----(d|)', { d: { kind: 'done', want: failed } });
  });
});

test('with no events at all, the periodic read finds the ended want', (t) => {
  scheduler(t).run(({ hot, cold, expectObservable }) => {
    let reads = 0;
    const readWant = (): Observable<WantView> => cold('(w|)', { w: ++reads >= 3 ? successful : building });
    // Reads at 0, 5000 and 10000: the third says successful.
    expectObservable(followEnding({ relevant$: hot('-'), readWant, interrupt$: hot('-'), pollMs: 5000 })).toBe('10000ms (d|)', {
      d: { kind: 'done', want: successful },
    });
  });
});

test('Ctrl-C ends the follow at once, whatever else is going on', (t) => {
  scheduler(t).run(({ hot, cold, expectObservable }) => {
    const readWant = () => cold('-(w|)', { w: building });
    expectObservable(followEnding({ relevant$: hot('--e-e-e-e'), readWant, interrupt$: hot('-----i'), pollMs: 1000 })).toBe('-----(i|)', {
      i: { kind: 'interrupted' },
    });
  });
});

test('the server ending the stream: one last read says whether the want ended just before, else stream-ended', (t) => {
  scheduler(t).run(({ hot, cold, expectObservable }) => {
    const stillBuilding = () => cold('-(w|)', { w: building });
    expectObservable(followEnding({ relevant$: hot('--e--|'), readWant: stillBuilding, interrupt$: hot('-'), pollMs: 1000 })).toBe('------(s|)', {
      s: { kind: 'stream-ended' },
    });
  });
  scheduler(t).run(({ hot, cold, expectObservable }) => {
    let reads = 0;
    const endsLast = () => cold('-(w|)', { w: ++reads >= 3 ? successful : building });
    expectObservable(followEnding({ relevant$: hot('--e--|'), readWant: endsLast, interrupt$: hot('-'), pollMs: 1000 })).toBe('------(d|)', {
      d: { kind: 'done', want: successful },
    });
  });
  scheduler(t).run(({ hot, cold, expectObservable }) => {
    // The server is gone: the last read fails, and the stream's end is the answer.
    const gone = () => cold<WantView>('-#', undefined, new Error('ECONNREFUSED'));
    expectObservable(followEnding({ relevant$: hot('--e--|'), readWant: gone, interrupt$: hot('-'), pollMs: 1000 })).toBe('------(s|)', {
      s: { kind: 'stream-ended' },
    });
  });
});

test('the stream failing ends the follow with its error', (t) => {
  scheduler(t).run(({ hot, cold, expectObservable }) => {
    const error = new Error('the server failed to stream events');
    const readWant = () => cold('-(w|)', { w: building });
    expectObservable(followEnding({ relevant$: hot('--e-#', {}, error), readWant, interrupt$: hot('-'), pollMs: 1000 })).toBe('----(x|)', {
      x: { kind: 'error', error },
    });
  });
});
