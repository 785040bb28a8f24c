/**
 * A write waits for the look at platform.json its turn of the event loop shares: an edit made just before it counts,
 * and a broken file refuses it (the daemon goes on with the last valid graph, which the writer did not mean).
 */
import type { Platform } from '../platform.js';
import { HttpError } from './http-error.js';

export async function checkGraph(platform: Platform): Promise<void> {
  const problem = await platform.refreshGraphAfterTurn();
  if (problem) throw new HttpError(400, `${problem.message} (the server goes on with the last valid graph; fix the file and retry)`);
}
