/**
 * fast-check arbitraries from the JSON Schemas of the OpenAPI document: values that fit a schema (bounded: short
 * strings and arrays, small numbers), and values that mostly do not (any JSON, or a fitting object with one field
 * replaced by any JSON). `hints` supply realistic values for strings a schema only describes (partition refs).
 */
import fc from 'fast-check';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Schema = { [k: string]: Json };

export interface SchemaArbitraries {
  /** Values that fit the schema. */
  fitting(schema: Json): fc.Arbitrary<Json>;
  /** Mostly values that do not fit (any of them may fit by chance). */
  breaking(schema: Json): fc.Arbitrary<Json>;
}

export interface Hints {
  /** Partition refs, most of them ones the graph produces. */
  refs: readonly string[];
  /** Realistic values of string properties by name (a backfill's `pattern`). */
  properties?: Readonly<Record<string, readonly string[]>>;
}

export function schemaArbitraries(components: { [name: string]: Json }, hints: Hints): SchemaArbitraries {
  const resolve = (schema: Json): Schema => {
    let s = schema as Schema;
    while (typeof s.$ref === 'string') s = components[s.$ref.replace('#/components/schemas/', '')] as Schema;
    return s;
  };

  const fitting = (schema: Json, depth = 0): fc.Arbitrary<Json> => {
    const s = resolve(schema);
    if (Array.isArray(s.anyOf)) return fc.oneof(...s.anyOf.map((v) => fitting(v, depth)));
    if ('const' in s) return fc.constant(s.const!);
    switch (s.type) {
      case 'string': {
        if (typeof s.pattern === 'string' || s['x-expects'] !== undefined) {
          // A partition ref: one the graph produces, or any that has the shape.
          const re = new RegExp(String(s.pattern ?? '.*'));
          return fc.oneof(
            { arbitrary: fc.constantFrom(...hints.refs), weight: 6 },
            { arbitrary: fc.string({ minLength: 1, maxLength: 30 }).filter((x) => re.test(x)), weight: 1 },
          );
        }
        const max = Math.min(typeof s.maxLength === 'number' ? s.maxLength : 40, 40);
        return s.format === 'date-time' ? fc.date({ noInvalidDate: true }).map((d) => d.toISOString()) : fc.string({ maxLength: max });
      }
      case 'integer':
        // The schema's own bounds, however large: fast-check leans to small values and to the extremes.
        return fc.integer({ min: Number(s.minimum ?? -1_000_000), max: Number(s.maximum ?? 1_000_000) });
      case 'number':
        return fc.double({ min: Number(s.minimum ?? -1000), max: Number(s.maximum ?? 1000), noNaN: true });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array': {
        const min = Number(s.minItems ?? 0);
        return fc.array(depth > 3 ? fc.constant(null) : fitting(s.items ?? {}, depth + 1), { minLength: min, maxLength: Math.max(min, Math.min(Number(s.maxItems ?? 4), 4)) });
      }
      case 'object': {
        const properties = (s.properties ?? {}) as { [k: string]: Json };
        const required = (s.required ?? []) as string[];
        const record: { [k: string]: fc.Arbitrary<Json> } = {};
        for (const [k, v] of Object.entries(properties)) {
          const hinted = hints.properties?.[k];
          record[k] = hinted ? fc.oneof({ arbitrary: fc.constantFrom(...hinted), weight: 3 }, { arbitrary: fitting(v, depth + 1), weight: 1 }) : fitting(v, depth + 1);
        }
        return fc.record(record, { requiredKeys: required }) as fc.Arbitrary<Json>;
      }
      default:
        return fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;
    }
  };

  const breaking = (schema: Json): fc.Arbitrary<Json> => {
    const s = resolve(schema);
    const anyJson = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;
    if (s.type !== 'object') return anyJson;
    const keys = Object.keys((s.properties ?? {}) as object);
    const oneFieldBroken = fc
      .tuple(fitting(s), fc.constantFrom(...keys, 'unknown_field'), anyJson)
      .map(([ok, key, bad]) => ({ ...(ok as { [k: string]: Json }), [key]: bad }));
    return fc.oneof(anyJson, oneFieldBroken);
  };

  return { fitting: (schema) => fitting(schema), breaking };
}
