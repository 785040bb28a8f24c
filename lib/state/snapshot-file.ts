/**
 * The state on disk: `.platform/snapshot.bin` (the state's image, state-image.ts) and `.platform/compacted.bin` (a
 * compaction base: the records of snapshot.ts), each written atomically (a temporary file, fsynced, renamed).
 *
 * Layout of both: a JSON header line (`SnapshotHeader`), then frames, each a 4-byte little-endian length and a
 * MessagePack array of lines, the last frame `[['end', count]]` (an image's `[['end', count, crc32]]`, the CRC-32 of
 * the frames before it: its records are decoded when read, so the whole file is checked when it is loaded).
 * MessagePack records (msgpackr's `useRecords`) name a kind's fields once per frame (an image: once for the whole file): a quarter of the
 * JSON's size, and decoded three to four times faster than JSON.parse. Written a frame at a time, each frame sized to
 * a few ms of the event loop, so a snapshot of a million records never holds up a step.
 *
 * A snapshot is only a shortcut: one that is unreadable, truncated, changed, of another format or program version,
 * or ahead of the log is ignored (a full replay follows), never trusted. A compaction base is the truth: any later
 * version of platform that knows its record format reads it.
 */
import { StartStopped } from './store-start.js';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { open, readFile, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { Packr } from 'msgpackr';
import type { BuildState } from './build-state.js';
import { SNAPSHOT_FORMAT, SNAPSHOT_FORMATS_READ, addLine, fromSnapshot, snapshotFromLines, snapshotLines, type Snapshot, type SnapshotLine } from './snapshot.js';
import { recordLinesOfImage } from './image-records.js';
import type { ImageCarry, LoadedImage } from './image-carry.js';
import { BUSY_FRAME_MS } from './frame-budget.js';
import { PAUSE_POINT, imagePieces, stateFromImage, type ImagePiece } from './state-image.js';
import { applyDelta, deltaPieces, type DeltaBase } from './state-delta.js';

/**
 * The format of snapshot.bin: frames of a state image (state-image.ts), the end line carrying a CRC-32 of the frames
 * before it, since its records are decoded only when read, long after the file was checked. The compaction base
 * keeps the records format (`SNAPSHOT_FORMAT`), which later versions must read.
 */
export const IMAGE_FORMAT = 9;

/** The format of snapshot-delta.bin: frames of a delta's lines (state-delta.ts), ended as an image's are. */
export const DELTA_FORMAT = 1;

/** Where the delta of the snapshot at `snapshotPath` is kept: `snapshot-delta.bin` beside `snapshot.bin`. */
export function deltaPathOf(snapshotPath: string): string {
  return join(dirname(snapshotPath), `${basename(snapshotPath, '.bin')}-delta.bin`);
}

/** A snapshot file that ends before it should: it was cut short, as a disk that filled or a copy cut off leaves it. */
class CutShortError extends Error {}

/**
 * What a snapshot is valid for: a hash of the state stage's own compiled code (reduce and its records). A
 * program version would not do: the fold can change between two builds of the same version.
 */
export function stateCodeFingerprint(): string {
  // The CLI's bundle runs its own copy of the state code: it carries the fingerprint of the files it was built from
  // (lib/cli/build-bundle.mjs), which a later compile of dist/lib/state alone does not change.
  if (typeof __PLATFORM_STATE_CODE__ === 'string') return __PLATFORM_STATE_CODE__;
  // Once a process: the files were read at every snapshot, and a compile while it runs must not change what it
  // vouches for (the code it runs was loaded before).
  return (fingerprint ??= hashStateCode());
}

let fingerprint: string | undefined;

function hashStateCode(): string {
  // The state stage's folder, named rather than taken as this module's own.
  const dir = fileURLToPath(new URL('../state/', import.meta.url));
  const files = readdirSync(dir).filter((n) => n.endsWith('.js')).sort();
  // Run from sources (no compiled files here), there is nothing to vouch for a snapshot: none is trusted.
  if (files.length === 0) return '';
  const hash = createHash('sha256');
  for (const name of files) hash.update(name).update(readFileSync(join(dir, name)));
  return hash.digest('hex').slice(0, 16);
}

/** The first line of a snapshot file. */
export interface SnapshotHeader {
  version: string;
  format: number;
  last_event_id: number;
  /** The timestamp of the event at `last_event_id`: a snapshot of another log of the same length fails it. */
  last_event_timestamp: number;
  /** An image's own id, random: a delta names the image it was written against (`base_image_id`). */
  image_id?: string;
  /** A delta's: the image it applies to. */
  base_image_id?: string;
  /**
   * An image's: the records format (snapshot.ts SNAPSHOT_FORMAT) its record maps hold, so a later version of platform
   * reads its records when it cannot use the image itself (image-records.ts). Absent in images written before.
   */
  records_format?: number;
}

/** The log as far as a snapshot needs to know it: its newest id, and the timestamp of any event. */
export interface LogProbe {
  latestId(): number;
  /** The first event still in the log (above 1 once compacted). */
  firstId(): number;
  timestampOf(id: number): Promise<number | undefined>;
}

/** Set in the CLI's bundle only (esbuild's `define`): the fingerprint of the state code bundled. */
declare const __PLATFORM_STATE_CODE__: string | undefined;

let writes = 0;

/** Lines in one frame of encodeSnapshotFile (tests, tools): large enough to be cheap. */
const LINES_PER_FRAME = 2000;

/**
 * How long making one frame may hold the event loop, asked before each frame: a store's background snapshot says
 * (frame-budget.ts); a writer without a log (tests, tools) takes frames of 5 ms. A frame of 2,000 active wants took
 * ~25 ms, the p99 of reads on a daemon writing its snapshot. A frame ends when its lines took half the budget to make
 * (packing the frame takes about as long again). Not a count of lines foreseen from the last frame: an image's lines
 * differ a hundredfold in cost (a line of 256 keys against one of 256 records packed), and a count fitted to cheap
 * lines held the loop 0.3-0.5 s on the lines after them (docs/BENCHMARKS.md, session 10).
 */
export type FrameBudget = () => number;
const FIVE_MS: FrameBudget = () => BUSY_FRAME_MS;
/** How long to leave the loop to others after a frame that held it `workedMs` (frame-budget.ts); none by default. */
export type FrameRest = (workedMs: number) => number;
const NO_REST: FrameRest = () => 0;

type EndLine = ['end', number] | ['end', number, number];

/** A packer whose record definitions travel inside each frame, so frames decode on their own. */
const packer = (): Packr => new Packr({ useRecords: true, structuredClone: false, mapsAsObjects: true });

/**
 * An image's frames bundle their strings (one UTF-8 block a frame, each string a slice of it): an image is mostly
 * its string table, and its 1.5 million strings at 250,000 wants decode in 344-441 ms this way against 550-704.
 */
const imagePacker = (): Packr => new Packr({ useRecords: true, structuredClone: false, mapsAsObjects: true, bundleStrings: true });

const framePacker = (format: number): Packr => (format === IMAGE_FORMAT || format === DELTA_FORMAT ? imagePacker() : packer());

/** A snapshot file's parts: the header and the lines in order, the end line included (as written, for tests). */
export interface SnapshotFileParts {
  header: SnapshotHeader;
  lines: Array<SnapshotLine | ImagePiece | EndLine>;
}

export function encodeSnapshotFile(parts: SnapshotFileParts): Buffer {
  const p = framePacker(parts.header.format);
  const out: Buffer[] = [Buffer.from(`${JSON.stringify(parts.header)}\n`)];
  const last = parts.lines[parts.lines.length - 1];
  // An end line with a checksum (an image's) gets the checksum of the frames as encoded here.
  const checked = last !== undefined && last[0] === 'end' && last.length === 3;
  const body = checked ? parts.lines.slice(0, -1) : parts.lines;
  let crc = 0;
  for (let i = 0; i < body.length; i += LINES_PER_FRAME) {
    const bytes = frame(p, body.slice(i, i + LINES_PER_FRAME));
    crc = crc32(bytes, crc);
    out.push(bytes);
  }
  if (checked) out.push(frame(p, [['end', last[1], crc]]));
  return Buffer.concat(out);
}

/** The parts of a snapshot file; throws on anything that is not one. */
export function decodeSnapshotFile(data: Buffer): SnapshotFileParts {
  const { header, eol } = parseHeader(data);
  const p = framePacker(header.format);
  const lines: SnapshotFileParts['lines'] = [];
  for (const f of framesOf(data, eol + 1)) {
    const frameLines = p.unpack(f.bytes) as unknown;
    if (!Array.isArray(frameLines)) throw new Error('a frame that is not a list');
    for (const line of frameLines) lines.push(line as SnapshotFileParts['lines'][number]);
  }
  return { header, lines };
}

/** The header line at the start of `data`, and where it ends; throws when there is none. */
function parseHeader(data: Buffer): { header: SnapshotHeader; eol: number } {
  const eol = data.indexOf(0x0a);
  if (eol < 0) throw new CutShortError('no header line');
  const header = JSON.parse(data.subarray(0, eol).toString('utf8')) as unknown;
  if (typeof header !== 'object' || header === null) throw new Error('a header that is not an object');
  return { header: header as SnapshotHeader, eol };
}

function frame(p: Packr, lines: readonly unknown[]): Buffer {
  const body = p.pack(lines);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(body.length);
  return Buffer.concat([length, body]);
}

/**
 * Removes what earlier processes left beside the snapshot: temporary files of writes they did not finish (killed
 * mid-write), and snapshots of the earlier formats (`snapshot.json`, `snapshot.jsonl`), which nothing reads.
 */
export async function removeSnapshotLeftovers(path: string): Promise<void> {
  const dir = dirname(path);
  // The delta beside a snapshot is written the same way: its temporary files go in the same look at the directory.
  const names = [basename(path), basename(deltaPathOf(path))];
  const old = new Set(['snapshot.json', 'snapshot.jsonl']);
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return;
  }
  for (const entry of entries) {
    const leftTmp = entry.endsWith('.tmp') && names.some((name) => entry.startsWith(`${name}.`));
    if (leftTmp || old.has(entry)) await rm(join(dir, entry), { force: true });
  }
}

