/**
 * The worker thread that reads a large config program output (config-output.ts): it says it is ready once loaded,
 * takes the output's chunks, and answers with the configs in serialized slices, or the reason the output is not a
 * JobConfigResponse. One output a worker; it ends once it has answered.
 *
 * `npm run build` makes it twice, as the code that starts it is: compiled beside config-output.js (dist/lib/graph/,
 * for the embedding API and the tests) and bundled beside the CLI's and the daemon's chunks (dist/lib/bundle/,
 * lib/cli/build-bundle.mjs); each finds it beside itself.
 */
import { parentPort } from 'node:worker_threads';
import { answerFor } from './config-output.js';

const port = parentPort;
if (port === null) throw new Error('config-output-worker.js runs as a worker thread (config-output.ts starts it)');
port.once('message', (chunks: ArrayBuffer[]) => {
  const { answer, transfer } = answerFor(chunks);
  port.postMessage(answer, transfer);
});
port.postMessage({ ready: true });
