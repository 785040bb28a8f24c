/** How deep the native launcher holds runs past the cap (lib/executor/hold-depth.ts): deep for short runs only. */
import test from 'ava';
import { HOLD_MOST, SHORT_RUN_MS, holdDepth } from '../lib/executor/hold-depth.js';

test('before any run ended, and after a long one, the launcher holds as many as the cap', (t) => {
  t.is(holdDepth(2, undefined), 2);
  t.is(holdDepth(2, SHORT_RUN_MS), 2);
  t.is(holdDepth(1, 600_000), 1);
});

test('after a short run it holds HOLD_MOST, or the cap where that is more', (t) => {
  t.is(holdDepth(2, 1.2), HOLD_MOST);
  t.is(holdDepth(1, SHORT_RUN_MS - 1), HOLD_MOST);
  t.is(holdDepth(100, 5), 100);
});
