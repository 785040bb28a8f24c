/** The request validator words its 400s from the schemas: the field, what it must be, what came. */
import test from 'ava';
import { Type } from '@sinclair/typebox';
import { CreateWantBodySchema, WantListQuerySchema } from '../lib/api/schemas/wants.js';
import { HttpError } from '../lib/server/http-error.js';
import { validateBody, validateQuery, validateValue } from '../lib/server/validate.js';

const use = { what: 'a want', example: '{"partitions": ["ok/a"]}' };

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof HttpError && err.status === 400) return err.message;
    throw err;
  }
  throw new Error('no 400');
}

test('a body that fits comes back typed; one that does not is a 400 naming the field, what it must be and what came', (t) => {
  t.deepEqual(validateBody(CreateWantBodySchema, { partitions: ['ok/a'], ttl_seconds: 60 }, use), { partitions: ['ok/a'], ttl_seconds: 60 });
  t.is(messageOf(() => validateBody(CreateWantBodySchema, undefined, use)), 'Expected a JSON body (Content-Type: application/json) like {"partitions": ["ok/a"]}.');
  t.regex(messageOf(() => validateBody(CreateWantBodySchema, [1], use)), /^The body must be a JSON object, got an array/);
  t.is(
    messageOf(() => validateBody(CreateWantBodySchema, {}, use)),
    `Field 'partitions' is required: a non-empty array of at most 10000 partition refs; for example {"partitions": ["ok/a"]}.`,
  );
  t.regex(messageOf(() => validateBody(CreateWantBodySchema, { partitions: ['ok/a', 7] }, use)), /^partitions\[1\] must be a partition ref: .*, got 7\.$/);
  t.is(messageOf(() => validateBody(CreateWantBodySchema, { partitions: ['ok/a'], priority: 1.5 }, use)), "Field 'priority' must be a whole number from -1000000 to 1000000, got 1.5.");
  // 1e400 in the JSON text: JSON.parse reads it as Infinity (JSON.stringify would say null).
  t.is(
    messageOf(() => validateBody(CreateWantBodySchema, JSON.parse('{"partitions": ["ok/a"], "priority": -1e400}'), use)),
    "Field 'priority' must be a whole number from -1000000 to 1000000, got -Infinity (a number past 1.8e308 in size).",
  );
  t.regex(messageOf(() => validateBody(CreateWantBodySchema, { partitions: ['ok/a'], urgency: 1 }, use)), /^Unknown field 'urgency'; a want takes partitions, comment, /);
  t.regex(messageOf(() => validateBody(CreateWantBodySchema, { partitions: ['ok/a'], rebuild: 'x' }, use)), /^Field 'rebuild' must be one of missing, stale, all, absent, got "x"\.$/);
  const nested = Type.Object({ a: Type.Object({ b: Type.Array(Type.Boolean()) }) });
  t.is(messageOf(() => validateBody(nested, { a: { b: [true, 'no'] } }, use)), 'a.b[1] must be true or false, got "no".');
  t.regex(messageOf(() => validateBody(CreateWantBodySchema, { partitions: ['ok/a'], comment: 'x'.repeat(10_001) }, use)), /string of at most 10000 characters, got "x{20,}\.\.\.\.$/, 'a long value is cut');
});

test('query parameters: digits read as numbers, empty as absent, unknown, repeated or out of range a 400', (t) => {
  t.deepEqual(validateQuery(WantListQuerySchema, { limit: '5', offset: '', order: 'desc' }), { limit: 5, order: 'desc' });
  t.regex(messageOf(() => validateQuery(WantListQuerySchema, { limit: '5', other: 'x' })), /^Unknown query parameter 'other'; this path takes .*limit.*status/);
  t.is(messageOf(() => validateQuery(WantListQuerySchema, { limit: '5000' })), `Query parameter 'limit' must be a whole number from 1 to 1000, got "5000".`);
  t.is(messageOf(() => validateQuery(WantListQuerySchema, { offset: '-1' })), `Query parameter 'offset' must be a whole number of at least 0, got "-1".`);
  t.regex(messageOf(() => validateQuery(WantListQuerySchema, { status: 'nope' })), /^Query parameter 'status' must be one of idle, building, /);
  t.regex(messageOf(() => validateQuery(WantListQuerySchema, { order: ['asc', 'desc'] })), /^Query parameter 'order' must be given once, as one of asc, desc\.$/);
  t.is(validateValue(Type.Integer({ minimum: 1 }), 3, 'An id'), 3);
  t.is(messageOf(() => validateValue(Type.Integer({ minimum: 1 }), 'x', 'An id')), 'An id must be a whole number of at least 1, got "x".');
});
