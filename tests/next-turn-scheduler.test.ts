/**
 * Steps start on the event loop's next turn (lib/system/next-turn-scheduler.ts), so a chain of steps that write
 * nothing (a start-up pass over many waiting wants) lets the I/O that is ready in between: a request is answered
 * while the chain goes on. On RxJS's asapScheduler (microtasks) the same chain ran to its end first.
 */
import test from 'ava';
import { Subject, asapScheduler, of, type SchedulerLike } from 'rxjs';
import { stepInBatches } from '../lib/orchestrator/step-in-batches.js';
import { nextTurnScheduler } from '../lib/system/next-turn-scheduler.js';

/** Runs a chain of `steps` steps, each asking for the next, and says how many had run when a setImmediate fired. */
function chain(scheduler: SchedulerLike, steps: number): Promise<{ before: number; total: number }> {
  return new Promise((resolve) => {
    const inputs = new Subject<number>();
    let ran = 0;
    let before = -1;
    setImmediate(() => (before = ran));
    inputs
      .pipe(
        stepInBatches((batch: number[]) => {
          ran++;
          const last = batch[batch.length - 1]!;
          if (last + 1 < steps) inputs.next(last + 1);
          else inputs.complete();
          return of(ran);
        }, scheduler),
      )
      .subscribe({ complete: () => setImmediate(() => resolve({ before, total: ran })) });
    inputs.next(0);
  });
}

test('a chain of steps on the next-turn scheduler lets a callback of the next turn run between its steps', async (t) => {
  const { before, total } = await chain(nextTurnScheduler, 1000);
  t.is(total, 1000);
  t.true(before >= 0 && before < 10, `the callback ran after ${before} of ${total} steps`);
});

test('on asapScheduler (microtasks) the same chain runs to its end before the callback: why steps do not use it', async (t) => {
  const { before, total } = await chain(asapScheduler, 1000);
  t.is(total, 1000);
  t.is(before, 1000);
});

test('work with a delay waits for it; a subscription closed before its turn never runs', async (t) => {
  let ran = 0;
  nextTurnScheduler.schedule(() => ran++).unsubscribe();
  const t0 = Date.now();
  await new Promise<void>((resolve) => nextTurnScheduler.schedule(() => resolve(), 30));
  t.true(Date.now() - t0 >= 25);
  t.is(ran, 0);
});
