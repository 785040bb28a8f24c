/** `/api/events`: the build event log as JSON. */
import { Type } from '@sinclair/typebox';
import { EVENT_TYPES } from '../../events/build-event.js';
import { IsoTime, WholeNumber } from './common.js';
import { MAX_EVENTS_PER_READ } from '../page.js';

export { MAX_EVENTS_PER_READ };
/** A page of events ends early past this many bytes of JSON (it holds one event at least): read on from its last id. */
export const EVENT_PAGE_BYTES = 4 * 1024 * 1024;

/**
 * An event: the envelope, and its payload under the field its `type` names (`{"type": "want_created",
 * "want_created": {...}}`), one variant per type. The payloads are the messages of proto/platform/v1 in snake_case;
 * the document leaves their fields open rather than restate the .proto.
 */
export const EventViewSchema = Type.Union(
  EVENT_TYPES.map((type) =>
    Type.Object(
      {
        event_id: Type.Integer({ minimum: 1 }),
        timestamp: IsoTime,
        type: Type.Literal(type),
        [type]: Type.Object({}, { additionalProperties: true }),
      },
      { additionalProperties: false },
    ),
  ),
  { $id: 'EventView' },
);

export const EventPageSchema = Type.Object(
  {
    data: Type.Array(EventViewSchema),
    latest_id: Type.Integer({ minimum: 0 }),
    first_id: Type.Integer({ minimum: 1, description: 'The first event still in the log: 1 unless retention.events_keep compacted older ones.' }),
    offset: Type.Integer({ minimum: 0 }),
    limit: Type.Integer({ minimum: 1 }),
  },
  { $id: 'EventPage', additionalProperties: false },
);

export const EventListQuerySchema = Type.Object({
  offset: Type.Optional(WholeNumber(0, Number.MAX_SAFE_INTEGER, 'Events after this id; default: before the first still in the log.')),
  limit: Type.Optional(WholeNumber(1, MAX_EVENTS_PER_READ, `Default and most: ${MAX_EVENTS_PER_READ}.`)),
});

export const EventStreamQuerySchema = Type.Object({
  after: Type.Optional(WholeNumber(0, Number.MAX_SAFE_INTEGER, 'Resume after this event id (Last-Event-ID wins); default: now.')),
});

export const EventIdSchema = WholeNumber(1, Number.MAX_SAFE_INTEGER);

/** What EventSource sends on reconnect: the id of the last event it saw. */
export const LastEventIdSchema = Type.String({ pattern: '^\\d+$', maxLength: 16, 'x-expects': 'an event id (a whole number)' });