/** The header line of a snapshot file, without reading the rest; undefined when there is none to read. */
export async function readSnapshotHeader(path: string): Promise<SnapshotHeader | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return parseHeader(buffer.subarray(0, bytesRead)).header;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/**
 * A snapshot read: its state (the image's with its delta's changes set on it, if a delta fits it), or why it cannot be
 * used (`missing`: none was written). `image` is the state the image alone held, `imageId` its id; `delta` says what
 * became of a delta beside it (undefined: there was none).
 */
export type SnapshotRead =
  | { state: BuildState; why?: undefined; image: BuildState; imageId: string; delta?: DeltaRead; otherVersion?: undefined }
  | { state: BuildState; why?: undefined; image?: undefined; imageId?: undefined; delta?: undefined; otherVersion: true }
  | { state?: undefined; why: string; image?: undefined; imageId?: undefined; delta?: undefined; otherVersion?: undefined };

/** What a start made of the delta beside the image: the event it holds the state at, or why it was not used. */
export type DeltaRead = { at_event: number; unused?: undefined } | { at_event?: undefined; unused: string };

/**
 * How far a read of a snapshot's file got (a large image takes a while): its bytes read from the disk so far, then
 * decoded so far, of its size; after an upgrade (an image of another version) or from a compaction base, its records
 * made so far of how many, then the slices of the state's indexes built so far of how many (snapshot.ts
 * `fromSnapshot`): seconds each at a million events.
 */
