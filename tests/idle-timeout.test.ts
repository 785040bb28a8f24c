/**
 * The daemon's idle timeout on virtual time: the operator over "is the server busy" (requests in flight, job runs
 * running), with busy/quiet sequences as marbles. How busy$ is built from a real server and a real platform is
 * checked in server-busy.test.ts, and the whole daemon shutting down when idle in server-lifecycle.test.ts.
 */
import test from 'ava';
import { TestScheduler } from 'rxjs/testing';
import { idleTimeout } from '../lib/server/idle-timeout.js';

const scheduler = (t: { deepEqual: (a: unknown, e: unknown) => void }) => new TestScheduler((actual, expected) => t.deepEqual(actual, expected));
const B = { b: true, q: false };

test('a server quiet from the start times out after the timeout, once, with how long it was idle', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable }) => {
    expectObservable(hot('q', B).pipe(idleTimeout(1000, s))).toBe('1000ms (i|)', { i: 1000 });
  });
});

test('never times out while busy, however long', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable }) => {
    expectObservable(hot('q 10ms b', B).pipe(idleTimeout(1000, s)), '^ 100000ms !').toBe('');
  });
});

test('a request while idle restarts the timer: the timeout counts from the end of the last busy spell', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable }) => {
    // Quiet from 0, a request from 500 to 501, a job run from 899 to 3899, quiet after.
    expectObservable(hot('q 499ms b q 397ms b 2999ms q', B).pipe(idleTimeout(1000, s))).toBe('4899ms (i|)', { i: 1000 });
  });
});

test('activity that keeps coming keeps the server up; it times out once it stops', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable }) => {
    const busy = hot('q 600ms b q 600ms b q 600ms b q', B); // requests at 601, 1203, 1805
    expectObservable(busy.pipe(idleTimeout(1000, s))).toBe('2806ms (i|)', { i: 1000 });
  });
});

test('"still quiet" news does not push the timeout back', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable }) => {
    expectObservable(hot('q 300ms q 300ms q', B).pipe(idleTimeout(1000, s))).toBe('1000ms (i|)', { i: 1000 });
  });
});

test('unsubscribing (the server closing for another reason) drops the timer', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable }) => {
    const busy = hot('q', B);
    expectObservable(busy.pipe(idleTimeout(1000, s)), '^ 500ms !').toBe('');
  });
});

test('a timeout beyond setTimeout ceiling (1000 h) waits the whole time, not 1 ms', (t) => {
  const s = scheduler(t);
  s.run(({ hot, expectObservable }) => {
    const thousandHours = 1000 * 3600_000;
    expectObservable(hot('q', B).pipe(idleTimeout(thousandHours, s))).toBe(`${thousandHours}ms (i|)`, { i: thousandHours });
  });
});
