/**
 * A config program's stdout read as its JobConfigResponse: `JSON.parse`, then `parseJobConfigResponse` (the schema
 * and its checks), or the reason it is not one, worded for the config_failed error (config-program.ts).
 *
 * Both steps are synchronous and cost ~30 ms a MB on this machine (JSON.parse a fifth, the schema the rest): a
 * 60 MB answer held the daemon's event loop ~2 s, every HTTP read and every step of the orchestrator behind it.
 * So an output of OFF_THREAD_BYTES or more is read on a worker thread of its own (config-output-worker.ts), started
 * for it and gone after: a worker costs ~30-50 ms of its own thread to start, which a small output (the common
 * case) would not repay, and a long-lived one would keep a heap grown to the largest answer for the daemon's life.
 * - The output's chunks, as the pipe gave them, are handed over (transferred, not copied: joining 60 MB into one
 *   buffer alone held the loop 55-100 ms), once the worker says it is ready: a worker that cannot start leaves them
 *   here, and they are read on the event loop as before there was a worker (slower, never wrong).
 * - The configs, read and checked, come back as JSON again in slices of about 1 MB, each parsed in a turn of the
 *   loop of its own, so the longest hold is a slice: the 10,000 configs of a 60 MB answer took 0.3-0.6 s to make
 *   in one piece, by JSON.parse or by v8.deserialize (JSON the faster of the two, on both threads). A JobConfig is
 *   plain JSON data (strings, arrays, a string map), so it comes back as it was.
 * - The reason of a bad output is worded by the same function on either side, so the error is the same wherever
 *   it was read.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import type { JobConfig } from '../events/build-event.js';
import { errorMessage } from '../errors.js';
import { JobConfigResponseError, parseJobConfigResponse } from './job-config-response.js';

/** Outputs of this many bytes or more are read off the event loop. */
export const OFF_THREAD_BYTES = 1024 * 1024;
/** About this many bytes of configs a slice, decoded in one turn of the loop. */
const SLICE_BYTES = 1024 * 1024;

/** The configs, or why the output is not a JobConfigResponse: the words of the error, and what stdout began with. */
export type ConfigOutput = { ok: true; configs: JobConfig[] } | { ok: false; reason: string; extra: string };

/** Reads a config program's stdout, on the thread that calls it. */
export function readConfigOutput(stdout: string): ConfigOutput {
  try {
    return { ok: true, configs: parseJobConfigResponse(JSON.parse(stdout)) };
  } catch (err) {
    const snippet = stdout.trim().slice(0, 300);
    const reason =
      err instanceof JobConfigResponseError
        ? `printed a JobConfigResponse that is not valid: ${err.message}`
        : `did not print a JobConfigResponse as JSON on stdout (${errorMessage(err)})`;
    return { ok: false, reason, extra: `  stdout began with: ${snippet ? JSON.stringify(snippet) : '(nothing)'}\n` };
  }
}

export interface ReadOptions {
  /** Outputs of this many bytes or more are read on a worker thread. Default OFF_THREAD_BYTES. */
  offThreadBytes?: number;
  /** The worker's module (tests start the bundled one, or none). Default: config-output-worker.js beside this module. */
  workerUrl?: URL;
}

/** Where an output was read: tests and benchmarks ask, to know the worker did it. */
export const configOutputReads = { onLoop: 0, onWorker: 0, workerFailures: 0 };

/**
 * Reads a config program's stdout (its chunks, UTF-8, `bytes` in all): on the event loop when small, else on a
 * worker thread. Large chunks are handed to the worker: the caller must not use them after.
 */
export async function parseConfigOutput(chunks: Buffer[], bytes: number, options: ReadOptions = {}): Promise<ConfigOutput> {
  if (bytes < (options.offThreadBytes ?? OFF_THREAD_BYTES)) return readHere(chunks);
  const answer = await readOnWorker(chunks, options.workerUrl ?? WORKER_URL);
  if (answer === undefined) {
    // The worker did not start: the chunks are still here.
    configOutputReads.workerFailures++;
    return readHere(chunks);
  }
  configOutputReads.onWorker++;
  if (!answer.ok) return answer;
  const configs: JobConfig[] = [];
  for (const slice of answer.slices) {
    await nextTurn();
    for (const c of JSON.parse(Buffer.from(slice).toString('utf8')) as JobConfig[]) configs.push(c);
  }
  return { ok: true, configs };
}

function readHere(chunks: Buffer[]): ConfigOutput {
  configOutputReads.onLoop++;
  return readConfigOutput(Buffer.concat(chunks).toString('utf8'));
}

/** What the worker posts: that it is ready for the chunks, then the configs as slices of JSON (UTF-8), or the reason. */
export type WorkerMessage = { ready: true } | WorkerAnswer;
export type WorkerAnswer = { ok: true; slices: ArrayBuffer[] } | { ok: false; reason: string; extra: string };

/** The worker's side: the chunks in, the answer out, with the slices to transfer rather than copy. */
export function answerFor(chunks: ArrayBuffer[]): { answer: WorkerAnswer; transfer: ArrayBuffer[] } {
  const text = Buffer.concat(chunks.map((c) => new Uint8Array(c))).toString('utf8');
  const read = readConfigOutput(text);
  if (!read.ok) return { answer: read, transfer: [] };
  const { configs } = read;
  // Configs take about their share of the text, which their serialized form is close to.
  const perSlice = Math.max(1, Math.floor((SLICE_BYTES * configs.length) / Math.max(1, text.length)));
  const slices: ArrayBuffer[] = [];
  for (let i = 0; i < configs.length; i += perSlice) slices.push(ownArrayBuffer(Buffer.from(JSON.stringify(configs.slice(i, i + perSlice)))));
  return { answer: { ok: true, slices }, transfer: slices };
}

/** The worker's module: beside this one (dist/lib/graph/), or beside the bundle's chunks (dist/lib/bundle/). */
const WORKER_URL = new URL('./config-output-worker.js', import.meta.url);

/**
 * The answer of a worker given the chunks, or undefined when no worker could start (the chunks are untouched then).
 * A worker that fails once it has them (out of memory) is an error: they went with it.
 */
function readOnWorker(chunks: Buffer[], url: URL): Promise<WorkerAnswer | undefined> {
  return new Promise((resolve, reject) => {
    let worker: Worker;
    try {
      worker = new Worker(url);
    } catch {
      resolve(undefined);
      return;
    }
    let handedOver = false;
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      fn();
      void worker.terminate();
    };
    const failed = (err: Error): void =>
      settle(() => (handedOver ? reject(new Error(`the worker reading the config program's output failed: ${err.message}`, { cause: err })) : resolve(undefined)));
    worker.on('message', (message: WorkerMessage) => {
      if ('ready' in message) {
        const buffers = chunks.map(ownArrayBuffer);
        try {
          worker.postMessage(buffers, buffers);
        } catch (err) {
          // Not sent (a buffer that cannot be transferred), so nothing was: the chunks are still here.
          failed(err as Error);
          return;
        }
        handedOver = true;
        return;
      }
      settle(() => resolve(message));
    });
    worker.once('error', failed);
    worker.once('exit', (code) => failed(new Error(`it exited with code ${code} before it answered`)));
  });
}

/** The bytes as an ArrayBuffer of their own, to transfer: the buffer's own when it is exactly that, else a copy. */
function ownArrayBuffer(b: Uint8Array): ArrayBuffer {
  if (b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer) return b.buffer;
  const copy = new ArrayBuffer(b.byteLength);
  new Uint8Array(copy).set(b);
  return copy;
}