export type SnapshotReadProgress = (done: number, total: number, phase: SnapshotReadPhase) => void;
export type SnapshotReadPhase = 'read' | 'decode' | 'records' | 'indexes';

/** A read of the file a piece at a time, so that a slow disk or machine is seen to go on. */
const READ_PIECE_BYTES = 4 * 1024 * 1024;

async function readWhole(path: string, onRead?: SnapshotReadProgress): Promise<Buffer> {
  if (!onRead) return readFile(path);
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const data = Buffer.allocUnsafe(size);
    let at = 0;
    while (at < size) {
      const { bytesRead } = await fh.read(data, at, Math.min(READ_PIECE_BYTES, size - at), at);
      if (bytesRead === 0) break;
      at += bytesRead;
      onRead(at, size, 'read');
    }
    return at === size ? data : data.subarray(0, at);
  } finally {
    await fh.close().catch(() => {});
  }
}

/**
 * The state in the snapshot at `path`, if one written by this state code fits the log; otherwise why not. A `carry`
 * takes on the image it was read from (image-carry.ts `takeLoaded`), so the next image copies what did not change
 * since.
 */
export async function readSnapshotOrWhy(path: string, version: string, log: LogProbe, carry?: ImageCarry, onRead?: SnapshotReadProgress): Promise<SnapshotRead> {
  if (version === '') return { why: 'run from sources, nothing vouches for a snapshot' };
  // The header alone first: after an upgrade the image is read once, for its records (it was read whole twice).
  const header = await readSnapshotHeader(path);
  if (header !== undefined && header.version !== version) {
    // After an upgrade: the image's records, its indexes built again by this code; a delta of that version is not read.
    const records = await readImageRecords(path, log, onRead);
    if (!records.snapshot) return { why: `${OTHER_VERSION}${records.why ? ` (${records.why})` : ''}` };
    return { state: fromSnapshot(records.snapshot, onRead && ((done, total) => onRead(done, total, 'indexes'))), otherVersion: true };
  }
  const read = await readImageFile(path, version, log, carry, onRead);
  if (!read.state) return { why: read.why };
  const image = read.state;
  const imageId = read.header.image_id ?? '';
  const delta = await readDeltaFile(deltaPathOf(path), version, log, image, imageId, onRead);
  if (delta.why === 'missing') return { state: image, image, imageId };
  if (!delta.state) return { state: image, image, imageId, delta: { unused: delta.why } };
  return { state: delta.state, image, imageId, delta: { at_event: delta.state.last_event_id } };
}

