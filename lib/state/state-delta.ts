/**
 * A delta of the state against the image it grew from: what `snapshot-delta.bin` holds beside `snapshot.bin`.
 *
 * Why: an image costs its whole state to write (1.7-2.1 s of the loop at a million events, whatever changed), so it
 * is written every 100,000 events, and a kill -9 just before the next one left a start to replay up to that many
 * (~2 s on top of loading the image). After an image, the store's maps are runs over the image's arrays and every
 * change opens the nodes on its path (ordered-map.ts), so what changed since the image is found by walking the opened
 * nodes alone (`changesSince`). A delta of those changes, written every quarter of the image's interval, costs what
 * changed; a start loads the image, sets the delta's entries on its maps (the same runs and nodes a fold would have
 * made: the next image still copies what did not change) and replays only the events after the delta.
 *
 * Each delta is of everything since the image, not since the last delta: one file, replaced, never a chain.
 */
import type { BuildState } from './build-state.js';
import { compareNumbers, type MapChange, type Values } from './ordered-map.js';
import { PAUSE_POINT, SET_SLICE, decodeSet, encodeSet, namedMaps, withMaps, type AnyMap, type MapSpec, type Scalars } from './state-image.js';

/** One line of a delta: the scalars, a map begins, entries set in it, keys gone from it, a large set's members. */
export type DeltaPiece =
  | ['scalars', Scalars]
  | ['map', string]
  | ['put', unknown[], unknown[]]
  | ['gone', unknown[]]
  | ['members', unknown, unknown[], boolean];

/** Entries a line at most: a line is made and packed at once, a few ms of the loop. */
const ENTRIES_A_LINE = 256;

/** The image a delta is written against: each map's arrays as the image loaded them, and the image's identity. */
export interface DeltaBase {
  /** The image file's own id (its header's `image_id`): a delta names it, and fits no other image. */
  readonly image_id: string;
  readonly last_event_id: number;
  readonly maps: ReadonlyMap<string, { keys: readonly unknown[]; values: Values<unknown> }>;
}

/**
 * The base for deltas of states grown from `image` (a state as an image loads or holds it, each map one run), or
 * undefined when a map of it is not one run.
 */
export function deltaBaseOf(image: BuildState, imageId: string): DeltaBase | undefined {
  const maps = new Map<string, { keys: readonly unknown[]; values: Values<unknown> }>();
  for (const [name, map] of namedMaps(image)) {
    const arrays = map.baseArrays();
    if (!arrays) return undefined;
    maps.set(name, arrays);
  }
  return { image_id: imageId, last_event_id: image.last_event_id, maps };
}

/**
 * The lines of a delta of `state` against `base`, with points between them where a writer may let the loop go.
 * Costs the nodes opened since the image and the entries changed (a set of many members is written a slice a line).
 */
export function* deltaPieces(state: BuildState, base: DeltaBase): Generator<DeltaPiece | typeof PAUSE_POINT> {
  yield ['scalars', { last_event_id: state.last_event_id, wants_sla_missed: state.wants_sla_missed, created: state.created }];
  for (const [name, map, spec] of namedMaps(state)) {
    const from = base.maps.get(name);
    if (!from) throw new Error(`the delta's base has no map ${name}`);
    yield ['map', name];
    let keys: unknown[] = [];
    let values: unknown[] = [];
    let gone: unknown[] = [];
    for (const change of map.changesSince(from)) {
      if (change.length === 1) {
        gone.push(change[0]);
        if (gone.length === ENTRIES_A_LINE) {
          yield ['gone', gone];
          gone = [];
        }
        continue;
      }
      const [key, value] = change;
      if (spec.kind === 'sets' && (value as AnyMap).size > SET_SLICE) {
        // One set can hold every active want (100,000 waiting on one input): its members go a slice a line, after
        // the entries before it (a map's entries come in key order).
        if (keys.length > 0) yield ['put', keys, values];
        keys = [];
        values = [];
        const flat = encodeSet(value);
        for (let at = 0; at < flat.length; at += 2 * SET_SLICE) {
          yield ['members', key, flat.slice(at, at + 2 * SET_SLICE), at + 2 * SET_SLICE >= flat.length];
          yield PAUSE_POINT;
        }
        continue;
      }
      keys.push(key);
      values.push(spec.kind === 'sets' ? encodeSet(value) : value);
      if (keys.length === ENTRIES_A_LINE) {
        yield ['put', keys, values];
        keys = [];
        values = [];
      }
    }
    if (keys.length > 0) yield ['put', keys, values];
    if (gone.length > 0) yield ['gone', gone];
  }
}

