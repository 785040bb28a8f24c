/**
 * The room an image keeps its encoded records in: carved from the room set aside first, then from slabs, each
 * piece its own bytes.
 */
import test from 'ava';
import { ByteArena, reserveBytes } from '../lib/state/byte-arena.js';

test('pieces come from the room set aside while it lasts, then from new slabs, and never overlap', (t) => {
  const reserved = reserveBytes(1000)!;
  const arena = new ByteArena(reserved);
  const pieces = [arena.take(400), arena.take(600), arena.take(1), arena.take(5 << 20)];
  t.is(pieces[0]!.buffer, reserved.buffer, 'the first pieces are carved from the room set aside');
  t.is(pieces[1]!.buffer, reserved.buffer);
  t.is(pieces[1]!.byteOffset, reserved.byteOffset + 400);
  t.not(pieces[2]!.buffer, reserved.buffer, 'past its end, a slab of its own');
  t.is(pieces[3]!.length, 5 << 20, 'a piece larger than a slab gets a slab its size');
  pieces.forEach((p, i) => p.fill(i + 1));
  t.deepEqual(
    pieces.map((p) => p.every((b) => b === pieces.indexOf(p) + 1)),
    [true, true, true, true],
    'writing one piece changes no other',
  );
  t.is(reserveBytes(2 ** 60), undefined, 'room the system refuses is none, not a failed start');
});