/** The image with the delta at `path` set on it, if the delta was written against that very image; else why not. */
async function readDeltaFile(path: string, version: string, log: LogProbe, image: BuildState, imageId: string, onRead?: SnapshotReadProgress): Promise<{ state?: BuildState; why: string }> {
  const ofThisImage = (header: SnapshotHeader): string =>
    imageId === '' || header.base_image_id !== imageId ? 'of another snapshot' : headerMisfit(header, log, [DELTA_FORMAT]);
  return readStateFile(path, version, log, ofThisImage, (pieces) => applyDelta(image, pieces), onRead);
}

/**
 * The state a file of this program version at `path` holds, made by `make` of its checked lines, if `misfit` finds
 * nothing wrong with its header ('') and the state ends at the header's event, of this log; else why not.
 */
async function readStateFile(
  path: string,
  version: string,
  log: LogProbe,
  misfit: (header: SnapshotHeader) => string,
  make: (pieces: unknown[]) => BuildState,
  onRead?: SnapshotReadProgress,
): Promise<{ state: BuildState; header: SnapshotHeader; why: string } | { state?: undefined; header?: undefined; why: string }> {
  let state: BuildState;
  let header: SnapshotHeader;
  try {
    const data = await readWhole(path, onRead);
    header = parseHeader(data).header;
    if (header.version !== version) return { why: OTHER_VERSION };
    const why = misfit(header);
    if (why) return { why };
    const read = checkedPieces(data, onRead);
    if (!read.pieces) return { why: read.why };
    state = make(read.pieces);
  } catch (err) {
    // A stop of the start, said by the read's progress: not the file's fault.
    if (err instanceof StartStopped) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { why: 'missing' };
    // A file that ends inside a frame, or before its header's end (a disk that filled, a copy cut off): cut short.
    if (err instanceof CutShortError) return { why: 'cut short' };
    return { why: `unreadable: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (state.last_event_id !== header.last_event_id) return { why: 'damaged' };
  const id = header.last_event_id;
  if (id > 0 && (await log.timestampOf(id).catch(() => undefined)) !== header.last_event_timestamp) return { why: `not of this log (its event ${id} differs)` };
  return { state, header, why: '' };
}

/**
 * The header and lines of an image or a delta file, each frame checked against the end line's count and CRC-32; or
 * why they cannot be trusted. Throws CutShortError on a file that ends inside a frame.
 */
function checkedPieces(data: Buffer, onRead?: SnapshotReadProgress): { header: SnapshotHeader; pieces: unknown[]; why: string } | { header?: undefined; pieces?: undefined; why: string } {
  const parsed = parseHeader(data);
  const frames = framesOf(data, parsed.eol + 1);
  const last = frames.pop();
  const p = framePacker(parsed.header.format);
  const end = last ? (p.unpack(last.bytes) as unknown) : undefined;
  const endLine = Array.isArray(end) ? (end[0] as unknown) : undefined;
  const start = parsed.eol + 1;
  const body = data.subarray(start, last ? last.at : start);
  if (!Array.isArray(endLine) || endLine[0] !== 'end') return { why: 'cut short' };
  const pieces: unknown[] = [];
  for (const f of frames) {
    onRead?.(f.at, data.length, 'decode');
    const lines = p.unpack(f.bytes) as unknown;
    if (!Array.isArray(lines)) return { why: 'damaged' };
    for (const line of lines) pieces.push(line);
  }
  // The count and the checksum: a file cut short, padded or changed in place is not this snapshot.
  if (endLine[1] !== pieces.length || endLine[2] !== crc32(body)) return { why: 'damaged' };
  return { header: parsed.header, pieces, why: '' };
}

const OTHER_VERSION = 'written by another version of platform';

/**
 * The records of the image at `path` as a snapshot of the records format, whatever version of platform wrote it, if it
 * says which records format its records are in and this code reads that format; else why not ('' for an image written
 * before images said it: the plain reason stands).
 */
async function readImageRecords(path: string, log: LogProbe, onRead?: SnapshotReadProgress): Promise<{ snapshot?: Snapshot; why: string }> {
  let header: SnapshotHeader;
  let snapshot: Snapshot;
  try {
    const data = await readWhole(path, onRead);
    header = parseHeader(data).header;
    if (header.records_format === undefined) return { why: '' };
    if (!SNAPSHOT_FORMATS_READ.includes(header.records_format)) return { why: `its records of format ${header.records_format}, this platform reads ${SNAPSHOT_FORMATS_READ.join(' or ')}` };
    const misfit = headerMisfit(header, log, [IMAGE_FORMAT]);
    if (misfit) return { why: misfit };
    const read = checkedPieces(data, onRead);
    if (!read.pieces) return { why: read.why };
    snapshot = snapshotFromLines(header.last_event_id, recordLinesOfImage(read.pieces, onRead && ((done, total) => onRead(done, total, 'records'))));
  } catch (err) {
    if (err instanceof StartStopped) throw err;
    if (err instanceof CutShortError) return { why: 'cut short' };
    return { why: `its records unreadable: ${err instanceof Error ? err.message : String(err)}` };
  }
  const id = header.last_event_id;
  if (id > 0 && (await log.timestampOf(id).catch(() => undefined)) !== header.last_event_timestamp) return { why: `not of this log (its event ${id} differs)` };
  return { snapshot, why: '' };
}

/** The state in the snapshot at `path`, or undefined (`readSnapshotOrWhy` says why). */
export async function readSnapshot(path: string, version: string, log: LogProbe, carry?: ImageCarry): Promise<BuildState | undefined> {
  return (await readSnapshotOrWhy(path, version, log, carry)).state;
}

async function readImageFile(
  path: string,
  version: string,
  log: LogProbe,
  carry?: ImageCarry,
  onRead?: SnapshotReadProgress,
): Promise<{ state: BuildState; header: SnapshotHeader; why: string } | { state?: undefined; header?: undefined; why: string }> {
  const loaded: { image?: LoadedImage } = {};
  const read = await readStateFile(path, version, log, (header) => headerMisfit(header, log, [IMAGE_FORMAT]), (pieces) => stateFromImage(pieces, carry ? loaded : undefined), onRead);
  if (read.state && carry && loaded.image) carry.takeLoaded(loaded.image);
  return read;
}

/** The frames after the header: where each starts and its MessagePack bytes; throws when one is cut short. */
function framesOf(data: Buffer, from: number): Array<{ at: number; bytes: Buffer }> {
  const frames: Array<{ at: number; bytes: Buffer }> = [];
  let at = from;
  while (at < data.length) {
    if (at + 4 > data.length) throw new CutShortError('a truncated frame length');
    const end = at + 4 + data.readUInt32LE(at);
    if (end > data.length) throw new CutShortError('a truncated frame');
    frames.push({ at, bytes: data.subarray(at + 4, end) });
    at = end;
  }
  return frames;
}

/**
 * The base a compacted log starts from (`.platform/compacted.bin`): written like a snapshot, but the events it
 * replaced are gone, so it is the truth, not a shortcut. It is read whatever program version wrote it, as long as
 * the record format is this one (a format change must come with a migration). Says why when it cannot be used.
 */
export async function readCompactionBase(path: string, log: LogProbe, onRead?: SnapshotReadProgress): Promise<{ snapshot?: Snapshot; why: string }> {
  return readSnapshotFile(path, () => true, log, onRead);
}

async function readSnapshotFile(
  path: string,
  accept: (header: SnapshotHeader) => boolean,
  log: LogProbe,
  onRead?: SnapshotReadProgress,
): Promise<{ snapshot?: Snapshot; why: string }> {
  let snap: Snapshot;
  let header: SnapshotHeader;
  try {
    const parts = decodeSnapshotFile(await readWhole(path, onRead));
    header = parts.header;
    if (!accept(header)) return { why: 'written by another version of platform' };
    const misfit = headerMisfit(header, log, SNAPSHOT_FORMATS_READ);
    if (misfit) return { why: misfit };
    const last = parts.lines[parts.lines.length - 1];
    // The end line counts the records: a file cut short or padded is not this snapshot.
    if (!last || last[0] !== 'end' || last[1] !== parts.lines.length - 1) return { why: 'cut short' };
    snap = snapshotFromLines(header.last_event_id, []);
    const records = parts.lines.length - 1;
    for (let i = 0; i < records; i++) {
      if (onRead && i % 256 === 0) onRead(i, records, 'records');
      const line = parts.lines[i]!;
      if (!Array.isArray(line) || line[0] === 'end') return { why: 'damaged' };
      // A line of an unknown kind (an image's, too) throws in addLine.
      addLine(snap, line as SnapshotLine);
    }
  } catch (err) {
    if (err instanceof StartStopped) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { why: 'missing' };
    // A file that ends inside a frame, or before its header's end (a disk that filled, a copy cut off): cut short.
    if (err instanceof CutShortError) return { why: 'cut short' };
    return { why: `unreadable: ${err instanceof Error ? err.message : String(err)}` };
  }
  const id = header.last_event_id;
  if (id > 0 && (await log.timestampOf(id).catch(() => undefined)) !== header.last_event_timestamp) return { why: `not of this log (its event ${id} differs)` };
  return { snapshot: snap, why: '' };
}

/**
 * Why a snapshot with this header cannot start this log, from the header alone ('' when it can): its format, and
 * where it stands against the log. Its own last event must still be in the log to vouch for it, so a state older
 * than a compacted log's first event (which lacks what the removed events did) does not fit.
 */
export function headerMisfit(header: SnapshotHeader, log: Pick<LogProbe, 'firstId' | 'latestId'>, formats: readonly number[]): string {
  if (!formats.includes(header.format)) return `of format ${String(header.format)}, this platform reads ${formats.join(' or ')} there`;
  const id = header.last_event_id;
  if (!Number.isSafeInteger(id) || id < 0 || id > log.latestId()) return `ahead of the log (event ${id}, the log ends at ${log.latestId()})`;
  if (log.firstId() > 1 && id < log.firstId()) return `older than the log, which starts at event ${log.firstId()} since a compaction`;
  return '';
}

/** Writes `state` as the snapshot (its image), a frame at a time; the state is immutable, so steps go on meanwhile. */
export async function writeSnapshot(
  path: string,
  version: string,
  state: BuildState,
  lastEventTimestamp: number,
  carry?: ImageCarry,
  budget: FrameBudget = FIVE_MS,
  rest: FrameRest = NO_REST,
): Promise<string> {
  if (version === '') return '';
  const image_id = randomBytes(8).toString('hex');
  const header: SnapshotHeader = { version, format: IMAGE_FORMAT, last_event_id: state.last_event_id, last_event_timestamp: lastEventTimestamp, image_id, records_format: SNAPSHOT_FORMAT };
  await writeFramed(path, header, imagePieces(state, carry), true, budget, rest);
  return image_id;
}

/**
 * Writes what changed in `state` since the image `base` was made of, as the delta beside that image (`deltaPathOf`),
 * a frame at a time: its cost is the changes, not the state (state-delta.ts).
 */
export async function writeDelta(
  snapshotPath: string,
  version: string,
  state: BuildState,
  lastEventTimestamp: number,
  base: DeltaBase,
  budget: FrameBudget = FIVE_MS,
  rest: FrameRest = NO_REST,
): Promise<void> {
  if (version === '') return;
  const header: SnapshotHeader = {
    version,
    format: DELTA_FORMAT,
    last_event_id: state.last_event_id,
    last_event_timestamp: lastEventTimestamp,
    base_image_id: base.image_id,
  };
  await writeFramed(deltaPathOf(snapshotPath), header, deltaPieces(state, base), true, budget, rest);
}

/** Writes `state` as records (snapshot.ts), the format a compaction base keeps for later versions to read. */
export async function writeRecords(
  path: string,
  version: string,
  state: BuildState,
  lastEventTimestamp: number,
  budget: FrameBudget = FIVE_MS,
  rest: FrameRest = NO_REST,
): Promise<void> {
  const header: SnapshotHeader = { version, format: SNAPSHOT_FORMAT, last_event_id: state.last_event_id, last_event_timestamp: lastEventTimestamp };
  await writeFramed(path, header, snapshotLines(state), false, budget, rest);
}

/**
 * Writes a header and lines in frames, each sized to the budget asked before it (the lines are made as they are
 * written, so their making counts too), then the end line: the count, and with `checksum` the CRC-32 of the frames.
 */
async function writeFramed(path: string, header: SnapshotHeader, source: Iterable<unknown>, checksum: boolean, budget: FrameBudget, rest: FrameRest = NO_REST): Promise<void> {
  // Its own temporary file, so that a failed or abandoned write never shares one with the next.
  const tmp = `${path}.${process.pid}.${++writes}.tmp`;
  const file = await open(tmp, 'w');
  try {
    const p = framePacker(header.format);
    await file.write(`${JSON.stringify(header)}\n`);
    let lines: unknown[] = [];
    let count = 0;
    let crc = 0;
    let started = performance.now();
    let frameMs = budget();
    // A frame's write goes on while the next frame is made (one at a time, in order): awaited at once, each frame
    // waited a turn of the loop for its write, and on a loop full of requests a turn is long.
    let writing: Promise<unknown> = Promise.resolve();
    const write = async (bytes: Buffer): Promise<void> => {
      await writing;
      const next = file.write(bytes);
      // Its failure is thrown where the next write (or the end) waits for it, never left unhandled meanwhile.
      next.catch(() => undefined);
      writing = next;
    };
    for (const line of source) {
      if (line !== PAUSE_POINT) {
        lines.push(line);
        count++;
      }
      if (lines.length >= LINES_PER_FRAME || performance.now() - started >= frameMs / 2) {
        if (lines.length > 0) {
          const bytes = frame(p, lines);
          if (checksum) crc = crc32(bytes, crc);
          // What the frame held the loop for: its lines and their packing, not the write, which the loop is free during.
          const restMs = rest(performance.now() - started);
          await write(bytes);
          lines = [];
          await new Promise((resolve) => (restMs > 0 ? setTimeout(resolve, restMs) : setImmediate(resolve)));
        } else {
          // In the middle of a line that takes longer than a frame: the loop goes, nothing is written.
          await new Promise((resolve) => setImmediate(resolve));
        }
        started = performance.now();
        frameMs = budget();
      }
    }
    if (lines.length > 0) {
      const bytes = frame(p, lines);
      if (checksum) crc = crc32(bytes, crc);
      await write(bytes);
    }
    await writing;
    await file.write(frame(p, [checksum ? ['end', count, crc] : ['end', count]]));
    await file.sync();
  } catch (err) {
    await file.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
  await file.close();
  await rename(tmp, path);
  // The rename is durable only once the directory is: a compaction removes events right after its base is written.
  await syncDirectory(dirname(path));
}

/** fsyncs a directory, making the renames and removals in it durable (a no-op where the platform refuses it). */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync().catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EINVAL' && err.code !== 'EISDIR' && err.code !== 'EPERM') throw err;
    });
  } finally {
    await handle.close();
  }
}
