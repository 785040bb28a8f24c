/**
 * Building blocks of the API's schemas (TypeBox: each schema is JSON Schema, so the same object validates a request
 * and is printed into the OpenAPI document). A schema with an `$id` becomes a named component of the document.
 */
import { Type, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox';
import { BIDI_RANGES, BIDI_RANGES_SOURCE, CONTROL_RANGES, CONTROL_RANGES_SOURCE } from '../../control-characters.js';

/** Mutual assignability: a schema and the interface it describes may not drift apart (checked at compile time). */
export type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** One of a fixed set of strings (a union of literals, `anyOf` of `const` in JSON Schema). */
export function OneOf<T extends string>(values: readonly T[], options: { description?: string; $id?: string } = {}): TUnion<Array<TLiteral<T>>> {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );
}

export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** An ISO 8601 time as the server writes it (`Date.prototype.toISOString`). */
export const IsoTime = Type.String({ format: 'date-time' });

export const MAX_REF_LENGTH = 1024;

/**
 * A partition ref's shape (whether a job produces it is the graph's question): not blank, at most 1024
 * characters, no control characters (C0, DEL, C1: lib/control-characters.ts).
 */
export const PartitionRef = Type.String({
  title: 'partition ref',
  minLength: 1,
  maxLength: MAX_REF_LENGTH,
  pattern: `^(?=[\\s\\S]*\\S)[^${CONTROL_RANGES_SOURCE}${BIDI_RANGES_SOURCE}]*$`,
  'x-expects': `a partition ref: a non-empty string of at most ${MAX_REF_LENGTH} characters without control characters (${CONTROL_RANGES}) or bidirectional controls (${BIDI_RANGES}), like 'daily/revenue/date=2026-01-05'`,
});

/** A whole number in a range (the range is part of every message about it). */
export function WholeNumber(minimum: number, maximum: number, description?: string) {
  return Type.Integer({ minimum, maximum, ...(description ? { description } : {}) });
}
