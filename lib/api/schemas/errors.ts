/** How the API says no: every JSON error body, and the Connect protocol's for PlatformService. */
import { Type, type Static } from '@sinclair/typebox';
import type { ConnectErrorBody, ErrorBody } from '../error-body.js';
import { OneOf, type SameType } from './common.js';

export const ErrorBodySchema = Type.Object(
  {
    error: Type.String({ minLength: 1 }),
    want_id: Type.Optional(Type.String({ description: 'The want the error is about.' })),
    first_event_id: Type.Optional(Type.Integer({ minimum: 1, description: 'On a 410 for compacted events: the first event still in the log.' })),
    stopping: Type.Optional(
      Type.Literal(true, { description: 'On a 503 while the server stops: the request was not carried out; run it again (the next CLI command starts a new server).' }),
    ),
  },
  { $id: 'ErrorBody', additionalProperties: false },
);
true satisfies SameType<Static<typeof ErrorBodySchema>, ErrorBody>;

const CONNECT_CODES = [
  'canceled',
  'unknown',
  'invalid_argument',
  'deadline_exceeded',
  'not_found',
  'already_exists',
  'permission_denied',
  'resource_exhausted',
  'failed_precondition',
  'aborted',
  'out_of_range',
  'unimplemented',
  'internal',
  'unavailable',
  'data_loss',
  'unauthenticated',
] as const;

export const ConnectErrorBodySchema = Type.Object(
  { code: OneOf(CONNECT_CODES), message: Type.String() },
  { $id: 'ConnectErrorBody' },
);
true satisfies SameType<Static<typeof ConnectErrorBodySchema>, ConnectErrorBody>;