/** A key of a map of `spec`: a number for a map of numbers, a string for the others; throws on anything else. */
function keyFor(spec: MapSpec, key: unknown, name: string): unknown {
  if (spec.compare === compareNumbers ? typeof key === 'number' && Number.isFinite(key) : typeof key === 'string') return key;
  throw new Error(`a key of no use in the map ${name}: ${String(key)}`);
}

/** A value as the delta holds it, made what the map keeps; throws on what the map cannot hold. */
function valueFor(spec: MapSpec, value: unknown, name: string): unknown {
  if (spec.kind === 'sets') return decodeSet(value);
  if (spec.kind === 'plain' ? value === true || typeof value === 'string' : typeof value === 'object' && value !== null) return value;
  throw new Error(`a value of no use in the map ${name}`);
}

/**
 * `image` (the state its image loaded) with a delta's lines set on its maps. Throws on anything that is not a whole
 * delta of this code's state (an unknown map, a line outside a map, a set's members cut off, no scalars): the caller
 * then replays the log from the image.
 */
export function applyDelta(image: BuildState, pieces: Iterable<unknown>): BuildState {
  const maps = new Map<string, { map: AnyMap; spec: MapSpec; puts: Array<MapChange<unknown, unknown>>; gone: Array<MapChange<unknown, unknown>> }>();
  for (const [name, map, spec] of namedMaps(image)) maps.set(name, { map, spec, puts: [], gone: [] });
  let current: { map: AnyMap; spec: MapSpec; puts: Array<MapChange<unknown, unknown>>; gone: Array<MapChange<unknown, unknown>> } | undefined;
  let name = '';
  let scalars: Scalars | undefined;
  let members: { key: unknown; flat: unknown[] } | undefined;
  for (const piece of pieces) {
    if (!Array.isArray(piece)) throw new Error('a delta line that is not a list');
    const [kind, a, b, c] = piece as [unknown, unknown, unknown, unknown];
    if (members && kind !== 'members') throw new Error(`the members of a set in ${name} are cut off`);
    if (kind === 'scalars' && typeof a === 'object' && a !== null) scalars = a as Scalars;
    else if (kind === 'map' && typeof a === 'string') {
      current = maps.get(a);
      name = a;
      if (!current) throw new Error(`a delta of a map this state does not have: ${a}`);
    } else if (!current) throw new Error(`a delta line of kind '${String(kind)}' outside a map`);
    else if (kind === 'put' && Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      for (let i = 0; i < a.length; i++) current.puts.push([keyFor(current.spec, a[i], name), valueFor(current.spec, b[i], name)]);
    } else if (kind === 'gone' && Array.isArray(a)) {
      for (const key of a) current.gone.push([keyFor(current.spec, key, name)]);
    } else if (kind === 'members' && current.spec.kind === 'sets' && Array.isArray(b) && typeof c === 'boolean') {
      if (members && members.key !== a) throw new Error(`the members of a set in ${name} are cut off`);
      members ??= { key: keyFor(current.spec, a, name), flat: [] };
      for (const x of b) members.flat.push(x);
      if (c) {
        current.puts.push([members.key, decodeSet(members.flat)]);
        members = undefined;
      }
    } else throw new Error(`a delta line of unknown kind '${String(kind)}'`);
  }
  if (members) throw new Error(`the members of a set in ${name} are cut off`);
  if (!scalars || typeof scalars.last_event_id !== 'number' || !(scalars.last_event_id > image.last_event_id)) throw new Error('a delta without its scalars');
  // Each map's changes at once, in key order (withChanges throws on any other): the nodes on their paths made once.
  return withMaps({ ...image, ...scalars }, (mapName) => {
    const m = maps.get(mapName)!;
    return m.map.withChanges(m.puts).withChanges(m.gone);
  });
}

